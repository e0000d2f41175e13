"""cleanup.held_stop (issue 55): a stop signal that lands while a child is being started and recorded is raised
where that step ends, not inside it (inside Popen it left a started ssh client known to nobody)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from sshbench.host import cleanup


@pytest.fixture
def fresh_stop_state(monkeypatch: pytest.MonkeyPatch):
    """signals_raise() keeps its handler after a stop (for the rest of a real process): put everything back."""
    monkeypatch.setattr(cleanup._Stopping, "signum", None)
    monkeypatch.setattr(cleanup._Stopping, "told", False)
    monkeypatch.setattr(cleanup._Stopping, "holding", 0)
    monkeypatch.setattr(cleanup._Stopping, "held", None)
    monkeypatch.setattr(cleanup._Stopping, "resent", None)
    monkeypatch.setattr(cleanup.atexit, "register", lambda *_: None)  # not this test process's exit
    saved = {s: signal.getsignal(s) for s in cleanup.STOP_SIGNALS}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


def test_a_signal_inside_the_step_is_raised_where_it_ends(fresh_stop_state) -> None:
    steps = []
    with pytest.raises(cleanup.Interrupted), cleanup.signals_raise():
        with cleanup.held_stop():
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next bytecode, in this thread
            steps.append("started")
            steps.append("recorded")
        steps.append("after the step")
    assert steps == ["started", "recorded"]
    assert cleanup.stopping() == signal.SIGTERM


def test_nested_steps_raise_once_at_the_outermost_end(fresh_stop_state) -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt), cleanup.signals_raise():
        with cleanup.held_stop():
            with cleanup.held_stop():
                os.kill(os.getpid(), signal.SIGINT)
                steps.append("inner")
            steps.append("outer")
        steps.append("after")
    assert steps == ["inner", "outer"]


def test_without_a_signal_the_step_changes_nothing(fresh_stop_state) -> None:
    with cleanup.signals_raise(), cleanup.held_stop():
        pass
    assert cleanup.stopping() is None and cleanup._Stopping.holding == 0


def test_a_ctrl_c_while_the_program_loads_is_one_line_and_130(monkeypatch, capsys) -> None:
    """The console script imports the program inside a try: interrupted there it says so, no traceback."""
    from sshbench.cli import entry

    class Loading:
        def __getattr__(self, name: str):
            raise KeyboardInterrupt  # as a Ctrl-C landing while sshbench.cli.main's imports run

    monkeypatch.setitem(sys.modules, "sshbench.cli.main", Loading())
    assert entry.main() == 130
    assert capsys.readouterr().err == "sshbench: interrupted\n"


def test_a_signal_held_by_a_worker_threads_step_stops_the_main_thread(fresh_stop_state) -> None:
    """A -P N stream starts its ssh in a thread of its own: the signal it held must stop the run, not that thread
    (raised there, it ended the stream and the run went on to exit 0: 1 of 3 Ctrl-Cs during a -P 4 trial)."""
    import threading

    inside, release = threading.Event(), threading.Event()
    thread_saw: list[str] = []

    def stream() -> None:
        try:
            with cleanup.held_stop():
                inside.set()
                release.wait(10)
            thread_saw.append("ended normally")
        except BaseException as err:  # what the thread would have died of
            thread_saw.append(type(err).__name__)

    worker = threading.Thread(target=stream, daemon=True)
    with pytest.raises(cleanup.Interrupted), cleanup.signals_raise():
        worker.start()
        assert inside.wait(10)
        os.kill(os.getpid(), signal.SIGTERM)  # held: the worker is inside its step
        release.set()
        worker.join(10)  # the signal again, to this thread, once the worker's step ends
        for _ in range(1000):  # the handler runs at a bytecode boundary after the join returns
            pass
    assert thread_saw == ["ended normally"]
    assert cleanup.stopping() == signal.SIGTERM


def test_a_second_signal_before_the_resent_first_still_raises_the_first(fresh_stop_state, monkeypatch) -> None:
    """SIGTERM held by a worker's step, then Ctrl-C before the main thread took the SIGTERM sent again to it: the run
    stops for the first, SIGTERM (143), not the Ctrl-C (130: tests/cli/test_signals.py [term-int-term], once)."""
    import threading

    inside, release = threading.Event(), threading.Event()
    resent: list[int] = []
    monkeypatch.setattr(cleanup.signal, "pthread_kill", lambda _thread, signum: resent.append(signum))  # not yet

    def stream() -> None:
        with cleanup.held_stop():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=stream, daemon=True)
    with pytest.raises(cleanup.Interrupted) as raised, cleanup.signals_raise():
        worker.start()
        assert inside.wait(10)
        os.kill(os.getpid(), signal.SIGTERM)  # held by the worker's step
        release.set()
        worker.join(10)  # its step ended: the SIGTERM is on its way to this thread again ...
        assert resent == [signal.SIGTERM]
        os.kill(os.getpid(), signal.SIGINT)  # ... and a Ctrl-C lands first
        for _ in range(1000):
            pass
    assert raised.value.signum == signal.SIGTERM

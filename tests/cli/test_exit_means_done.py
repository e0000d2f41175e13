"""Exit means done (issue 55): after a double Ctrl-C to its process group (as a terminal sends it: every process
of the foreground group gets it, a key held down repeats every ~20 ms), at several points of a run, nothing
sshbench started is still running at the moment it returns: not the private sshd, not a session it forked, not
a client, a reader or a shell, and no temp dir or run record is left.

Every descendant of the sshbench process is recorded while it runs (by pid and start time, so that a reused pid
is not taken for it); the check looks at them, and at every process naming this test's temp spaces, at once
after the return, with no grace period. SSHBENCH_EXIT_REPEAT=N runs each point N times (issue 55 asked for 20
tries: 5 x 4 points)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import (
    communicate_or_dump,
    pids_whose_cmdline_has,
    sshbench_argv,
    sshbench_temp_dirs,
    wait_for_line,
    wait_until,
)
from sshbench.links import namespaces
from sshbench.links.profiles import LINKS

REPEAT = int(os.environ.get("SSHBENCH_EXIT_REPEAT", "1"))

# Where the stop signals land: after the Nth `-v` line (0: as soon as the private sshd is up and recorded).
# Right after a line the next trial's ssh is starting and connecting, the moment at which sshd's listener can
# fork a session for a connection whose client the same Ctrl-C has just killed.
POINTS = {
    "sshd-up": 0,
    "first-handshake": 1,
    "first-transfer": 3,
    "first-round": 9,
}


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of a process, None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19]), fields[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "?"


class TreeWatch:
    """Every process that was ever a descendant of `root` while it ran: {(pid, start time): command line}."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[tuple[int, int], str] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> TreeWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _scan(self) -> None:
        children: dict[int, list[tuple[int, int]]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (stat := _stat(int(entry))) is not None:
                children.setdefault(stat[0], []).append((int(entry), stat[1]))
        stack = [self.root]
        while stack:
            for pid, start in children.get(stack.pop(), []):
                if (pid, start) not in self.seen:
                    self.seen[(pid, start)] = _cmdline(pid)
                stack.append(pid)

    def _watch(self) -> None:
        # a sampling interval while the run goes on (bounded by its end), not a wait for something to happen
        while not self._done.wait(0.003):
            self._scan()

    def still_running(self) -> list[str]:
        left = []
        for (pid, start), cmdline in self.seen.items():
            stat = _stat(pid)
            if stat is not None and stat[1] == start and stat[2] not in ("Z", "X"):
                left.append(f"{pid} {cmdline}")
        return left


def _records() -> list[Path]:
    return list(Path(os.environ["SSHBENCH_RUNTIME_DIR"]).glob("run-*.json"))


def _recorded_process() -> bool:
    try:
        return any(json.loads(path.read_text())["processes"] for path in _records())
    except (OSError, ValueError, KeyError):
        return False  # being written


RUN = ("run", "--runs", "3", "--size", "64M", "--no-baselines", "--no-why", "-v")


def _run_and_stop(argv: tuple[str, ...], after_lines: int, signals: tuple[signal.Signals, ...]):
    """Start sshbench in a process group of its own (a shell's foreground job), send `signals` to the group 20 ms
    apart once it printed `after_lines` trial lines (0: once its sshd is recorded), and look at once, as it returns,
    for anything it started that still runs: (exit status, stderr, what was seen, what still runs, its pid)."""
    proc = subprocess.Popen(
        sshbench_argv(*argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        with TreeWatch(proc.pid) as watch:
            if signals:
                if after_lines == 0:  # the run record names the sshd once it has been started
                    wait_until(_recorded_process, what="the run record to name the sshd")
                    # and is watched from the record too: stopped at once, it can live less than a scan of /proc
                    for record in _records():
                        for pid, start in json.loads(record.read_text())["processes"]:
                            watch.seen.setdefault((pid, start), f"{_cmdline(pid)} (the run record's sshd)")
                else:
                    wait_for_line(proc.stderr, f"trial {after_lines}/")
                for i, signum in enumerate(signals):
                    if i:
                        time.sleep(0.02)  # the input: the next key 20 ms after the last, as a key held down repeats
                    os.killpg(proc.pid, signum)
            _, stderr = communicate_or_dump(proc, timeout=180)
            # at once: no grace period, the command has returned
            left = watch.still_running()
            left += [f"{pid} {_cmdline(pid)}" for pid in pids_whose_cmdline_has(os.environ["TMPDIR"])]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert any("sshd" in cmd for cmd in watch.seen.values()), "the run never started its sshd"
    assert not left, f"still running when sshbench returned: {left}"
    assert not sshbench_temp_dirs()
    assert not _records()
    return proc.returncode, stderr, proc.pid


@pytest.mark.parametrize("attempt", range(REPEAT))
@pytest.mark.parametrize("point", POINTS)
def test_a_double_ctrl_c_leaves_nothing_running_when_sshbench_returns(point, attempt):
    code, stderr, _ = _run_and_stop(RUN, POINTS[point], (signal.SIGINT, signal.SIGINT))
    assert code == 130, stderr


@pytest.mark.parametrize(
    "signals,code",
    [((signal.SIGINT,), 130), ((signal.SIGTERM,), 143), ((signal.SIGTERM, signal.SIGTERM), 143), ((), 0)],
    ids=["ctrl-c", "sigterm", "sigterm-twice", "normal-end"],
)
def test_one_stop_signal_or_a_normal_end_leaves_nothing_running(signals, code):
    run = RUN if signals else ("run", "--ciphers", "aes128-ctr", "--runs", "1", "--warmup", "0", "--size", "4M",
                               "--no-baselines", "--no-why")  # fmt: skip
    got, stderr, _ = _run_and_stop(run, POINTS["first-transfer"], signals)
    assert got == code, stderr


@pytest.mark.skipif(
    namespaces.missing_requirement([LINKS["lan1g"]]) is not None,
    reason=f"emulated links unavailable here: {namespaces.missing_requirement([LINKS['lan1g']])}",
)
def test_a_double_ctrl_c_behind_an_emulated_link_leaves_no_relay_namespace_or_qdisc():
    """The link's namespaces (and with them their veth ends and qdiscs) and its relay are gone too."""
    run = ("run", "--link", "wan100m", "--ciphers", "aes128-gcm@openssh.com", "--runs", "3", "--size", "16M",
           "--no-baselines", "--no-why", "--remedies", "off", "-v")  # fmt: skip
    code, stderr, pid = _run_and_stop(run, 2, (signal.SIGINT, signal.SIGINT))
    assert code == 130, stderr
    assert not [n for n in namespaces.own_namespaces() if n.startswith(f"{namespaces.PREFIX}{pid}-")]

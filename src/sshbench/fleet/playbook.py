"""Running the fleet's playbook (ansible/, also at contrib/ansible/) with the real `ansible-playbook`, and
reading its progress: the role's `sshbench_progress` stdout callback prints one JSON line per task and
host result, which becomes a HostEvent here.

Ansible is configured through its environment only (the user's ansible.cfg and inventory plugins still
apply): our callback, pipelining (fewer remote temp files), and no SSH ControlPersist master (it would
outlive the run on this machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sshbench.errors import UsageError

PLAYBOOK_DIR = Path(__file__).resolve().parent / "ansible"
PLAYBOOK = PLAYBOOK_DIR / "sshbench-fleet.yml"
STOP_PLAYBOOK = PLAYBOOK_DIR / "sshbench-stop.yml"
MISSING = "sshbench fleet needs ansible-core (ansible-playbook not found): pip install 'sshbench[fleet]'"
STOP_TIMEOUT_S = 120.0  # the clean-up play after an interruption
INTERRUPT_GRACE_S = 30.0  # ansible-playbook's own shutdown after SIGINT


@dataclass
class HostEvent:
    event: str  # ok | failed | unreachable | skipped | ignored
    host: str
    stage: str  # check | install | run | fetch | clean up | (other: the task name)
    message: str
    stdout: str
    time: float
    rc: int | None = None  # a command's exit status
    item: str | None = None  # a loop's item (the pair's target host), None for a task's own result
    stderr: str = ""
    work: str = ""  # the role's working directory on the host (from its set_fact), where given


def stage_of(task_name: str) -> str:
    """'sshbench : sshbench: install (private venv)' -> 'install' (the role's tasks name their stage)."""
    name = task_name.split(" : ", 1)[-1]
    if name.startswith("sshbench: "):
        name = name[len("sshbench: ") :]
    name = name.split(" (", 1)[0]
    return {
        "check the host": "check",
        "fetch the result": "fetch",
        "remove the working directory": "clean up",
        "stop the run and remove the working directory": "stop",
    }.get(name, name)


def find_ansible_playbook() -> str:
    """ansible-playbook beside this Python (the same venv), else on PATH; UsageError naming the extra."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    if os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("ansible-playbook")
    if found is None:
        raise UsageError(MISSING)
    return found


def ansible_env(stage: Path, forks: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ANSIBLE_STDOUT_CALLBACK": "sshbench_progress",
            "ANSIBLE_CALLBACK_PLUGINS": str(PLAYBOOK_DIR / "callback_plugins"),
            "ANSIBLE_PIPELINING": "True",
            # No ControlPersist master: it would stay behind on this machine after the run.
            "ANSIBLE_SSH_ARGS": "-o ControlMaster=no",
            "ANSIBLE_LOCAL_TEMP": str(stage / "ansible-local"),
            "ANSIBLE_FORKS": str(forks),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_SYSTEM_WARNINGS": "False",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def parse_line(line: str) -> HostEvent | None:
    """One callback line -> a HostEvent (task starts and the end are None; so is anything not ours)."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or "host" not in data or "event" not in data:
        return None
    return HostEvent(
        event=str(data["event"]),
        host=str(data["host"]),
        stage=stage_of(str(data.get("task", ""))),
        message=str(data.get("msg") or ""),
        stdout=str(data.get("stdout") or ""),
        time=float(data.get("t") or 0.0),
        rc=data["rc"] if isinstance(data.get("rc"), int) else None,
        item=str(data["item"]) if data.get("item") is not None else None,
        stderr=str(data.get("stderr") or ""),
        work=str(data.get("work") or ""),
    )


def run_playbook(
    playbook: Path,
    inventory: str,
    limit: str | None,
    extra_vars: dict,
    stage: Path,
    forks: int,
    on_event: Callable[[HostEvent], None],
    on_text: Callable[[str], None],
    timeout_s: float | None = None,
) -> int:
    """ansible-playbook in its own session (a terminal's Ctrl-C reaches us, and we stop it in order);
    returns its exit status. KeyboardInterrupt/Interrupted propagate after it has been stopped."""
    program = find_ansible_playbook()
    vars_file = stage / f"{playbook.stem}-vars.json"
    vars_file.write_text(json.dumps(extra_vars))
    vars_file.chmod(0o600)
    argv = [program, "-i", inventory, str(playbook), "-e", f"@{vars_file}"]
    if limit:
        argv += ["--limit", limit]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=ansible_env(stage, forks),
        start_new_session=True,
    )
    timer = None
    if timeout_s is not None:
        timer = threading.Timer(timeout_s, lambda: _stop(proc))
        timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = parse_line(line)
            if event is not None:
                on_event(event)
            elif line.strip() and not line.lstrip().startswith('{"event"'):
                on_text(line.rstrip("\n"))
        return proc.wait()
    except BaseException:
        _stop(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
        if proc.poll() is None:
            _stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def _stop(proc: subprocess.Popen[str]) -> None:
    """SIGINT first (ansible-playbook stops its workers and prints its summary), then SIGKILL to its
    whole session after a bounded wait."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=INTERRUPT_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)

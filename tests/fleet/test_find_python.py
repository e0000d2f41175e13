"""The fleet role's Python probe (roles/sshbench/files/find_python.sh), run by /bin/sh as the raw module
runs it, against hosts' PATHs as people have them: a pyenv-style shim of an unselected python3.13 first
(exits 127), an old /usr/bin/python3, a python3 without venv, nothing that works. Candidates are small
shell scripts answering the probe's two questions like a Python would (the only fakes: the probe is
what is tested; the fleet tests run it against real interpreters); /usr/bin/python3 is replaced by
a bind mount inside a private mount namespace (`unshare --mount`, root), never on the machine itself.
Each case is one /bin/sh run (tens of milliseconds)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sshbench.fleet.playbook import PLAYBOOK_DIR
from sshbench.links import nshost, nshost_config
from sshbench.links.nshost import NamespaceHost

PROBE = PLAYBOOK_DIR / "roles" / "sshbench" / "files" / "find_python.sh"
TAG = "python 3.11 x86_64"
TOOLS = ("sed", "tr", "sort", "uniq", "head", "timeout")
REASON = (
    None
    if os.geteuid() == 0 and shutil.which("unshare") and os.path.exists("/usr/bin/python3")
    else "needs root and unshare (a private mount namespace hides /usr/bin/python3)"
)


def _fake(directory: Path, name: str, version: str | None, venv: bool = True, machine: str = "x86_64") -> Path:
    """A program answering like a Python of `version` (None: a pyenv shim of an unselected version)."""
    path = directory / name
    if version is None:
        body = f'echo "pyenv: {name}: command not found" >&2\necho >&2\nexit 127\n'
    else:
        body = (
            'case "$2" in\n'
            f"  *venv*) exit {0 if venv else 1} ;;\n"
            f'  *) echo "{path}"; echo "python {version} {machine}" ;;\n'
            "esac\n"
        )
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _probe(
    path_dirs: list[Path], system: Path | None, explicit: str = "", inventory: str = "", want: str = TAG
) -> subprocess.CompletedProcess[str]:
    """find_python.sh as the role sends it, with PATH = path_dirs + /usr/bin:/bin (sed, sort, ...) and
    /usr/bin/python3 replaced by `system` (None: as it is) in a private mount namespace."""
    script = f"set -- '{explicit}' '{inventory}' '{want}'; {PROBE.read_text()}"
    mount = f"{shutil.which('mount')} --bind {system} /usr/bin/python3 && " if system else ""
    tools = path_dirs[0].parent / "tools"  # what the probe runs besides the candidates (no python3.X among them)
    if not tools.exists():
        tools.mkdir()
        for name in TOOLS:
            (tools / name).symlink_to(str(shutil.which(name)))
    env = {"PATH": ":".join([*map(str, path_dirs), str(tools)]), "LC_ALL": "C"}
    inner = f'{mount}exec /bin/sh -c "$0"'
    return subprocess.run(
        [str(shutil.which("unshare")), "--mount", "--propagation", "private", "/bin/sh", "-c", inner, script],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _found(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    found = dict(line.split("=", 1) for line in lines if line.startswith(("python=", "tag=")))
    found["passed"] = next((line for line in lines if line.startswith("passed over: ")), "")
    return found


pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def test_a_broken_shim_first_on_path_is_passed_over_for_a_python_that_runs(tmp_path):
    shims, bin_dir = tmp_path / "shims", tmp_path / "bin"
    shims.mkdir(), bin_dir.mkdir()
    _fake(shims, "python3.13", None)
    python3 = _fake(bin_dir, "python3", "3.11")
    old = _fake(tmp_path, "old-python3", "3.9")
    found = _found(_probe([shims, bin_dir], system=old))
    assert found["python"] == str(python3) and found["tag"] == TAG
    assert "/usr/bin/python3: Python 3.9 is too old (sshbench needs 3.11 or newer)" in found["passed"]
    # the shim is never reached: python3 on PATH works first
    assert "python3.13" not in found["passed"]


def test_the_newest_python3_x_that_runs_is_taken_when_python3_does_not(tmp_path):
    shims, bin_dir = tmp_path / "shims", tmp_path / "bin"
    shims.mkdir(), bin_dir.mkdir()
    _fake(shims, "python3.13", None)  # first on PATH and newest, but a shim of an unselected version
    _fake(bin_dir, "python3.13", "3.13", machine="x86_64")  # a working 3.13 later on PATH
    _fake(bin_dir, "python3.12", "3.12")
    _fake(bin_dir, "python3", "3.10")
    old = _fake(tmp_path, "old-python3", "3.9")
    found = _found(_probe([shims, bin_dir], system=old, want=""))
    assert found["python"] == str(bin_dir / "python3.13")
    assert f"python3.13 ({shims}/python3.13): exit 127: pyenv: python3.13: command not found" in found["passed"]
    assert f"python3 ({bin_dir}/python3): Python 3.10 is too old" in found["passed"]


def test_the_wheelhouse_python_is_preferred_to_an_earlier_one_that_works(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "python3", "3.12")
    _fake(bin_dir, "python3.11", "3.11")
    old = _fake(tmp_path, "old-python3", "3.9")
    found = _found(_probe([bin_dir], system=old, want=TAG))
    assert found["python"] == str(bin_dir / "python3.11") and found["tag"] == TAG
    assert f"python3 ({bin_dir}/python3): python 3.12 x86_64, not the wheelhouse's {TAG}" in found["passed"]
    # none fits the wheelhouse: the first that works is taken (the check then says why it does not fit)
    found = _found(_probe([bin_dir], system=old, want="python 3.13 aarch64"))
    assert found["python"] == str(bin_dir / "python3")


def test_sshbench_python_and_the_inventory_interpreter_come_first(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mine = _fake(tmp_path, "my-python", "3.11")
    theirs = _fake(tmp_path, "their-python", "3.11")
    assert _found(_probe([bin_dir], system=None, explicit=str(mine), inventory=str(theirs)))["python"] == str(mine)
    assert _found(_probe([bin_dir], system=None, inventory=str(theirs)))["python"] == str(theirs)
    # a named one that does not work is said, and the next candidate taken
    broken = _fake(tmp_path, "broken-python", None)
    found = _found(_probe([bin_dir], system=None, explicit=str(broken), inventory=str(theirs)))
    assert found["python"] == str(theirs) and f"sshbench_python {broken}: exit 127" in found["passed"]


def test_no_python_that_works_is_one_line_naming_each_candidate(tmp_path):
    shims, bin_dir = tmp_path / "shims", tmp_path / "bin"
    shims.mkdir(), bin_dir.mkdir()
    _fake(shims, "python3.13", None)
    _fake(bin_dir, "python3", "3.11", venv=False)
    old = _fake(tmp_path, "old-python3", "3.8")
    done = _probe([shims, bin_dir], system=old, explicit="/opt/nowhere/python3")
    assert done.returncode == 3, done.stdout + done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("no python: nothing here runs Python 3.11 or newer with venv")
    for said in (
        "sshbench_python /opt/nowhere/python3: not found",
        "/usr/bin/python3: Python 3.8 is too old",
        f"python3 ({bin_dir}/python3): Python 3.11 has no venv module (apt-get install python3-venv)",
        f"python3.13 ({shims}/python3.13): exit 127: pyenv: python3.13: command not found",
    ):
        assert said in line, line


ANSIBLE_REASON = nshost.missing_requirement() or (
    None if (Path(sys.executable).parent / "ansible-playbook").exists() else "ansible-core is not installed"
)


@pytest.mark.skipif(ANSIBLE_REASON is not None, reason=ANSIBLE_REASON or "")
def test_the_role_sets_the_interpreter_it_found_unless_the_inventory_names_one(tmp_path):
    """The role's python tasks through the real ansible-playbook (~4 s), on a namespace host whose PATH
    starts with a broken python3.13: a module runs afterwards on each inventory entry; the one that names
    its interpreter keeps it."""
    from sshbench.fleet.playbook import ansible_env, find_ansible_playbook

    shims = tmp_path / "shims"
    shims.mkdir()
    play = tmp_path / "python.yml"
    play.write_text(
        "- hosts: all\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - ansible.builtin.import_role: {name: sshbench, tasks_from: python}\n"
        "    - ansible.builtin.command: 'true'\n"
        "    - ansible.builtin.debug: {msg: 'interpreter={{ ansible_python_interpreter }}'}\n"
    )
    with NamespaceHost(sshd_options=nshost_config.broken_shim(shims)) as host:
        inventory = tmp_path / "hosts.ini"
        inventory.write_text(
            "[bench]\n"
            + host.inventory_line("plain")
            + host.inventory_line("named", ansible_python_interpreter=sys.executable)
        )
        env = {
            **ansible_env(tmp_path, 2),
            "ANSIBLE_STDOUT_CALLBACK": "default",
            "ANSIBLE_ROLES_PATH": str(PLAYBOOK_DIR / "roles"),
        }
        env["ANSIBLE_SSH_COMMON_ARGS"] = f"-o UserKnownHostsFile={host.known_hosts} -o GlobalKnownHostsFile=/dev/null"
        done = subprocess.run(
            [find_ansible_playbook(), "-i", str(inventory), str(play)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    said = dict(re.findall(r'ok: \[(\w+)\] => \{\s*"msg": "interpreter=([^"]+)"', done.stdout))
    assert said["named"] == sys.executable, done.stdout
    assert said["plain"] and str(shims) not in said["plain"] and "python3.13" not in said["plain"], done.stdout

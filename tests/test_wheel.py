"""A wheel that works elsewhere (issue 65): built from a copy of this checkout's sources (`uv build`), installed into a
fresh venv (`uv venv` + `uv pip install`), and run there: `--help`, `fleet --help` (its playbook, role and callback
are package data: every file of fleet/ansible/ must be in the wheel) and a 3-round run. Offline: the build backend
and the dependencies come from uv's cache, which `make setup` fills; the tests reach no network but 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.e2e  # builds and installs a package, then runs a private sshd from it
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
STEP_TIMEOUT_S = 180


def _step(argv: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, env=env)
    assert done.returncode == 0, f"{what} failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the fresh venv's bin directory)."""
    if UV is None:
        pytest.skip("no uv (make setup installs it): the wheel is built and installed with uv")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy: the build's build/ and egg-info never land in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _step([UV, "build", "--wheel", "--offline", "--out-dir", str(work / "dist"), str(source)], work, "uv build")
    (wheel,) = (work / "dist").glob("sshbench-*.whl")
    venv = work / "venv"
    _step([UV, "venv", "--offline", "-q", "--python", sys.executable, str(venv)], work, "uv venv")
    python = venv / "bin" / "python"
    _step([UV, "pip", "install", "--offline", "-q", "--python", str(python), str(wheel)], work, "uv pip install (offline: the dependencies from uv's cache, which make setup fills)")  # fmt: skip
    return wheel, venv / "bin"


def _clean_env() -> dict[str, str]:
    """The test's environment without anything that would find this checkout's sources instead of the wheel's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != Path(sys.executable).parent)
    return env


def test_the_wheel_holds_every_file_of_the_fleets_ansible_directory(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    ansible = ROOT / "src" / "sshbench" / "fleet" / "ansible"
    expected = {
        f"sshbench/fleet/ansible/{p.relative_to(ansible).as_posix()}"
        for p in ansible.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert expected and expected <= names, sorted(expected - names)


def test_the_installed_command_runs_from_the_venv_not_this_checkout(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, bin_dir = installed
    env = _clean_env()
    where = _step([str(bin_dir / "python"), "-c", "import sshbench; print(sshbench.__file__)"], tmp_path, "import", env)
    assert where.startswith(str(bin_dir.parent)) and str(ROOT / "src") not in where
    assert "usage: sshbench" in _step([str(bin_dir / "sshbench"), "--help"], tmp_path, "sshbench --help", env)
    fleet = _step([str(bin_dir / "sshbench"), "fleet", "--help"], tmp_path, "sshbench fleet --help", env)
    assert "--inventory" in fleet
    playbook = _step(
        [str(bin_dir / "python"), "-c", "from sshbench.fleet import playbook; print(playbook.PLAYBOOK_DIR)"],
        tmp_path, "the playbook's directory", env,
    )  # fmt: skip
    assert (Path(playbook.strip()) / "sshbench-fleet.yml").is_file()


def test_a_three_round_run_from_the_wheel(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, bin_dir = installed
    argv = [
        str(bin_dir / "sshbench"), "run", "--runs", "3", "--size", "16M", "--no-baselines", "--no-why",
        "--ciphers", "aes128-gcm@openssh.com", "--kex", "curve25519-sha256", "--db", str(tmp_path / "runs.db"),
    ]  # fmt: skip
    out = _step(argv, tmp_path, "sshbench run from the wheel", _clean_env())
    assert "Fastest here: aes128-gcm" in out

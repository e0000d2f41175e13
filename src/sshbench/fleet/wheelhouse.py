"""What the hosts install from: a wheelhouse made on the control machine, so no host needs a network
beyond Ansible's own connection.

- sshbench's own wheel is written here from the package that is running (its files and its installed
  metadata), so every host runs exactly the control machine's code, with no build backend and no network.
- Its dependencies but those a host does without (HOST_LEFT_OUT: charts are drawn here), listed in
  wheelhouse/requirements.txt, and pip (which the role runs from its wheel: no pip or ensurepip needed on a host)
  come from `pip download --only-binary=:all:` for this machine's Python and platform, cached in
  $XDG_CACHE_HOME/sshbench/fleet-wheelhouse/<key>/; or from `--wheelhouse DIR` (e.g. made with
  `pip download --platform ... --python-version ...` for hosts of another architecture or Python).
- Both go into one tar (wheelhouse/...), copied to each host in one transfer.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import sshbench
from sshbench.errors import RunError, UsageError

DOWNLOAD_TIMEOUT_S = 900.0
COMPLETE_MARK = ".complete"  # written last: a cache dir without it was interrupted and is made again


def host_tag() -> str:
    """'python 3.11 x86_64': what a binary wheelhouse made here fits (the role's check prints the same)."""
    return f"python {sys.version_info[0]}.{sys.version_info[1]} {platform.machine()}"


# What a host does without: it runs `sshbench run --json` (and its pairs' runs), and charts are drawn on the control
# machine. matplotlib and what it alone needs (numpy, pillow, fonttools, ...) were 38 of the wheelhouse's 49 MB,
# copied to every host and installed there (the fleet tests' hosts: 3.8 s of copy and 3.9 s of venv and pip).
# numpy and scipy serve the model of a run (model/experiment.py, factorial.py): a host's own run ranks pairwise
# without them (statistics.run_model), and the control machine answers from the trials it brings back.
HOST_LEFT_OUT = frozenset({"matplotlib", "numpy", "scipy"})
HOST_REQUIREMENTS = "requirements.txt"  # in wheelhouse/: what the role installs; sshbench itself with --no-deps


def runtime_requirements() -> list[str]:
    """sshbench's own dependencies (no extras), as its metadata names them."""
    requires = importlib.metadata.requires("sshbench") or []
    return [r for r in requires if ";" not in r or "extra" not in r.split(";", 1)[1]]


def host_requirements() -> list[str]:
    """What `sshbench run` needs on a host: the runtime requirements but HOST_LEFT_OUT."""
    return [r for r in runtime_requirements() if _project(r) not in HOST_LEFT_OUT]


def _project(requirement: str) -> str:
    """'matplotlib>=3.7' -> 'matplotlib' (normalised as pip compares names)."""
    return re.split(r"[\s<>=!~;\[(@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_sshbench_wheel(dest: Path) -> Path:
    """A py3-none-any wheel of the running sshbench: the package's files (no caches) and its installed
    METADATA and entry points. Returns its path."""
    dist = importlib.metadata.distribution("sshbench")
    metadata = dist.read_text("METADATA")
    entry_points = dist.read_text("entry_points.txt")
    if not metadata:
        raise RunError("sshbench's installed metadata is missing: reinstall it (pip install -e .) to use fleet")
    version = dist.version
    package = Path(sshbench.__file__).resolve().parent
    dist_info = f"sshbench-{version}.dist-info"
    path = dest / f"sshbench-{version}-py3-none-any.whl"
    records: list[str] = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:

        def add(name: str, data: bytes) -> None:
            wheel.writestr(name, data)
            records.append(f"{name},{_record_hash(data)},{len(data)}")

        for file in sorted(package.rglob("*")):
            relative = file.relative_to(package)
            # the fleet's own playbook stays on the control machine; caches are not code
            if file.is_dir() or "__pycache__" in relative.parts or file.suffix == ".pyc":
                continue
            if relative.parts[:2] == ("fleet", "ansible"):
                continue
            add(f"sshbench/{relative.as_posix()}", file.read_bytes())
        add(f"{dist_info}/METADATA", metadata.encode())
        if entry_points:
            add(f"{dist_info}/entry_points.txt", entry_points.encode())
        add(
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: sshbench fleet\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        records.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return path


def _cache_root() -> Path:

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sshbench" / "fleet-wheelhouse"


def dependency_wheelhouse(log=None) -> Path:
    """The dependencies' wheels (and pip's) for this machine's Python and platform, downloaded once
    and cached. RunError with one line when pip cannot get them."""
    requirements = sorted(host_requirements())
    key = hashlib.sha256("\n".join([host_tag(), *requirements]).encode()).hexdigest()[:16]
    cached = _cache_root() / key
    if (cached / COMPLETE_MARK).is_file():
        return cached
    if log:
        log(f"downloading the dependencies' wheels for the hosts ({host_tag()}) into {cached}")
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cached.parent))
    try:
        argv = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        argv += ["--only-binary=:all:", "--dest", str(partial), "pip", *requirements]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise RunError(f"pip download did not finish within {DOWNLOAD_TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RunError(f"pip download of sshbench's dependencies failed: {last}; give --wheelhouse DIR instead")
        (partial / COMPLETE_MARK).write_text(host_tag() + "\n")
        shutil.rmtree(cached, ignore_errors=True)
        partial.rename(cached)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return cached


def check_wheelhouse(directory: Path) -> None:
    """A --wheelhouse DIR must hold pip's wheel (the role runs pip from it); sshbench's is added here."""
    if not directory.is_dir():
        raise UsageError(f"--wheelhouse {directory}: no such directory")
    if not list(directory.glob("pip-*.whl")):
        raise UsageError(
            f"--wheelhouse {directory} has no pip wheel (pip-*.whl): add one with `pip download --dest {directory} pip`"
        )


def make_archive(dependencies: Path, stage: Path) -> Path:
    """stage/wheelhouse.tar: wheelhouse/ with every wheel of `dependencies` (except an sshbench wheel)
    and a fresh wheel of the running sshbench. Uncompressed: wheels are compressed already."""
    with tempfile.TemporaryDirectory(dir=stage) as tmp:
        own = build_sshbench_wheel(Path(tmp))
        archive = stage / "wheelhouse.tar"
        with tarfile.open(archive, "w") as tar:
            for wheel in sorted(dependencies.glob("*.whl")):
                if wheel.name.lower().startswith("sshbench-"):
                    continue
                tar.add(wheel, arcname=f"wheelhouse/{wheel.name}")
            tar.add(own, arcname=f"wheelhouse/{own.name}")
            listed = Path(tmp) / HOST_REQUIREMENTS
            listed.write_text("".join(f"{r}\n" for r in host_requirements()))
            tar.add(listed, arcname=f"wheelhouse/{HOST_REQUIREMENTS}")
    return archive

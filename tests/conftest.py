"""Shared fixtures: every test gets its own runtime dir, database and cache, so tests never see
each other's run records or results, and helpers to run the real CLI and find leftovers."""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"

# The property tests (hypothesis) run derandomized by default: every run draws the same cases (seeded from each
# test's own source), so a CI turns red only when the code changes, never because a fresh run drew a case no earlier
# one had. No example database either: a local .hypothesis/ left by `make fuzz` must not make this checkout's
# `make test` differ from a fresh clone's; a case worth keeping becomes an `@example` in the test. No deadline and no
# too-slow health check: both time the test on a shared machine, the one thing a fixed seed does not fix.
# `make fuzz` (scripts/fuzz.py) selects `fuzz`: random seeds, many more cases, failures kept in .hypothesis/ and
# replayed first on the next search.
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("fuzz", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile("ci")  # `pytest --hypothesis-profile fuzz` loads the other after this

# The two tiers (`make test` runs both; `make test-fast` only the fast one: `pytest -m "not e2e"`).
# A test is end-to-end when it, a fixture it uses or a helper of its module calls one of these: each
# starts a real sshd/server, a network namespace or an `sshbench` process. Anything else slow gets
# `@pytest.mark.e2e` (or `pytestmark`) by hand; a test that calls one of them but is cheap all the same
# can say `@pytest.mark.fast`.
E2E_ENTRY_POINTS = frozenset(
    {
        "run_cli",
        "start_cli",
        "sshbench_argv",
        "Runner",
        "make_target",
        "PrivateOpenSSH",
        "NetnsOpenSSH",
        "DropbearServer",
        "AsyncsshServer",
        "NamespaceHost",
        "NamespaceLan",
        "LinkPath",
        "python -m sshbench",  # an argv list with "-m", "sshbench" in it (subprocess, tmux)
    }
)


def _called_names(node: ast.AST) -> set[str]:
    """Names a function calls (`f(...)`, `mod.f(...)`) or takes as fixtures (its parameters)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.List, ast.Tuple)):
            words = [e.value if isinstance(e, ast.Constant) else None for e in sub.elts]
            if any(a == "-m" and b == "sshbench" for a, b in zip(words, words[1:])):
                names.add("python -m sshbench")
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Name):
                names.add(sub.func.id)
            elif isinstance(sub.func, ast.Attribute):
                names.add(sub.func.attr)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.update(a.arg for a in sub.args.args)
    return names


@functools.cache
def _e2e_names(path: str) -> frozenset[str]:
    """The entry points plus every module-level function or class of `path` that reaches one (fixed point)."""
    tree = ast.parse(Path(path).read_text(), path)
    defs = {
        n.name: _called_names(n)
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    found = set(E2E_ENTRY_POINTS)
    grew = True
    while grew:
        grew = False
        for name, calls in defs.items():
            if name not in found and calls & found:
                found.add(name)
                grew = True
    return frozenset(found)


@functools.cache
def _conftest_e2e_fixtures() -> frozenset[str]:
    return _e2e_names(__file__) - E2E_ENTRY_POINTS


def _is_end_to_end(item: pytest.Item) -> bool:
    if item.get_closest_marker("e2e"):
        return True
    if item.get_closest_marker("fast") or not isinstance(item, pytest.Function):
        return False
    function = inspect.unwrap(item.function)
    try:
        source = inspect.getsource(function)
        path = inspect.getsourcefile(function)
    except (OSError, TypeError):
        return False
    reaching = _e2e_names(path) if path else E2E_ENTRY_POINTS
    calls = _called_names(ast.parse(textwrap.dedent(source)))
    # conftest's own helpers count as called (run_json runs the CLI): tests calling them only (test_hpn, test_builds)
    # ran in `make test-fast` once HPN-SSH and OpenSSH 10 were built, and took it from 46 s to 100 s
    helpers = _conftest_e2e_fixtures()
    return bool(calls & (reaching | helpers) or set(item.fixturenames) & (reaching | helpers))


def pytest_configure(config: pytest.Config) -> None:
    """Where the environment sets PYTHONDONTWRITEBYTECODE (this VM's shells do), every pytest process (`make test`'s
    two xdist workers, then its timed tier) rewrote the asserts of the ~160 test modules and compiled what they
    import from source: ~6 s of each one's collection. Kept in pytest's own cache dir (.pytest_cache, ignored by
    git), as bytecode of its own beside no source: the checkout gets no __pycache__. Without the cache plugin
    (-p no:cacheprovider), as before."""
    cache = getattr(config, "cache", None)
    if sys.dont_write_bytecode and cache is not None:
        sys.pycache_prefix = str(cache.mkdir("pycache"))
        sys.dont_write_bytecode = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Only a selection by `e2e` (`make test-fast`: -m "not e2e") reads the marks: reading every test's source for
    # them took ~2 s of each pytest process's collection (make test's three).
    if "e2e" not in (config.option.markexpr or ""):
        return
    for item in items:
        if _is_end_to_end(item) and not item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def compiled_once(tmp_path_factory: pytest.TempPathFactory):
    """The suite starts `python -m sshbench` some hundreds of times. Where the environment sets
    PYTHONDONTWRITEBYTECODE (this VM's shells do), each of them compiled sshbench's ~170 modules from source:
    0.33 s for `sshbench --help` against 0.19 s with their bytecode kept. Kept here for the session, under
    pytest's own temp dir (PYTHONPYCACHEPREFIX), so the checkout gets no __pycache__ and nothing outlives
    the run's temp. Not the measured path: it is how long the command takes to start."""
    saved = {name: os.environ.get(name) for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.getbasetemp() / "pycache")
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


CEILINGS = Path("sshbench") / "crypto-ceiling.json"  # under XDG_CACHE_HOME (baselines/crypto_ceiling.py)
# ... and the rekey probes' stalls (rekey_probe.StallCache): nearly every run has a chacha20-poly1305 row (the client's
# default), and a probe in each made the suite ~90 s longer
SHARED_CACHES = (CEILINGS, Path("sshbench") / "rekey-stalls.json")


def _merge_ceilings(source: Path, into: Path) -> None:
    """Add the crypto ceilings `source` has (per machine key, per primitive) to `into`."""
    try:
        found = json.loads(source.read_text())
    except (OSError, ValueError):
        return
    try:
        merged = json.loads(into.read_text())
    except (OSError, ValueError):
        merged = {}
    for key, entries in found.items() if isinstance(found, dict) else ():
        if isinstance(entries, dict):
            merged.setdefault(key, {}).update(entries)
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text(json.dumps(merged))


def with_shared_ceilings(cache_home: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fixture's own XDG_CACHE_HOME, started with the crypto ceilings the session has measured."""
    for name in SHARED_CACHES:
        _merge_ceilings(tmp_path_factory.getbasetemp() / "shared-cache" / name, cache_home / name)
    return str(cache_home)


@pytest.fixture(autouse=True)
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
):
    """Per test: its own runtime dir, store, caches and temp spaces (so that 'nothing left behind'
    can be checked exactly, even while other processes use /tmp and /dev/shm).

    The crypto ceilings (`openssl speed` per primitive, cached per machine as a user's second run finds them)
    and the rekey probes' stalls (rekey_probe.StallCache) are the one thing tests share: each test's cache starts
    with those measured so far in the session and hands back what it measured. A cold cache cost ~3 s of every run with baselines (a 2-cipher run: 6.3 s
    cold, 3.2 s warm); tests of the cache itself give it a path of their own."""
    import shutil
    import tempfile

    state = tmp_path_factory.mktemp("state")
    shared = tmp_path_factory.getbasetemp() / "shared-cache"
    for name in SHARED_CACHES:
        _merge_ceilings(shared / name, state / "cache" / name)
    shm = Path(tempfile.mkdtemp(prefix="sshbench-test-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    for name in ("tmp", "disk"):
        (state / name).mkdir()
    monkeypatch.setenv("TMPDIR", str(state / "tmp"))
    monkeypatch.setenv("SSHBENCH_SHM_DIR", str(shm))
    monkeypatch.setenv("SSHBENCH_DISK_DIR", str(state / "disk"))
    monkeypatch.setenv("SSHBENCH_RUNTIME_DIR", str(state / "runtime"))
    monkeypatch.setenv("SSHBENCH_DB", str(state / "results.db"))
    # The machine's measurement lock (host/measuring.py): the parallel tier's runs share the cores on purpose and
    # assert no rate, each with a lock of its own; the timed tests take the machine's, so they wait for (and hold off)
    # a measurement someone runs beside `make test`.
    if not request.node.get_closest_marker("timed"):
        monkeypatch.setenv("SSHBENCH_LOCK", str(state / "measuring.lock"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(state / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(state / "data"))
    # Into a pipe the reports are 220 columns wide unless COLUMNS says otherwise: a shell that exports it must not
    # narrow the tables the tests read.
    monkeypatch.delenv("COLUMNS", raising=False)
    yield state
    # A test that had to SIGKILL its sshbench (a failure path) leaves what kill -9 leaves: the same
    # recovery a user's next run does removes it, so no daemon outlives the test.
    from sshbench.host.leftovers import clean_leftovers

    clean_leftovers()
    shutil.rmtree(shm, ignore_errors=True)
    for name in SHARED_CACHES:
        _merge_ceilings(state / "cache" / name, shared / name)


def sshbench_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "sshbench", *args]


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a subprocess (so exit codes and output are what a user sees)."""
    return subprocess.run(
        sshbench_argv(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )


def run_json(tmp_path: Path, *args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`sshbench ARGS --json FILE` that must succeed: what it printed, and the JSON document it wrote."""
    out = tmp_path / "run.json"
    done = run_cli(*args, "--json", str(out), timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done, json.loads(out.read_text())


def start_cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        sshbench_argv(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )


def wait_for_line(stream, needle: str, timeout: float = 60, also: str = "") -> str:
    """Read lines from a pipe until one contains `needle` (and `also`) (bounded)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if needle in line and also in line:
            return line
    raise AssertionError(f"no line containing {needle!r} within {timeout} s; got: {''.join(seen)[-2000:]}")


def sshbench_temp_dirs() -> set[str]:
    """sshbench's temp dirs that exist now in this test's temp spaces (see isolated_state)."""
    found = set()
    for base in {os.environ["TMPDIR"], os.environ["SSHBENCH_SHM_DIR"], os.environ["SSHBENCH_DISK_DIR"]}:
        if os.path.isdir(base):
            found |= {
                os.path.join(base, n)
                for n in os.listdir(base)
                if n.startswith("sshbench-") and not n.startswith("sshbench-runtime")
            }
    return found


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def pids_whose_cmdline_has(*needles: str) -> list[int]:
    """Live processes whose command line contains every one of `needles` (a daemon a test must not leave)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if all(n in cmdline for n in needles) and pid_alive(int(entry)):
                pids.append(int(entry))
    return pids


def communicate_or_dump(proc, timeout: float = 60):
    """communicate(); if sshbench hangs, have it print its threads' stacks (faulthandler on SIGUSR1)
    and fail with them."""
    import signal

    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        try:
            _, stderr = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # still alive after printing its stacks: kill it, keep what it said
            proc.kill()
            _, stderr = proc.communicate(timeout=10)
        pytest.fail(f"sshbench did not exit within {timeout} s after the signal; its stacks:\n{stderr[-8000:]}")


def wait_until(predicate, timeout: float = 20, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)  # bounded poll of process state, not a synchronisation sleep
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")

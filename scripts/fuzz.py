"""`make fuzz`: search for new failing cases of the property tests (hypothesis) for a bounded time.

`make test` runs them derandomized (tests/conftest.py, profile `ci`): the same cases every run, so CI never turns red
by chance. The search is here instead: pass after pass of every test file that uses hypothesis, under the `fuzz`
profile (a fresh random seed each pass, many more cases where a test does not fix its own count, failures kept in
.hypothesis/examples and replayed first next time), until --seconds are spent or a pass fails. A pass still running at
the deadline is stopped: a cut-short pass is not a failure.

What it finds becomes a fixed example: copy the "Falsifying example: test_x(arg=...)" call it prints into an
`@example(arg=...)` above the test's `@given` (from hypothesis import example), so every `make test` runs it.

    python scripts/fuzz.py --seconds 300        # what `make fuzz FUZZ_SECONDS=300` runs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIN_PASS_S = 20.0  # a pass needs at least this long (collection alone takes a few seconds): none started with less


def property_test_files(root: Path = ROOT) -> list[str]:
    """Every test file that imports hypothesis: a property test added later is searched without editing this."""
    found = []
    for path in sorted((root / "tests").rglob("test_*.py")):
        text = path.read_text(errors="replace")
        if "from hypothesis import" in text or "import hypothesis" in text:
            found.append(str(path.relative_to(root)))
    return found


def one_pass(files: list[str], timeout_s: float) -> int | None:
    """One pytest pass under the fuzz profile: its exit code, or None when the deadline stopped it."""
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "--hypothesis-profile", "fuzz", *files]
    try:
        return subprocess.run(argv, cwd=ROOT, timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:  # subprocess.run kills the pass it started
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to search (default 300)")
    args = parser.parse_args(argv)
    files = property_test_files()
    if not files:
        print("fuzz: no test file imports hypothesis", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.seconds
    passes = 0
    while (left := deadline - time.monotonic()) >= MIN_PASS_S or passes == 0:
        passes += 1
        print(f"fuzz: pass {passes} ({left:.0f} s left) over {len(files)} files", file=sys.stderr, flush=True)
        code = one_pass(files, max(left, MIN_PASS_S))
        if code is None:
            break
        if code != 0:
            print(
                "fuzz: a failing case (above: 'Falsifying example'). Add it as @example(...) above the test's @given, "
                "fix the code, and run `make fuzz` again (the case is replayed first from .hypothesis/examples).",
                file=sys.stderr,
            )
            return 1
    print(f"fuzz: no failure in {passes} passes ({args.seconds:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

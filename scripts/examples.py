"""`make examples`: run each docs/examples page's command and put what sshbench printed into the page.

A page (docs/examples/NN-name.md) holds one command in a ```sh block and, between the `<!-- output -->` and
`<!-- /output -->` markers, what that command printed in a 100-column terminal, under a line saying when, where and
which sshbench printed it (its version and the checkout's `git describe`); everything else on the page (what the
seed post did, the comparison with it) is written by hand and kept as it is. The run itself (its `--json` document)
is kept beside the page, docs/examples/runs/NN-name.json.gz: tests/test_examples.py renders its answer block again
with the current sshbench and fails where the page's no longer matches what it would print. Each command runs with
a results store of its own in a temp dir (the examples do not land in your history), one after the other: they are
benchmarks, and two at once on a small machine would measure each other.

    .venv/bin/python scripts/examples.py              every page
    .venv/bin/python scripts/examples.py 03-zeros     one page (its file name, without .md)
"""

from __future__ import annotations

import gzip
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs" / "examples"
RUNS = PAGES / "runs"  # each page's run, as `run --json` wrote it (gzip): what its answer block is checked against
SSHBENCH = Path(sys.executable).with_name("sshbench")
COMMAND = re.compile(r"```sh\n(sshbench [^\n]+)\n```")
OUTPUT = re.compile(r"(<!-- output[^\n]*-->\n).*?(<!-- /output -->)", re.S)
NEEDS_ROOT = ("--link", "--server-cpu")


def command_of(text: str) -> list[str]:
    """The page's command as argv after `sshbench` (tests/test_examples.py parses the same)."""
    found = COMMAND.search(text)
    if found is None:
        raise SystemExit("no ```sh block with a `sshbench ...` command")
    return shlex.split(found.group(1))[1:]


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.machine(),
    )
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip()
    return f"{cpu}, {os.cpu_count()} cores, {ssh}"


def version() -> str:
    """`0.1.0 (43ca37c)`: the package's version and the checkout it ran from (`-dirty`: with uncommitted changes)."""
    from sshbench import __version__

    described = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    return f"{__version__} ({described or 'no git'})"


def run(argv: list[str], keep: Path) -> tuple[str, float, int]:
    """The command's output, its wall time and exit code; its run's JSON document gzipped into `keep`."""
    with tempfile.TemporaryDirectory(prefix="sshbench-examples-") as scratch:
        env = {**os.environ, "COLUMNS": "100", "SSHBENCH_DB": str(Path(scratch) / "results.db")}
        document = Path(scratch) / "run.json"
        started = time.monotonic()
        done = subprocess.run(
            [str(SSHBENCH), *argv, "--json", str(document)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        took = time.monotonic() - started
        if document.is_file():
            keep.parent.mkdir(parents=True, exist_ok=True)
            with gzip.GzipFile(keep, "wb", mtime=0) as packed:  # mtime 0: the same run gives the same bytes
                packed.write(document.read_bytes())
        return done.stdout, took, done.returncode


def refresh(page: Path) -> None:
    text = page.read_text()
    argv = command_of(text)
    if os.geteuid() != 0 and any(option in argv for option in NEEDS_ROOT):
        print(f"{page.name}: skipped: its command needs root (network namespaces, tc, cgroups)")
        return
    print(f"{page.name}: sshbench {shlex.join(argv)}", flush=True)
    output, took, code = run(argv, RUNS / f"{page.stem}.json.gz")
    day = time.strftime("%Y-%m-%d")
    stamp = f"On {day}, {machine()}: {took:.0f} s, exit {code}, sshbench {version()}."
    block = f"{stamp}\n\n```\n{output.rstrip()}\n```\n"
    page.write_text(OUTPUT.sub(lambda m: m.group(1) + block + m.group(2), text, count=1))
    print(f"{page.name}: {took:.0f} s, exit {code}", flush=True)


def main() -> int:
    pages = sorted(PAGES.glob("[0-9]*.md"))
    wanted = set(sys.argv[1:])
    unknown = wanted - {p.stem for p in pages}
    if unknown:
        print(f"examples: no such page: {', '.join(sorted(unknown))}; pages: {', '.join(p.stem for p in pages)}")
        return 2
    for page in pages:
        if not wanted or page.stem in wanted:
            refresh(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())

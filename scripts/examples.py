"""`make examples`: run each docs/examples page's command and put what sshbench printed into the page.

A page (docs/examples/NN-name.md) holds one command in a ```sh block and, between the `<!-- output -->` and
`<!-- /output -->` markers, what that command printed in a 100-column terminal; everything else on the page (what
the seed post did, the comparison with it) is written by hand and kept as it is. Each command runs with a results
store of its own in a temp dir (the examples do not land in your history), one after the other: they are
benchmarks, and two at once on a small machine would measure each other.

    .venv/bin/python scripts/examples.py              every page
    .venv/bin/python scripts/examples.py 03-zeros     one page (its file name, without .md)
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "docs" / "examples"
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


def run(argv: list[str]) -> tuple[str, float, int]:
    with tempfile.TemporaryDirectory(prefix="sshbench-examples-") as scratch:
        env = {**os.environ, "COLUMNS": "100", "SSHBENCH_DB": str(Path(scratch) / "results.db")}
        started = time.monotonic()
        done = subprocess.run(
            [str(SSHBENCH), *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        return done.stdout, time.monotonic() - started, done.returncode


def refresh(page: Path) -> None:
    text = page.read_text()
    argv = command_of(text)
    if os.geteuid() != 0 and any(option in argv for option in NEEDS_ROOT):
        print(f"{page.name}: skipped: its command needs root (network namespaces, tc, cgroups)")
        return
    print(f"{page.name}: sshbench {shlex.join(argv)}", flush=True)
    output, took, code = run(argv)
    day = time.strftime("%Y-%m-%d")
    block = f"On {day}, {machine()}: {took:.0f} s, exit {code}.\n\n```\n{output.rstrip()}\n```\n"
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

"""The console script's entry point: the whole program is imported here, inside a try, so that a Ctrl-C during
those imports (the first ~0.4 s of every command on a 2-core VM) ends with one line and 130 like any later one,
not a Python traceback (issue 55). Nothing else belongs here: this module must stay cheap to import."""

from __future__ import annotations

import signal
import sys


def main() -> int:
    try:
        # Imported here, not at the top: a KeyboardInterrupt raised while these modules load must be caught.
        from sshbench.cli.main import main as run_command
    except KeyboardInterrupt:
        sys.stderr.write("sshbench: interrupted\n")
        return 128 + signal.SIGINT
    return run_command()

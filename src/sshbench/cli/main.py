"""`sshbench`: the one parser (each command group adds its subcommands, with `handler` set; cli/parser.py builds
it) and `main()`, which the console script (cli/entry.py) calls once it has loaded."""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys

from rich.console import Console

from sshbench.cli import algorithms, check, completion, crossover, fleet, history, latency, run, security, store
from sshbench.cli.common import check_common
from sshbench.cli.parser import make_parser
from sshbench.errors import Interrupted, SshbenchError
from sshbench.host.measuring import one_measurement

# Each command group: add_commands(sub) registers its subcommands with set_defaults(handler=...).
COMMAND_GROUPS = (run, check, latency, algorithms, store, history, security, crossover, fleet, completion)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every group's subcommands."""
    return make_parser(group.add_commands for group in COMMAND_GROUPS)


def main(argv: list[str] | None = None) -> int:
    # `kill -USR1 <pid>` prints every thread's stack to stderr: a stuck run can be diagnosed.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Not a terminal (a file, CI): wide enough that the results table is not folded, unless COLUMNS says how wide
    # (`COLUMNS=100 sshbench run | tee run.txt`: the tables as a 100-column terminal shows them).
    out = Console(highlight=False)
    if not out.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        out = Console(highlight=False, width=220)
    # Into a pipe or file an error or notice stays one line however long (scripts grep for it); on a terminal
    # it wraps between words (the terminal itself would cut words in two).
    err = Console(stderr=True, highlight=False)
    err.soft_wrap = not err.is_terminal
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser()
        args = parser.parse_args(argv)
        check_common(parser, args)
        args.argv = argv
        args.parser = parser  # the whole command line, which `completion` describes
        if not getattr(args, "measures", False):
            return int(args.handler(args, out, err))
        # one measurement at a time on this machine (host/measuring.py): two side by side measure each other
        say = lambda line: err.print(f"sshbench: {line}", markup=False, highlight=False)
        with one_measurement(args.command, wait=not args.no_wait, say=say):
            return int(args.handler(args, out, err))
    except SshbenchError as e:
        err.print(f"sshbench: error: {e}", markup=False, highlight=False)
        return e.exit_code
    except KeyboardInterrupt:
        err.print("sshbench: interrupted", highlight=False)
        return 130
    except Interrupted as e:
        err.print(f"sshbench: interrupted by signal {e.signum}", highlight=False)
        return 128 + e.signum
    except Exception as e:  # a bug: one line (the traceback with SSHBENCH_DEBUG=1), never a stack dump
        if os.environ.get("SSHBENCH_DEBUG"):
            raise
        err.print(
            f"sshbench: internal error: {type(e).__name__}: {e} (SSHBENCH_DEBUG=1 shows where)",
            markup=False,
            highlight=False,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

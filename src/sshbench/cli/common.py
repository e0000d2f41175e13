"""What several commands share: the `--db` option (declared here once) and writing an output file."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from rich.console import Console

from sshbench.errors import RunError, UsageError
from sshbench.host.osfiles import atomic_write

DB_HELP = "results database (default $SSHBENCH_DB, else $XDG_DATA_HOME/sshbench/results.db)"


def add_db_option(parser: argparse.ArgumentParser, help: str = DB_HELP) -> None:
    parser.add_argument("--db", metavar="PATH", help=help)


SSH_CONFIG_HELP = "ssh_config for a remote HOST (ssh -F)"
SSHD_HELP = "sshd binary for the private target (default /usr/sbin/sshd)"
SSHD_SWEEP_METAVAR = "PATH[,PATH...]"


def add_ssh_config_option(parser: argparse.ArgumentParser, help: str = SSH_CONFIG_HELP) -> None:
    """--ssh-config FILE: the ssh_config a remote HOST is read from (ssh -F), declared here once."""
    parser.add_argument("--ssh-config", metavar="FILE", help=help)


def add_sshd_option(parser: argparse.ArgumentParser, help: str = SSHD_HELP, builds: bool = False) -> None:
    """--sshd: the private target's sshd, declared here once; `builds`: a comma list of builds is taken."""
    parser.add_argument("--sshd", metavar=SSHD_SWEEP_METAVAR if builds else "PATH", help=help)


def add_wait_option(parser: argparse.ArgumentParser) -> None:
    """A command that measures: it holds this machine's measurement lock while it runs (host/measuring.py, taken in
    cli/main.py), waiting for another measurement unless --no-wait."""
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="when another sshbench measurement is running on this machine, refuse at once (exit 2) instead of "
        "waiting for it to end (two at once measure each other's load)",
    )
    parser.set_defaults(measures=True)


def write_output(text: str | bytes, path: str | None, out: Console) -> None:
    """To FILE atomically (temp file renamed into place), or to standard output."""
    if path is None:
        out.file.write(text if isinstance(text, str) else text.decode())
        out.file.flush()
        return
    target = Path(path)
    if target.exists() and not target.is_file():  # a device or a pipe (/dev/stdout, /dev/full): never replaced
        try:
            with open(target, "wb" if isinstance(text, bytes) else "w") as stream:
                stream.write(text)
        except OSError as err:
            raise RunError(f"cannot write {path}: {err.strerror}") from None
        return
    try:
        atomic_write(target, text)
    except OSError as err:
        raise RunError(f"cannot write {path}: {err.strerror}") from None


def check_writable(path: str | None) -> None:
    """Fail before the work (rendering charts, reading the store) when FILE cannot be written anyway."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise RunError(f"cannot write {path}: Is a directory")
    parent = target.parent
    if not parent.is_dir():
        raise RunError(f"cannot write {path}: No such directory {parent}")
    if not os.access(parent, os.W_OK):
        raise RunError(f"cannot write {path}: Permission denied")


def check_writable_dir(path: str | None) -> None:
    """A directory to be created (parents too) and written into: fail before the work when it cannot be."""
    if path is None:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise RunError(f"cannot write into {path}: not a directory")
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise RunError(f"cannot write into {path}: Permission denied ({existing})")


# Commands that only read the store: they never create it, and an explicit --db must exist.
READ_ONLY_COMMANDS = {"runs", "report", "compare", "export", "recommend", "audit", "algorithms", "history"}


def check_common(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Up-front checks every subcommand shares, before any work: no option or argument given as an empty
    string (an empty shell variable must not mean "the default" or "everything"), no comma list without a
    name in it, and a read-only command's --db must exist."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command_parser = sub.choices[args.command]
    for action in command_parser._actions:
        value = getattr(args, action.dest, None)
        name = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest).upper()
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"{name} must be a finite number (got {value})")
        if not isinstance(value, str):
            continue
        if not value.strip() or ("," in value and not any(part.strip() for part in value.split(","))):
            if not action.option_strings:
                raise UsageError(f"{name} is empty: give a value")
            raise UsageError(f"{name} is empty: give a value, or leave {name} out for its default")
        if "," in value and any(not part.strip() for part in value.split(",")) and action.option_strings:
            raise UsageError(f"{name} {value!r} has an empty item in its comma list")
    db = getattr(args, "db", None)
    if args.command in READ_ONLY_COMMANDS and db is not None and not Path(db).is_file():
        what = "is a directory" if Path(db).is_dir() else "does not exist"
        raise UsageError(f"--db {db} {what}; `sshbench runs --db PATH` needs an existing results database")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """`--wide` and `-q` of `run` and `report`: every column, or the conclusion block only."""
    parser.add_argument("--wide", action="store_true", help="the table with every column (default: what fits)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the conclusion block")


def add_result_file_options(parser: argparse.ArgumentParser) -> None:
    """`run`'s (and so `check`'s) results as files: the whole run as JSON, and what dashboards ingest
    (report/dashboards.py: a run's rows, a check's NEW/OLD)."""
    parser.add_argument("--json", metavar="FILE", help="write settings, environment, summaries and every trial")
    parser.add_argument(
        "--json-stream",
        action="store_true",
        help="one JSON object per line on stdout as the run goes: plan, each trial, then the summary "
        "(docs/results-json.md); the human report is not printed",
    )
    parser.add_argument(
        "--bmf",
        metavar="FILE",
        help="also write Bencher Metric Format JSON: each row's median MiB/s and CPU s/GiB with their 95%% CIs "
        "(check: each row's and all rows' NEW/OLD with its interval)",
    )
    parser.add_argument(
        "--gab",
        metavar="FILE",
        help="also write github-action-benchmark JSON (tool: customBiggerIsBetter): each row's median MiB/s, its "
        "95%% CI as range and extra (check: NEW/OLD)",
    )


def parse_percentage(text: str, option: str, example: str, most: float, below: bool = False) -> float:
    """`5%` (or `5`, or `0.5%`) as a fraction, for `option` (`--tie`, `--threshold`); UsageError unless from 0 to
    `most` (`below`: strictly under it)."""
    number = text.strip().removesuffix("%").strip()
    try:
        value = float(number) / 100.0
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a percentage (e.g. {example})") from None
    if not (0.0 <= value < most if below else 0.0 <= value <= most) or value != value:
        raise UsageError(f"{option} {text!r}: must be from 0% to {'below ' if below else ''}{most:.0%}")
    return value

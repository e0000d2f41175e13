"""What several commands share: the `--db` option (declared here once) and writing an output file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console

from sshbench.errors import RunError

DB_HELP = "results database (default $SSHBENCH_DB, else $XDG_DATA_HOME/sshbench/results.db)"


def add_db_option(parser: argparse.ArgumentParser, help: str = DB_HELP) -> None:
    parser.add_argument("--db", metavar="PATH", help=help)


def write_output(text: str | bytes, path: str | None, out: Console) -> None:
    """To FILE atomically (temp file renamed into place), or to standard output."""
    if path is None:
        out.file.write(text if isinstance(text, str) else text.decode())
        out.file.flush()
        return
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text)
        tmp.replace(target)
    except OSError as err:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
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

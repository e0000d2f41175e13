"""Parsing and formatting of byte sizes."""

import re

from sshbench.errors import UsageError

MIB = 1024 * 1024
GIB = 1024 * MIB

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": MIB,
    "mb": 1000**2,
    "mib": MIB,
    "g": GIB,
    "gb": 1000**3,
    "gib": GIB,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """'64M' / '64MiB' / '1.5G' / '1000000' -> bytes. K/M/G alone are binary (as dd and head)."""
    match = _SIZE_RE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise UsageError(f"not a size: {text!r} (examples: 64M, 512MiB, 1G, 1000000)")
    try:
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    except (OverflowError, ValueError):  # '1' * 400: float is inf
        raise UsageError(f"not a size: {text[:20]!r}... is far too large") from None


def format_size(n_bytes: int) -> str:
    for unit, factor in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if n_bytes >= factor:
            value = n_bytes / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n_bytes} B"


def format_factor(value: float) -> str:
    """A ratio in three significant figures at most: `1.69`, `12.3`, `140` (a wide interval stays narrow)."""
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def format_rate(mib_s: float) -> str:
    """MiB/s in whole units from 100 on (`812`, `64.5`): the figures the answer and the compact table show."""
    return f"{mib_s:.0f}" if mib_s >= 100 else f"{mib_s:.1f}"

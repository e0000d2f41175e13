"""`--preset NAME` / `--seeds`: the seeds' own set-ups, so a user can hold their machine against the
published tables (../shared/seeds/). A preset fills in options the user did not give."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from sshbench.errors import UsageError


@dataclass(frozen=True)
class Preset:
    name: str
    what: str
    options: dict = field(default_factory=dict)  # argparse destinations -> values


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "seed000",
            "scp of a compressible source tar, every cipher, with and without compression (seed 000)",
            {"tool": "scp", "payload": "text", "compression": "both", "sink": "tmpfs", "ciphers": "all"},
        ),
        Preset(
            "seed001",
            "every cipher x MAC, random data through ssh, interleaved runs, medians, factor of the fastest (seed 001)",
            {"full": True, "tool": "pipe", "payload": "random", "runs": 5},
        ),
        Preset(
            "seed002",
            "scp of a zero-filled file to disk: 3des-cbc against the rest (seed 002)",
            {"tool": "scp", "payload": "zero", "sink": "disk", "ciphers": "all"},
        ),
        Preset(
            "seed004",
            "`cat file | ssh -c X host wc -c` per cipher with its CPU time (seed 004)",
            {"tool": "pipe", "payload": "random", "sink": "null", "ciphers": "all"},
        ),
    )
}

# What `--seeds` runs, one after the other: the scp table with compression and the cipher x MAC matrix.
SEEDS = ("seed000", "seed001")


def apply(args: argparse.Namespace, given: set[str], name: str) -> argparse.Namespace:
    """A copy of `args` with the preset's options wherever the user gave none (`given`: the typed ones)."""
    if name not in PRESETS:
        raise UsageError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    merged = argparse.Namespace(**vars(args))
    for dest, value in PRESETS[name].options.items():
        if dest not in given:
            setattr(merged, dest, value)
    return merged

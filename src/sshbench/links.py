"""Emulated link profiles (`--link`): the path between client and server.

`loopback` is the plain private sshd on 127.0.0.1. Other profiles need network namespaces and tc
(see docs/architecture.md); a run that asks for one on a build or machine without that support
gets one clear line.
"""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.errors import UsageError


@dataclass(frozen=True)
class LinkProfile:
    name: str
    rate_bit_s: int | None = None  # None: unshaped
    delay_ms: float = 0.0  # one-way
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    source: str = ""  # where the numbers come from


LOOPBACK = LinkProfile("loopback", source="127.0.0.1 on this machine: no network, no shaping")

LINKS: dict[str, LinkProfile] = {LOOPBACK.name: LOOPBACK}


def parse_links(spec: str) -> list[LinkProfile]:
    """A comma list of profile names (custom `key=value` profiles come with the links feature)."""
    out = []
    for name in (t.strip() for t in spec.split(",")):
        if not name:
            continue
        if name not in LINKS:
            raise UsageError(f"unknown link {name!r}; known: {', '.join(LINKS)}")
        out.append(LINKS[name])
    return out or [LOOPBACK]

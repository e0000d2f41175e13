"""Links: the profiles a run sweeps (`profiles`), the namespaces that carry an emulated one (`namespaces`),
its tc shaping (`shaping`), the path between client and server (`path`) and the delay relay (`relay`)."""

from __future__ import annotations

from sshbench.links.profiles import (
    LINKS,
    LOOPBACK,
    LinkProfile,
    custom_profile,
    parse_links,
    parse_rate,
    profile_named,
    rate_mbit_s,
)

__all__ = [
    "LINKS",
    "LOOPBACK",
    "LinkProfile",
    "custom_profile",
    "parse_links",
    "parse_rate",
    "profile_named",
    "rate_mbit_s",
]

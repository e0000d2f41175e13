"""Option lines (`Ciphers`, `MACs`, `KexAlgorithms`) that change what a client prefers without locking it out
of the servers it reaches today. Pure: the client's default lists and version come from the run's environment.

Under `Host *` a full list replaces the client's defaults: `KexAlgorithms sntrup761x25519-sha512@openssh.com`
alone (the only kex a default run measures) stops every server without it from accepting the connection.
OpenSSH's list prefixes avoid that (ssh_config(5), Ciphers/MACs/KexAlgorithms):

- `^a,b`  a and b first, the defaults kept after them (OpenSSH 8.1 and later: its release notes, "Allow
          prepending a list of algorithms to the default set by starting the list with the '^' character");
- `-x,y`  the defaults without x and y (OpenSSH 7.5 and later: "Support =- syntax to easily remove methods
          from algorithm lists");
- one option line carries one prefix, and ssh uses the first value it reads for an option: a line that both
  reorders and removes is written as the explicit list those two would give (the defaults, the fastest first,
  without what the policy removes), as is any line for a client too old for the prefix.

A full replacement list (only what was measured) is written for a specific Host that was measured, for
`sshd_config` (the server's order does not choose; the client's does), or when the user asks for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

PREFER_SINCE = (8, 1)
REMOVE_SINCE = (7, 5)


def openssh_version(banner: str | None) -> tuple[int, int] | None:
    """(major, minor) from `OpenSSH_9.2p1 Debian-2+deb12u10`; None for another client or no banner."""
    found = re.search(r"OpenSSH_(\d+)\.(\d+)", banner or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


@dataclass(frozen=True)
class OptionLine:
    option: str  # Ciphers | MACs | KexAlgorithms
    value: str  # as written: "^a,b", "-x,y" or "a,b,c"
    form: str  # "prefer" | "remove" | "list" (the defaults reordered/filtered, spelt out) | "replace"
    offered: list[str] | None  # what the client then offers, in order (None: its defaults are unknown)
    removed: list[str] = field(default_factory=list)  # defaults the policy takes out

    @property
    def text(self) -> str:
        return f"{self.option} {self.value}"

    def comment(self) -> str:
        """One phrase on what the line does to the client's defaults."""
        removed = f"; without {', '.join(self.removed)} (below the policy)" if self.removed else ""
        if self.form == "prefer":
            return "these first, your ssh's other defaults kept after them"
        if self.form == "remove":
            return f"your ssh's defaults{removed}"
        if self.form == "list":
            return f"your ssh's defaults with the fastest first{removed}, spelt out"
        return "exactly these (a full list replaces your ssh's defaults)"


def option_line(
    option: str,
    preferred: list[str],
    defaults: list[str] | None,
    allowed: Callable[[str], bool],
    version: tuple[int, int] | None,
    replace: bool = False,
) -> OptionLine | None:
    """The line that puts `preferred` (measured, allowed by the policy, fastest first) ahead of the client's
    `defaults` and drops the defaults `allowed` refuses; None when the defaults already are that list.
    `version`: the client's OpenSSH version (None: unknown, no prefix is assumed to work)."""
    if replace:
        return OptionLine(option, ",".join(preferred), "replace", list(preferred)) if preferred else None
    can_prefer = version is not None and version >= PREFER_SINCE
    can_remove = version is not None and version >= REMOVE_SINCE
    if defaults is None:  # a run stored before the defaults were recorded
        if not preferred:
            return None
        if can_prefer:
            return OptionLine(option, "^" + ",".join(preferred), "prefer", None)
        return OptionLine(option, ",".join(preferred), "replace", list(preferred))
    removed = [d for d in defaults if not allowed(d) and d not in preferred]
    kept = [d for d in defaults if d not in removed]
    if kept and kept[0] in preferred:
        # Nothing is reordered behind the client's own first choice: a server that offers it negotiates it, so that
        # order only picks among fallbacks, and it changed from run to run with undecided neighbours far below the
        # fastest group (1 in 5 default runs wrote `^aes128-gcm,aes256-gcm,chacha20-poly1305,aes256-ctr` where the
        # others wrote `^aes128-gcm,aes256-gcm`). With the first choice in the fastest group nothing is reordered.
        preferred = preferred[: preferred.index(kept[0])]
    offered = [*preferred, *(d for d in kept if d not in preferred)]
    if offered == defaults:
        return None
    if offered == [d for d in defaults if d not in removed] and can_remove:
        return OptionLine(option, "-" + ",".join(removed), "remove", offered, removed)
    if not removed and can_prefer:
        # The shortest head that gives the same order: `^a` rather than `^a,b` when b comes next anyway.
        for n in range(1, len(preferred) + 1):
            head = preferred[:n]
            if [*head, *(d for d in defaults if d not in head)] == offered:
                return OptionLine(option, "^" + ",".join(head), "prefer", offered)
    return OptionLine(option, ",".join(offered), "list", offered, removed)

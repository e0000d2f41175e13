"""How many streams a user needs (`run -P 1,2,4,...`), and what they can reach.

For each swept stream count N of one setting (everything but the stream count equal), the ceiling is the
smallest of:
- `raw-tcp`: the raw TCP control with N streams over the same link (the path itself);
- `streams`: N x the same setting's single-stream rate (streams that do not slow each other down);
- `cores`: what the cores allow, the smaller of two figures. Crypto: the cores the streams can use x one
  core's crypto rate for the combination (openssl speed); each byte is encrypted by the client and
  decrypted by the server, so where both run on this machine (a private server) N streams use at most
  min(N, cores / 2) cores' worth on each side; against a remote host, min(N, this machine's cores).
  Whole cost: this machine's cores / the CPU seconds per MiB one stream measured (client + server
  where both run here; the client's alone otherwise): copies, syscalls and the reader count too;
- `link`: the emulated link's rate (--link), in payload MiB/s.

The conclusion names the smallest N within 10% of the best aggregate, and why more streams do not help
(or, where the largest N is the best but stays short of its ceiling, what holds it back): the term that
binds at the largest N once it is reached; short of it, the cores when this machine's cores were busy
while its streams moved data (client, server and any other process: /proc/stat, `machine_busy_cores`), else
ssh itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sshbench.baselines import crypto_ceiling
from sshbench.links import profile_named
from sshbench.model.summary import Summary
from sshbench.results import Combination
from sshbench.units import MIB

ENOUGH_FRACTION = 0.90  # "within 10% of the best"
# Below this share of its ceiling, a setting is held back by something no term measures (ssh itself,
# contention between the streams' processes).
FAR_BELOW = 0.6
BUSY = 0.75  # ... unless the streams kept this share of the machine's cores busy: then it is the cores

WHY = {
    "cores": "the cores: every stream's crypto runs on the same {cores} cores",
    "link": "the link: its rate is the ceiling",
    "raw-tcp": "the path: raw TCP with as many streams is no faster",
    "streams": "each stream is already at its single-stream rate",
    "busy": "the cores: at -P {n} client and server used {used} of this machine's {cores} cores",
    "busy-machine": "the cores: at -P {n} this machine's {cores} cores were busy ({machine} of {cores}; {ours} "
    "{used}, everything else the rest)",
    "ssh": "not a ceiling measured here: at -P {n} the rate stays well below every one while client and server "
    "used {used} of {cores} cores (ssh's own overhead, or other load on the machine taking the rest)",
}


@dataclass
class StreamRow:
    streams: int
    mib_s: float | None
    terms: dict[str, float] = field(default_factory=dict)  # term -> MiB/s (only the known ones)
    cpu_cores: float | None = None  # CPU seconds per second the setting used (client + server where both run here)
    machine_cores: float | None = None  # this machine's busy cores meanwhile, every process (median of trials)

    @property
    def ceiling_mib_s(self) -> float | None:
        return min(self.terms.values()) if self.terms else None

    @property
    def limited_by(self) -> str | None:
        return min(self.terms, key=lambda k: self.terms[k]) if self.terms else None

    @property
    def of_ceiling(self) -> float | None:
        ceiling = self.ceiling_mib_s
        return self.mib_s / ceiling if self.mib_s and ceiling else None

    def to_json(self) -> dict:
        return {
            "streams": self.streams,
            "mib_s": self.mib_s,
            "ceiling_mib_s": self.ceiling_mib_s,
            "limited_by": self.limited_by,
            "of_ceiling": self.of_ceiling,
            "terms": self.terms,
            "cpu_cores": self.cpu_cores,
            "machine_cores": self.machine_cores,
        }


# The ceiling's term as the figures name it: "(82% of the cores' 1420)".
TERM_NAMES = {"raw-tcp": "raw TCP's", "streams": "{n} x one stream's", "cores": "the cores'", "link": "the link's"}
# Above its ceiling by more than this, the ceiling was an estimate that fell short (the cores': -P 1's CPU seconds
# per MiB, which read ~10% higher than -P 2's on a 2-core VM): said as such, not as "118% of 986".
ABOVE_ESTIMATE = 1.05


def _against_ceiling(r: StreamRow) -> str:
    """A stream count's rate against its ceiling, in words; nothing for one stream at its own rate (its only term
    that binds is itself: "100% of 953")."""
    share, ceiling, term = r.of_ceiling, r.ceiling_mib_s, r.limited_by
    if share is None or ceiling is None or term is None or (r.streams == 1 and term == "streams"):
        return ""
    name = TERM_NAMES.get(term, term).format(n=r.streams)
    if share > ABOVE_ESTIMATE:
        return f" (above {name} estimated {ceiling:.0f})"
    return f" ({share:.0%} of {name} {ceiling:.0f})"


@dataclass
class StreamSweep:
    """One setting swept over stream counts."""

    setting: Combination  # with streams=1
    rows: list[StreamRow]
    cores: int | None
    shares_machine: bool = True

    @property
    def best(self) -> StreamRow | None:
        measured = [r for r in self.rows if r.mib_s]
        return max(measured, key=lambda r: r.mib_s or 0.0) if measured else None

    @property
    def enough(self) -> StreamRow | None:
        """The fewest streams within 10% of the best aggregate."""
        best = self.best
        if best is None or not best.mib_s:
            return None
        return next(r for r in self.rows if r.mib_s and r.mib_s >= ENOUGH_FRACTION * best.mib_s)

    def busy(self, row: StreamRow) -> bool:
        """Whether this machine's cores were busy at `row`: by the streams' own processes (client and server
        both here), or by every process together (others' load takes cores from the streams all the same)."""
        if not self.cores:
            return False
        ours = self.shares_machine and (row.cpu_cores or 0.0) >= BUSY * self.cores
        return ours or (row.machine_cores or 0.0) >= BUSY * self.cores

    def why_no_more(self) -> str | None:
        """Why more streams than `enough` do not help, or what holds the largest N short of its ceiling: the
        binding term there once reached; short of it the cores when they were busy, else (far below) ssh."""
        last = next((r for r in reversed(self.rows) if r.mib_s), None)
        if last is None or last.limited_by is None:
            return None
        reason = last.limited_by
        short = (last.of_ceiling or 0.0) < ENOUGH_FRACTION
        if short and self.busy(last):
            reason = "busy" if last.machine_cores is None else "busy-machine"
        elif (last.of_ceiling or 0.0) < FAR_BELOW:
            reason = "ssh"
        machine = f"{last.machine_cores:.1f}" if last.machine_cores is not None else "?"
        return WHY[reason].format(
            cores=self.cores or "?",
            used=f"{last.cpu_cores or 0:.1f}",
            n=last.streams,
            machine=machine,
            ours="ssh client and server" if self.shares_machine else "the ssh client",
        )

    def conclusion(self) -> str | None:
        enough, best = self.enough, self.best
        if enough is None or best is None:
            return None
        head = f"{self.setting.label} ({self.setting.tool}, {self.setting.direction}, {self.setting.link}):"
        if len([r for r in self.rows if r.mib_s]) < 2:
            return None
        figures = ", ".join(f"-P {r.streams} {r.mib_s:.0f} MiB/s{_against_ceiling(r)}" for r in self.rows if r.mib_s)
        last = self.rows[-1]
        if enough.streams < last.streams:
            tail = f"; more do not help: {self.why_no_more()}"
        elif last.of_ceiling is not None and last.of_ceiling < ENOUGH_FRACTION:
            # the most streams measured are the best, yet short of their ceiling: scaling stops here too
            tail = f"; -P {last.streams} stops short of its ceiling: {self.why_no_more()}"
        else:
            tail = ""
        return f"{head} {figures}; -P {enough.streams} is within 10% of the best (-P {best.streams}){tail}"

    def to_json(self) -> dict:
        s = self.setting
        return {
            "cipher": s.cipher,
            "mac": s.mac,
            "kex": s.kex,
            "compression": s.compression,
            "tool": s.tool,
            "direction": s.direction,
            "sink": s.sink,
            "payload": s.payload,
            "server": s.server,
            "client": s.client,
            "link": s.link,
            "rows": [r.to_json() for r in self.rows],
            "best_streams": self.best.streams if self.best else None,
            "enough_streams": self.enough.streams if self.enough else None,
            "why_not_more": self.why_no_more(),
            "conclusion": self.conclusion(),
        }


def sweeps(
    summaries: list[Summary],
    raw_by_streams: dict[tuple[str, int], Summary],
    crypto_measured: dict[str, dict],
    cores: int | None,
    shares_machine: bool,
    machine_busy: dict[Combination, float] | None = None,
) -> list[StreamSweep]:
    """One StreamSweep per setting measured with more than one stream count (none without -P).
    `machine_busy`: per combination, this machine's busy cores while its streams moved data (median)."""
    groups: dict[Combination, dict[int, Summary]] = {}
    for s in summaries:
        groups.setdefault(replace(s.combination, streams=1), {})[s.combination.streams] = s
    out = []
    for setting, by_n in groups.items():
        if len(by_n) < 2:
            continue
        single = by_n.get(1)
        per_core, _ = crypto_ceiling.ceiling_for(setting, crypto_measured) if crypto_measured else (None, None)
        profile = profile_named(setting.link)
        link_rate = profile.rate_bit_s / 8 / MIB if profile is not None and profile.rate_bit_s else None
        rows = []
        for n in sorted(by_n):
            terms: dict[str, float] = {}
            raw = raw_by_streams.get((setting.link, n))
            if raw is not None and raw.median_mib_s:
                terms["raw-tcp"] = raw.median_mib_s
            if single is not None and single.median_mib_s:
                terms["streams"] = n * single.median_mib_s
            allowed = []
            if per_core and cores:
                allowed.append(min(n, cores / 2 if shares_machine else cores) * per_core)
            if cores and (cost := _cpu_s_per_mib(single, shares_machine)):
                allowed.append(cores / cost)
            if allowed:
                terms["cores"] = min(allowed)
            if link_rate:
                terms["link"] = link_rate
            cost = _cpu_s_per_mib(by_n[n], shares_machine)
            rate = by_n[n].median_mib_s
            rows.append(
                StreamRow(
                    streams=n,
                    mib_s=rate,
                    terms=terms,
                    cpu_cores=cost * rate if cost and rate else None,
                    machine_cores=(machine_busy or {}).get(by_n[n].combination),
                )
            )
        out.append(StreamSweep(setting=setting, rows=rows, cores=cores, shares_machine=shares_machine))
    return out


def _cpu_s_per_mib(s: Summary | None, shares_machine: bool) -> float | None:
    """CPU seconds per MiB moved: client + server where both run on this machine, else the client's."""
    if s is None or s.client_cpu_s_per_gib is None:
        return None
    per_gib = s.client_cpu_s_per_gib + ((s.server_cpu_s_per_gib or 0.0) if shares_machine else 0.0)
    return per_gib / 1024 if per_gib > 0 else None


__all__ = ["StreamRow", "StreamSweep", "sweeps"]

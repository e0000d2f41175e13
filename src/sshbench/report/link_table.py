"""Emulated links in the terminal report: each profile next to what it achieved (raw TCP rate and RTT
measured in the same run), the compression crossover, and the window limit in plain words.

Pure functions of a RunResult (report/table.py calls them); the JSON carries the same figures under
`baselines.links` (docs/results-json.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from sshbench.baselines.analysis import raw_tcp_by_link
from sshbench.compression import NO_COMPRESSION
from sshbench.links import profile_named
from sshbench.links.shaping import METHOD_PARTS, METHOD_SHORT
from sshbench.model import summary

MIB = 1024 * 1024
# A shaper that lets traffic through above its rate (seen once here with tbf) is worth a warning.
OVER_RATE_TOLERANCE = 1.10
UNDER_READ_TOLERANCE = 1.05
SEED_CROSSOVER = "seed 000 reported ~300 Mbit/s on its 2017 Xeon E5-2643 v3 (scp, Linux source tar)"


def _mbit(mib_s: float | None) -> float | None:
    return None if mib_s is None else mib_s * MIB * 8 / 1e6


def _raw_by_link(result: Any) -> dict:
    return raw_tcp_by_link(result.trials)


def _profile_text(d: dict) -> str:
    rate = d.get("rate_bit_s")
    parts = [f"{rate / 1e6:g} Mbit/s" if rate else "unshaped"]
    if d.get("delay_ms"):
        parts.append(f"{d['delay_ms']:g} ms")  # one-way: the column's header says so
    if d.get("jitter_ms"):
        parts.append(f"+-{d['jitter_ms']:g} ms")
    if d.get("loss_pct"):
        parts.append(f"{d['loss_pct']:g}% loss")
    return ", ".join(parts)


def links_table(result: Any) -> Table | None:
    links: dict = (result.baselines or {}).get("links") or {}
    if not links:
        return None
    raw = _raw_by_link(result)
    table = Table(
        title="Links (emulated between two network namespaces; achieved figures measured in this run)",
        title_justify="left",
    )
    for name, justify in (
        ("link", "left"),
        ("profile\n(one-way delay)", "left"),
        ("how", "left"),
        ("RTT ms", "right"),
        ("raw TCP\nMbit/s", "right"),
        ("of\nrate", "right"),
        ("window/RTT\nMiB/s", "right"),
        ("shaper\ndrops", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name, d in links.items():
        found = raw.get(name)
        achieved = _mbit(found.median_mib_s) if found else None
        rate = d.get("rate_bit_s")
        share = f"{achieved * 1e6 / rate:.0%}" if achieved and rate else "-"
        rtt = d.get("rtt_measured_ms")
        window = d.get("window_bytes")
        rtt_s = d.get("rtt_s")
        window_rate = f"{window / MIB / rtt_s:.1f}" if window and rtt_s else "-"
        counters = d.get("tc_counters") or {}
        table.add_row(
            name,
            _profile_text(d),
            METHOD_SHORT.get(d.get("method", ""), d.get("method", "-")),
            "-" if rtt is None else f"{rtt:.2f}",
            "-" if achieved is None else f"{achieved:.1f}",
            share,
            window_rate,
            str(counters.get("drops", "-")) if rate else "-",
        )
    return table


def method_legend(result: Any) -> str | None:
    """'how: tbf: tc tbf shapes the rate; relay: ...': the parts of the methods the Links table shows."""
    links: dict = (result.baselines or {}).get("links") or {}
    shown = [METHOD_SHORT.get(d.get("method", ""), "") for d in links.values()]
    parts = [part for part in METHOD_PARTS if any(part in (w.strip() for w in name.split("+")) for name in shown)]
    return "how: " + "; ".join(f"{part}: {METHOD_PARTS[part]}" for part in parts) if parts else None


def buffer_lines(result: Any) -> list[str]:
    """Where the link's sockets started with a receive buffer of their own (links.shaping.receive_buffer): one line
    saying so, as the number depends on it (HPN-SSH's window follows the socket's buffer)."""
    links: dict = (result.baselines or {}).get("links") or {}
    sized = {name: d["tcp_rmem_initial"] for name, d in links.items() if d.get("tcp_rmem_initial")}
    if not sized:
        return []
    each = ", ".join(f"{name} {value / 2**20:.3g} MiB" for name, value in sized.items())
    return [f"TCP receive buffers: {each} from the start, as a real path of its RTT grows them (the relay hides it)"]


@dataclass
class CrossoverPoint:
    link: str
    mbit_s: float
    plain_mib_s: float
    zlib_mib_s: float

    @property
    def ratio(self) -> float:
        return self.zlib_mib_s / self.plain_mib_s


def crossover_points(summaries: list) -> dict[str, list[CrossoverPoint]]:
    """Per payload kind, per shaped link: the fastest combination's median with and without compression."""
    best: dict[tuple[str, str, bool], float] = {}
    for s in summaries:
        c = s.combination
        profile = profile_named(c.link)
        if profile is None or profile.rate_bit_s is None or s.median_mib_s is None:
            continue
        key = (c.payload, c.link, c.compression != NO_COMPRESSION)
        best[key] = max(best.get(key, 0.0), s.median_mib_s)
    out: dict[str, list[CrossoverPoint]] = {}
    for (payload, link, zlib), _ in sorted(best.items()):
        if zlib or (payload, link, True) not in best:
            continue
        profile = profile_named(link)
        assert profile is not None and profile.rate_bit_s is not None
        out.setdefault(payload, []).append(
            CrossoverPoint(link, profile.rate_bit_s / 1e6, best[(payload, link, False)], best[(payload, link, True)])
        )
    for points in out.values():
        points.sort(key=lambda p: p.mbit_s)
    return out


def crossover_rate(points: list[CrossoverPoint]) -> float | None:
    """Where zlib/plain crosses 1 between the highest rate at which compression won and the next rate up
    at which it lost (log-log interpolation); None when it did not cross in the measured range."""
    for low, high in zip(points, points[1:]):
        if low.ratio > 1 >= high.ratio:
            a, b = math.log(low.ratio), math.log(high.ratio)
            x_low, x_high = math.log(low.mbit_s), math.log(high.mbit_s)
            return math.exp(x_low + (x_high - x_low) * a / (a - b)) if a != b else low.mbit_s
    return None


def crossover_lines(result: Any) -> list[str]:
    """One line per payload kind measured with and without compression over two or more shaped links."""
    lines = []
    for payload, points in crossover_points(summary.summaries(result)).items():
        if len(points) < 2:
            continue
        measured = "; ".join(f"{p.link} {p.mbit_s:g} Mbit/s: {p.ratio:.2f}x" for p in points)
        crossing = crossover_rate(points)
        if crossing is not None:
            head = f"compression paid off below ~{crossing:.0f} Mbit/s for payload {payload} on this CPU"
        elif all(p.ratio > 1 for p in points):
            head = f"compression paid off on every measured link for payload {payload} (up to {points[-1].mbit_s:g} Mbit/s)"
        elif all(p.ratio <= 1 for p in points):
            head = f"compression never paid off for payload {payload} (down to {points[0].mbit_s:g} Mbit/s)"
        else:
            head = f"compression won and lost irregularly for payload {payload} (no single crossover)"
        lines.append(f"{head} (zlib / none, fastest cipher each: {measured}); {SEED_CROSSOVER}")
    return lines


def window_lines(result: Any, comparisons: dict) -> list[str]:
    """Links with a delay: the bandwidth-delay product, and in plain words where the window is the limit."""
    links: dict = (result.baselines or {}).get("links") or {}
    lines = []
    for name, d in links.items():
        if not d.get("rtt_s"):
            continue
        bdp = d.get("bdp_bytes")
        window = d.get("window_bytes")
        bound = sorted(
            {
                c.combination.label
                for c in comparisons.values()
                if c.combination.link == name
                and not c.combination.remedy  # the user's rows: the remedies have a block of their own
                and c.verdict
                and c.verdict.bound_by == "window"
            }
        )
        text = (f"link {name}: bandwidth-delay product {bdp / 1024:.0f} KiB" if bdp else f"link {name}") + (
            f", SSH channel window {window / 1024:.0f} KiB" if window else ""
        )
        if bound:
            text += (
                f"; {', '.join(bound)} ran at the window / RTT limit: on this link the cipher does not matter, "
                "the window does"
            )
        elif bdp and window and bdp > window:
            text += "; the window is smaller than the BDP, so one SSH channel cannot fill this link"
        lines.append(text)
    return lines


def over_rate_warnings(result: Any) -> list[str]:
    links: dict = (result.baselines or {}).get("links") or {}
    raw = _raw_by_link(result)
    out = []
    for name, d in links.items():
        rate = d.get("rate_bit_s")
        found = raw.get(name)
        achieved = _mbit(found.max_mib_s) if found else None
        if rate and achieved and achieved * 1e6 > OVER_RATE_TOLERANCE * rate:
            out.append(
                f"link {name}: raw TCP reached {achieved:.0f} Mbit/s, above the profile's {rate / 1e6:g} "
                "Mbit/s: the shaper let traffic through above its rate; treat this link's numbers with care"
            )
    # ssh faster on the wire than plain TCP over the same link: the data phase was under-read (ssh sends
    # while the remote shell starts, which both the reader's clock and wall-minus-handshake leave out).
    for name in links:
        found = raw.get(name)
        if not found or not found.median_mib_s:
            continue
        wire = [
            s.median_mib_s * s.wire_ratio
            for s in summary.summaries(result)
            if s.combination.link == name and s.median_mib_s and s.wire_ratio
        ]
        if wire and max(wire) > UNDER_READ_TOLERANCE * found.median_mib_s:
            out.append(
                f"link {name}: ssh's wire rate read up to {max(wire) / found.median_mib_s - 1:.0%} above the "
                "raw TCP control over the same link: data sent while the remote shell starts overlaps the "
                "set-up both data clocks leave out; longer transfers (--seconds 3) shrink this"
            )
    return out

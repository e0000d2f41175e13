"""The conclusion of a run over several links (`--link A,B`): the answer per link, printed under the answer
(answer.py), like a build sweep's block (build_answer.py).

A link is a condition, not a choice: nobody picks the WAN over the LAN for its speed. So the run's one ranking,
which puts every loopback row above every wan100m row ("slowest: aes128-gcm (wan100m), 85.4x as long"), does
not say what to use on each link. Per link:

- the fastest row on that link (the best-ranked of its rows) with its rate;
- every other row of the link against it, by the paired ratio of their rounds (statistics.paired_ratio_ci; the
  links run in the same interleaved rounds): ordered behind it, tied (within --tie) or undecided;
- what limited that fastest row (the bottleneck verdict, baselines/analysis.py), and where the link is the limit
  and no row is ordered behind the fastest, that the choice of cipher does not matter on this link.

Pure (summaries, trials, the verdicts), like answer.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench import statistics as stats
from sshbench import summary
from sshbench.baselines import analysis as baseline_analysis
from sshbench.errors import SshbenchError
from sshbench.results import RunResult, shown_name, swept_setup
from sshbench.units import format_factor, format_rate

# Verdicts under which the link, not the algorithms, sets the rate (baselines/bottleneck.py).
LINK_BOUND = {"network": "the link's rate", "window": "the SSH channel window over this round-trip time"}


@dataclass
class LinkLine:
    """One link's answer."""

    link: str
    fastest: str  # its fastest row as the lines name it (other swept setup but the link)
    median_mib_s: float | None
    rows: int  # the link's rows, the fastest included
    behind: int = 0  # ordered behind the fastest (beyond --tie)
    tied: int = 0
    undecided: int = 0
    slowest: str | None = None  # the row ordered furthest behind, with its ratio
    slowest_ratio: float | None = None
    slowest_ci95: list[float] | None = None
    bound_by: str | None = None  # the fastest row's verdict (baselines/bottleneck.py)
    link_bound_rows: int = 0  # rows whose verdict is the link (LINK_BOUND)
    rates_mib_s: list[float] = field(default_factory=list)  # every row's median on this link

    @property
    def cipher_matters(self) -> bool | None:
        """True where a row was ordered behind the fastest; False where none was and the link set every row's
        rate (their verdicts: within 90% of raw TCP, or at the window / RTT); else None, not told."""
        if self.behind:
            return True
        if self.link_bound_rows == self.rows:
            return False
        return None

    def text(self) -> str:
        """The link's line (under it, `slowest_line` names the row furthest behind)."""
        rate = f" {format_rate(self.median_mib_s)} MiB/s" if self.median_mib_s else ""
        head = f"{self.link}: {self.fastest}{rate}"
        others = self.rows - 1
        if others == 0:
            return head + self._limit()
        if self.cipher_matters is False:  # the short sentence: what the user needs from this link
            low, high = (format_rate(rate) for rate in (min(self.rates_mib_s), max(self.rates_mib_s)))
            return (
                f"{self.link}: every row {low if low == high else f'{low}-{high}'} MiB/s, limited by "
                f"{LINK_BOUND.get(self.bound_by or '', 'the link')}: the algorithms do not matter here"
            )
        parts = []
        if self.behind:
            parts.append(f"ahead of the other {others}" if self.behind == others else f"ahead of {self.behind}")
        if self.tied:
            parts.append(f"tied with {self.tied}")
        if self.undecided:
            parts.append(f"not told apart from {self.undecided}")
        return head + ", " + ", ".join(parts) + self._limit()

    def slowest_line(self) -> str | None:
        if not (self.slowest and self.slowest_ratio):
            return None
        ci = self.slowest_ci95
        interval = f" ({format_factor(ci[0])}-{format_factor(ci[1])})" if ci else ""
        return f"slowest: {self.slowest}, {format_factor(self.slowest_ratio)}x{interval} as long"

    def _limit(self) -> str:
        """Only where the link is the limit: a CPU verdict per link is the table's `bound by` column (and the
        answer's "limited by" for the fastest row), and at 100 columns the line has no room for it."""
        return f"; limited by {LINK_BOUND[self.bound_by]}" if self.bound_by in LINK_BOUND else ""

    def to_json(self) -> dict:
        return {**self.__dict__, "cipher_matters": self.cipher_matters, "line": self.text()}  # lines: LinkAnswer's


@dataclass
class LinkAnswer:
    links: list[LinkLine]
    tie_margin: float

    def lines(self) -> list[str]:
        head = f"per link (each row against the fastest on its own link; tied: within ±{self.tie_margin:.0%}):"
        out = [head]
        for link in self.links:
            out.append(f"  {link.text()}")
            if (slowest := link.slowest_line()) is not None:
                out.append(f"    {slowest}")
        return out

    def to_json(self) -> dict:
        return {"tie_margin": self.tie_margin, "links": [link.to_json() for link in self.links], "lines": self.lines()}


def compute(result: RunResult) -> LinkAnswer | None:
    """None unless the run measured rows on two links or more (for the answer's client/server pair)."""
    return summary.cached(result, "link_answer", lambda: _compute(result))


def _compute(result: RunResult) -> LinkAnswer | None:
    rows = [s for s in summary.summaries(result) if s.median_mib_s is not None and s.rank is not None]
    if not rows:
        return None
    pair = summary.implementation_pair(rows[0].combination)  # the answer's pair (answer.py)
    rows = [s for s in rows if summary.implementation_pair(s.combination) == pair]
    links = list(dict.fromkeys(s.combination.link for s in rows))
    if len(links) < 2:
        return None
    try:  # the order the user gave them (an imported document's settings may not parse: then the ranking's)
        order = [p.name for p in result.settings.link_profiles()]
    except SshbenchError:
        order = []
    links.sort(key=lambda name: order.index(name) if name in order else len(order))
    setup = [name for name in swept_setup(s.combination for s in rows) if name != "link"]
    by_round = summary.rates_by_round(result.trials)
    verdicts = baseline_analysis.compare(result)
    tie = summary.tie_margin(result)
    answer = LinkAnswer(links=[], tie_margin=tie)
    for link in links:
        on_link = sorted(
            (s for s in rows if s.combination.link == link), key=lambda s: (s.rank or 10**6, -(s.median_mib_s or 0))
        )
        top = on_link[0]
        verdict = verdicts.get(top.combination)
        line = LinkLine(
            link=link,
            fastest=shown_name(top.combination, setup),
            median_mib_s=top.median_mib_s,
            rows=len(on_link),
            bound_by=verdict.verdict.bound_by if verdict is not None and verdict.verdict is not None else None,
            rates_mib_s=[s.median_mib_s for s in on_link if s.median_mib_s is not None],
            link_bound_rows=sum(
                1
                for s in on_link
                if (v := verdicts.get(s.combination)) is not None
                and v.verdict is not None
                and v.verdict.bound_by in LINK_BOUND
            ),
        )
        for other in on_link[1:]:
            a, b = by_round.get(top.combination), by_round.get(other.combination)
            if not a or not b:
                line.undecided += 1
                continue
            estimate = stats.paired_ratio_ci(a, b)  # above 1: the other takes that many times as long
            decision = stats.compare_pair(estimate, tie)
            if decision == "tied":
                line.tied += 1
            elif decision == "ordered" and estimate.ratio > 1:
                line.behind += 1
                if line.slowest_ratio is None or estimate.ratio > line.slowest_ratio:
                    line.slowest, line.slowest_ratio = shown_name(other.combination, setup), estimate.ratio
                    line.slowest_ci95 = [estimate.low, estimate.high]
            else:  # undecided, or (rarely) ordered ahead of the link's first: the ranking did not order them so
                line.undecided += 1
        answer.links.append(line)
    return answer


__all__ = ["LinkAnswer", "LinkLine", "compute"]

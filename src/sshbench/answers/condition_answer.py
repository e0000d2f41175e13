"""The conclusion of a run over several conditions (`--link A,B`, `--direction both`, `--payload random,text`,
`--sink null,disk`: results.AXES' `condition` axes): the answer for each, printed under the answer (answer.py),
like a build sweep's block (build_answer.py).

A condition is the user's situation, not a choice: nobody picks the WAN over the LAN, or downloads over uploads,
for its speed. So the run's one ranking, which puts every loopback row above every wan100m row ("slowest:
aes128-gcm (wan100m), 85.4x as long"), does not say what to use in each. Per condition (each combination of the
swept conditions' values):

- the fastest row there (the best-ranked of its rows) with its rate;
- every other row there against it, by the paired ratio of their rounds (intervals.paired_ratio_ci; every row
  runs in the same interleaved rounds): ordered behind it, tied (within --tie) or undecided;
- where something outside ssh set every row's rate (each row's bottleneck verdict, baselines/bottleneck.py: the
  link, the channel window over the RTT, the disk) and no row is ordered behind the fastest, that the algorithms
  do not matter there.

Pure (summaries, trials, the verdicts), like answer.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.baselines import analysis as baseline_analysis
from sshbench.errors import SshbenchError
from sshbench.model import intervals, summary
from sshbench.model import statistics as stats
from sshbench.naming import shown_name, swept_setup
from sshbench.results import AXES, Combination, RunResult
from sshbench.units import format_factor, format_rate

CONDITIONS = tuple(a.name for a in AXES if a.condition)
# Verdicts under which something outside ssh sets the rate (baselines/bottleneck.py), in the lines' words.
OUTSIDE_BOUND = {
    "network": "the link's rate",
    "window": "the SSH channel window over this round-trip time",
    "disk": "the disk",
}


@dataclass
class ConditionLine:
    """One condition's answer."""

    condition: str  # its values, as the rows' setup names them: "wan100m", "down", "wan100m/down"
    fastest: str  # its fastest row as the lines name it (any other swept setup but the conditions)
    median_mib_s: float | None
    rows: int  # the condition's rows, the fastest included
    behind: int = 0  # ordered behind the fastest (beyond --tie)
    tied: int = 0
    undecided: int = 0
    slowest: str | None = None  # the row ordered furthest behind, with its ratio
    slowest_ratio: float | None = None
    slowest_ci95: list[float] | None = None
    bound_by: str | None = None  # the fastest row's verdict (baselines/bottleneck.py)
    outside_bound_rows: int = 0  # rows whose verdict is outside ssh (OUTSIDE_BOUND)
    rates_mib_s: list[float] = field(default_factory=list)  # every row's median here

    @property
    def algorithms_matter(self) -> bool | None:
        """True where a row was ordered behind the fastest; False where none was and something outside ssh set
        every row's rate (the link, the window, the disk); else None, not told."""
        if self.behind:
            return True
        if self.outside_bound_rows == self.rows:
            return False
        return None

    def text(self) -> str:
        """The condition's line (under it, `slowest_line` names the row furthest behind)."""
        rate = f" {format_rate(self.median_mib_s)} MiB/s" if self.median_mib_s else ""
        head = f"{self.condition}: {self.fastest}{rate}"
        others = self.rows - 1
        if others == 0:
            return head + self._limit()
        if self.algorithms_matter is False:  # the short sentence: what the user needs here
            low, high = (format_rate(rate) for rate in (min(self.rates_mib_s), max(self.rates_mib_s)))
            return (
                f"{self.condition}: every row {low if low == high else f'{low}-{high}'} MiB/s, limited by "
                f"{OUTSIDE_BOUND.get(self.bound_by or '', 'something outside ssh')}: the algorithms do not matter here"
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
        """Only where the limit is outside ssh: a CPU verdict per condition is the table's `bound by` column (and
        the answer's "limited by" for the fastest row), and at 100 columns the line has no room for it."""
        return f"; limited by {OUTSIDE_BOUND[self.bound_by]}" if self.bound_by in OUTSIDE_BOUND else ""

    def to_json(self) -> dict:
        return {**self.__dict__, "algorithms_matter": self.algorithms_matter, "line": self.text()}


@dataclass
class ConditionAnswer:
    axes: list[str]  # the swept conditions, in AXES order: ["link"], ["direction"], ["link", "direction"]
    conditions: list[ConditionLine]
    tie_margin: float

    def lines(self) -> list[str]:
        words = " and ".join(self.axes)
        head = f"per {words} (each row against the fastest with the same {words}; tied: within ±{self.tie_margin:.0%}):"
        out = [head]
        for line in self.conditions:
            out.append(f"  {line.text()}")
            if (slowest := line.slowest_line()) is not None:
                out.append(f"    {slowest}")
        return out

    def to_json(self) -> dict:
        return {
            "axes": self.axes,
            "tie_margin": self.tie_margin,
            "conditions": [c.to_json() for c in self.conditions],
            "lines": self.lines(),
        }


def swept_conditions(combinations: list[Combination]) -> list[str]:
    """The condition axes whose values differ between these rows (AXES order)."""
    return [name for name in swept_setup(combinations) if name in CONDITIONS]


def compute(result: RunResult) -> ConditionAnswer | None:
    """None unless the run swept a condition (for the answer's client/server pair)."""
    return summary.cached(result, "condition_answer", lambda: _compute(result))


def _given_order(result: RunResult) -> dict[str, list[str]]:
    """Each condition's values in the order the user gave them (the links, the payloads); an imported document's
    settings may not parse: then the ranking's order."""
    settings = result.settings
    order: dict[str, list[str]] = {"direction": ["up", "down"]}
    try:
        order["link"] = [p.name for p in settings.link_profiles()]
    except SshbenchError:
        pass
    order["payload"] = [v.strip() for v in str(settings.payload).split(",")]
    order["sink"] = [v.strip() for v in str(settings.sink).split(",")]
    return order


def _compute(result: RunResult) -> ConditionAnswer | None:
    rows = [s for s in summary.summaries(result) if s.median_mib_s is not None and s.rank is not None]
    if not rows:
        return None
    pair = summary.implementation_pair(rows[0].combination)  # the answer's pair (answer.py)
    rows = [s for s in rows if summary.implementation_pair(s.combination) == pair]
    axes = swept_conditions([s.combination for s in rows])
    if not axes:
        return None
    order = _given_order(result)

    def key(c: Combination) -> tuple:
        values = [getattr(c, a) for a in axes]
        return tuple(
            order[a].index(v) if v in order.get(a, []) else len(order.get(a, [])) for a, v in zip(axes, values)
        )

    groups: dict[tuple, list[summary.Summary]] = {}
    for s in rows:
        groups.setdefault(tuple(getattr(s.combination, a) for a in axes), []).append(s)
    setup = [name for name in swept_setup(s.combination for s in rows) if name not in axes]
    by_round = summary.rates_by_round(result.trials)
    verdicts = baseline_analysis.compare(result)
    tie = summary.tie_margin(result)
    answer = ConditionAnswer(axes=axes, conditions=[], tie_margin=tie)

    def bound(s: summary.Summary) -> str | None:
        v = verdicts.get(s.combination)
        return v.verdict.bound_by if v is not None and v.verdict is not None else None

    for values in sorted(groups, key=lambda v: key(groups[v][0].combination)):
        here = sorted(groups[values], key=lambda s: (s.rank or 10**6, -(s.median_mib_s or 0)))
        top = here[0]
        line = ConditionLine(
            condition=top.combination.setup_label(axes),
            fastest=shown_name(top.combination, setup),
            median_mib_s=top.median_mib_s,
            rows=len(here),
            bound_by=bound(top),
            outside_bound_rows=sum(1 for s in here if bound(s) in OUTSIDE_BOUND),
            rates_mib_s=[s.median_mib_s for s in here if s.median_mib_s is not None],
        )
        for other in here[1:]:
            a, b = by_round.get(top.combination), by_round.get(other.combination)
            if not a or not b:
                line.undecided += 1
                continue
            estimate = intervals.paired_ratio_ci(a, b)  # above 1: the other takes that many times as long
            decision = stats.compare_pair(estimate, tie)
            if decision == "tied":
                line.tied += 1
            elif decision == "ordered" and estimate.ratio > 1:
                line.behind += 1
                if line.slowest_ratio is None or estimate.ratio > line.slowest_ratio:
                    line.slowest, line.slowest_ratio = shown_name(other.combination, setup), estimate.ratio
                    line.slowest_ci95 = [estimate.low, estimate.high]
            else:  # undecided, or (rarely) ordered ahead of its fastest: the ranking did not order them so
                line.undecided += 1
        answer.conditions.append(line)
    return answer


__all__ = ["CONDITIONS", "ConditionAnswer", "ConditionLine", "compute", "swept_conditions"]

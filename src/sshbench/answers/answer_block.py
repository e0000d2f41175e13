"""What the run's answer says (answer.py computes it): the combinations it names (Pick), and the Answer with its
plain text block (`Answer.lines()`: terminal, Markdown, HTML and the JSON's `answer.lines` print it) and the JSON's
`answer` object (`Answer.to_json()`, docs/results-json.md). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sshbench.baselines.bottleneck import LIMITS
from sshbench.model.disturbed import DisturbedRound, disturbed_line
from sshbench.model.factor_ranking import FactorAnswer, FactorGroups
from sshbench.model.summary import Summary
from sshbench.naming import swept_setup
from sshbench.results import IMPLICIT_MAC, Combination, short_name
from sshbench.units import format_factor, format_rate

POLICY = "compatible"  # the conclusion's policy: `recommend --policy` gives the others
MOST_NAMED = 3  # a fastest group larger than this is counted in the headline, not named


def own_rows_setup(combinations: Iterable[Combination]) -> list[str]:
    """swept_setup over the user's own rows (a remedy row, measure.remedies, is no part of their setup), and
    "builds" where they all share one pairing (--remedies' HPN-SSH sweep): lines then name neither."""
    own = [c for c in combinations if not c.remedy]
    shared = {c.builds for c in own}
    return swept_setup(own) + (["builds"] if len(shared) == 1 and shared != {""} else [])


@dataclass
class Pick:
    """One combination the answer names, with its figures from the summaries."""

    cipher: str
    mac: str
    kex: str
    median_mib_s: float | None
    ci95_mib_s: list[float] | None
    rank_label: str | None
    relative_to_fastest: float | None
    relative_to_fastest_ci95: list[float] | None
    # The row's tool, direction, ... where the run swept them ("scp/up"; Combination.setup_label), else "": without
    # it a run over two tools named its slowest row "aes128-gcm", like its fastest.
    setup: str = ""
    kex_shown: bool = False  # named with its kex: another pick in the same line reads the same without it

    @classmethod
    def of(cls, s: Summary, setup_fields: list[str] | None = None) -> Pick:
        c = s.combination
        return cls(
            c.cipher,
            c.mac,
            c.kex,
            s.median_mib_s,
            s.ci95_mib_s,
            s.rank_label,
            s.relative_to_fastest,
            s.relative_to_fastest_ci95,
            c.setup_label(setup_fields) if setup_fields else "",
        )

    @property
    def name(self) -> str:
        algorithms = self.cipher if self.mac == IMPLICIT_MAC else f"{self.cipher} + {self.mac}"
        named = [self.setup] if self.setup else []
        if self.kex_shown:
            named.append(f"kex {short_name(self.kex)}")
        return f"{algorithms} ({', '.join(named)})" if named else algorithms

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "kex_shown"}


def kex_apart(picks: list[Pick]) -> list[Pick]:
    """Name the kex of picks that would read the same (naming.shown_apart, for the headline's group)."""
    names = [p.name for p in picks]
    for p, name in zip(picks, names, strict=True):
        p.kex_shown = names.count(name) > 1
    return picks


@dataclass
class Answer:
    fastest: list[Pick]  # ranked 1 (several when tied)
    tie_margin: float
    # The rest of the fastest group (summary.Summary.group 0), in two: the rows decided tied with the first (within the
    # tie margin: "equivalent"), and the rows the run only could not tell apart from it (absence of evidence: they
    # never move the config lines). With them the headline names the group in your ssh's own order, as the lines do.
    equivalent: list[Pick] = field(default_factory=list)
    not_told_apart: list[Pick] = field(default_factory=list)
    top_group: list[Pick] = field(default_factory=list)  # the fastest group, in the stated order
    default: Pick | None = None  # None: not measured (--no-baselines, or the defaults unknown)
    default_note: str | None = None  # why there is no default figure
    slowest: Pick | None = None  # named when it takes SLOW_REMARK times as long or more
    bound_by: str | None = None
    bound_by_evidence: str | None = None
    bound_by_explanation: str | None = None
    bound_by_method: str = "utilisation"  # "experiment": from the --why throttles (baselines/sensitivity.py)
    bound_by_title: str | None = None  # the experiment's verdict in words ("the link's rate", "partly ...")
    bound_by_skipped: str | None = None  # why the --why experiment did not run (an inferred verdict says so)
    policy: str = POLICY
    config: list[str] = field(default_factory=list)  # option lines for ~/.ssh/config (Host *)
    config_comments: list[str] = field(default_factory=list)  # one per line: what it does to the defaults
    config_note: str | None = None  # nothing to change, the fastest not allowed, no set allowed
    config_checked: str | None = None  # recorded by `run` after one real connection with the lines
    # Per option line ("Ciphers"): {"decided": bool, "why": what was not decided and what would decide it, or None}:
    # whether the line changes what ssh picks on decided evidence (answer._config_status). A line not here changes
    # nothing ssh picks on speed (a policy's removals, your default kept first).
    config_status: dict[str, dict] = field(default_factory=dict)
    undecided: list[dict] = field(default_factory=list)
    advice: str | None = None  # what to run for a decision
    pair: tuple[str, str] = ("openssh", "openssh")
    factors: FactorAnswer | None = None  # a cipher x MAC run: the fastest cipher and MAC by factor
    disturbed: list[DisturbedRound] = field(default_factory=list)  # rounds other processes' CPU disturbed
    # this run against the store's earlier runs of its set-up (answers/agreement.py): its verdict, then its ratios
    earlier_runs: list[str] = field(default_factory=list)

    def _is_default(self, picks: list[Pick]) -> bool:
        d = self.default
        return d is not None and any((p.cipher, p.mac, p.kex) == (d.cipher, d.mac, d.kex) for p in picks)

    @property
    def default_is_fastest(self) -> bool:
        """Your ssh's default is in the fastest group: ranked first or decided tied with the first row, or not told
        apart from it with its median within the tie margin (it then keeps its place: absence of evidence)."""
        if self._is_default([*self.fastest, *self.equivalent]):
            return True
        ratio = self.default.relative_to_fastest if self.default is not None else None
        return self._is_default(self.not_told_apart) and ratio is not None and ratio <= 1 + self.tie_margin

    def _only_first_named(self) -> bool:
        """A run that ordered little: the headline names the first row and a count, not its whole group."""
        return bool(self.equivalent or self.not_told_apart) and len(self.top_group or self.fastest) > MOST_NAMED

    def headline(self) -> str:
        group = self.top_group or self.fastest
        if self._only_first_named():
            others = len(group) - 1
            names = f"{self.fastest[0].name}, not told apart from {others} other row(s)"
            group = self.fastest[:1]
        elif self.not_told_apart:  # the group in the stated order, the same run after run; a decided tie is named so
            names = " or ".join(p.name for p in group) + " (not told apart)"
        elif self.equivalent:  # decided tied: within the tie margin
            names = " or ".join(p.name for p in group) + f" (equivalent here: tied within {self.tie_margin:.0%})"
        else:
            names = " = ".join(p.name for p in group) or "-"
            if len(group) > 1:
                names += f" (tied within {self.tie_margin:.0%})"
        rates = [p.median_mib_s for p in group if p.median_mib_s]
        rate = ""
        if len(rates) > 1:
            low, high = format_rate(min(rates)), format_rate(max(rates))
            rate = f", {low} MiB/s" if low == high else f", {low}-{high} MiB/s"
        elif rates and (top := group[0]).median_mib_s:
            rate = f", {format_rate(rates[0])} MiB/s"
            if top.ci95_mib_s:
                half = (top.ci95_mib_s[1] - top.ci95_mib_s[0]) / 2 / rates[0]
                rate += f" ±{half:.0%}"
        where = "" if self.pair == ("openssh", "openssh") else f" ({self.pair[0]} client, {self.pair[1]} server)"
        return f"Fastest here{where}: {names}{rate}"

    def lines(self) -> list[str]:
        """The conclusion block as plain text, a few lines, most important first."""
        out = [self.headline()]
        default = self._default_line()
        if default:
            out.append("  " + default)
        if self.slowest is not None and self.slowest.relative_to_fastest:
            out.append(f"  slowest: {self.slowest.name}, {format_factor(self.slowest.relative_to_fastest)}x as long")
        if self.factors is not None:
            out += factor_lines(self.factors)
        if self.bound_by and self.bound_by_method == "experiment":
            out.append(f"  limited by (by experiment): {self.bound_by_title or self.bound_by}")
            if self.bound_by_evidence:
                out.append(f"    {self.bound_by_evidence}")
            if self.bound_by_explanation:
                out.append(f"    {self.bound_by_explanation}")
        elif self.bound_by:  # the evidence on a line of its own: the block's lines fit 100 columns
            out.append(f"  limited by: {LIMITS.get(self.bound_by, self.bound_by)} (inferred from utilisation)")
            if self.bound_by_evidence:
                out.append(f"    {self.bound_by_evidence}")
            if self.bound_by_skipped:  # --full: "--budget has no room for it after the minimum rounds (...)"
                out.append(f"    no experiment: {self.bound_by_skipped}")
        if self.config:
            out.append(f"  for ~/.ssh/config (Host *; policy {self.policy}; `sshbench recommend` for others):")
            out += [f"    {line}" for line in self.config]
            if (order := self._order_note()) is not None:
                out.append(f"  {order}")
            for status in self.config_status.values():  # a line not decided says so here, never by its absence
                if not status["decided"]:  # "not decided: <pair>, <ratio>; <what would decide it>": 100 columns
                    head, _, rest = status["why"].partition("; ")
                    out += [f"    {head}", *([f"      {rest}"] if rest else [])]
            if self.config_checked:  # `run`'s connection with exactly these lines
                out.append(f"  {self.config_checked}")
        if self.config_note:
            out.append(f"  {self.config_note}")
        if self.advice:  # "undecided: <pairs>; <what would decide>": two lines, to fit 100 columns
            head, _, rest = self.advice.partition("; ")
            out += [f"  {head}", *([f"    {rest}"] if rest else [])]
        out += [f"  {line}" if i == 0 else f"    {line}" for i, line in enumerate(self.earlier_runs)]
        if (disturbed := disturbed_line(self.disturbed)) is not None:
            out.append(f"  {disturbed}")
        return out

    def _order_note(self) -> str | None:
        """Why the Ciphers line does not start with the headline's cipher: inside a group the run could not order,
        the lines keep your ssh's own order (security.policy.build), so a noisy `--full` named aes128-gcm fastest and
        put aes128-ctr first on the line; said only then. A headline that names the whole group names it in that
        same order (aes128-gcm or aes256-gcm, whichever ranked first)."""
        line = next((c for c in self.config if c.startswith("Ciphers ")), None)
        if line is None or not self.fastest or not self._only_first_named():
            return None
        names = line.split(None, 1)[1].lstrip("^+-").split(",")
        if names[0] == self.fastest[0].cipher or self.fastest[0].cipher not in names:  # first, or left out (policy)
            return None
        return "the ciphers the run did not tell apart from the fastest come in your ssh's own order"

    def _default_line(self) -> str | None:
        if self.default is None:
            return self.default_note
        d = self.default
        kex = "" if not self.fastest or d.kex == self.fastest[0].kex else f", kex {d.kex}"
        what = f"your ssh's default ({d.name}{kex})"
        ratio, ci = d.relative_to_fastest, d.relative_to_fastest_ci95
        ranked_first = any((p.cipher, p.mac, p.kex) == (d.cipher, d.mac, d.kex) for p in self.fastest)
        interval = f" ({format_factor(ci[0])}-{format_factor(ci[1])})" if ci and ci != [1.0, 1.0] else ""
        if ranked_first:
            line = f"{what} is the fastest: configuring buys nothing measurable here"
        elif self._is_default(self.equivalent):  # the shorter sentence: the line fits 100 columns
            line = f"{what} is among the fastest (tied): no change needed"
        elif self.default_is_fastest:  # not told apart, its median within the tie margin: it keeps its place
            line = f"{what}: {format_factor(ratio or 1.0)}x{interval}, not told apart: no change"
        elif ratio is not None and (self._is_default(self.not_told_apart) or (ci is not None and ci[0] <= 1.0)):
            # Not decided, and an interval down to 1 or below is no "takes N x as long": a noisy 3-round --full grouped
            # chacha20 at 1.41x (0.72-2.76) with the first row, and another run printed "takes 1.73x (0.70-4.23)".
            line = f"{what}: {format_factor(ratio)}x{interval} as long, not decided"
        elif ratio is not None:
            line = f"{what} takes {format_factor(ratio)}x{interval} as long"
        else:
            line = f"{what}: no valid trial"
        return line

    def to_json(self) -> dict:
        return {
            "fastest": [p.to_json() for p in self.fastest],
            "equivalent": [p.to_json() for p in self.equivalent],
            "not_told_apart": [p.to_json() for p in self.not_told_apart],
            "tied": len(self.fastest) > 1,
            "tie_margin": self.tie_margin,
            "default": None
            if self.default is None
            else {**self.default.to_json(), "is_fastest": self.default_is_fastest},
            "default_note": self.default_note,
            "slowest": None if self.slowest is None else self.slowest.to_json(),
            "bound_by": None
            if self.bound_by is None
            else {
                "verdict": self.bound_by,
                "evidence": self.bound_by_evidence,
                "explanation": self.bound_by_explanation,
                "method": self.bound_by_method,
            },
            "config": "\n".join(self.config) if self.config else None,
            "config_note": self.config_note,
            "config_checked": self.config_checked,
            "config_status": self.config_status,
            "policy": self.policy,
            "undecided": self.undecided,
            "advice": self.advice,
            "factors": None if self.factors is None else self.factors.to_json(),
            "disturbed": [r.to_json() for r in self.disturbed],
            "earlier_runs": self.earlier_runs,
            "lines": self.lines(),
        }


def factor_lines(factors: FactorAnswer) -> list[str]:
    """The answer by factor (model/factor_ranking.py), each line within 100 columns."""
    out = [
        f"  by factor (each cipher over all its MACs, each MAC over all ciphers; {factors.rows} rows x "
        f"{factors.rounds} rounds):",
        f"    ciphers: {_group_line(factors.ciphers, 100 - 13)}",
        f"    MACs: {_group_line(factors.macs, 100 - 10)}",
    ]
    notes = []
    if factors.aead:
        notes.append(f"AEAD ciphers placed with the fastest MAC, {short_name(factors.reference_mac)}")
    if factors.interacts:
        notes.append(f"cipher x MAC interact (p = {factors.interaction.p:.2g}): a cipher's figure is its MACs' average")
    out += [f"    {note}" for note in notes]
    return out


def _group_line(levels: FactorGroups, width: int) -> str:
    """'aes128-gcm or aes256-gcm, then aes128-ctr: 1.27x (1.20-1.35) as long' (the first group, its edge), naming
    fewer of the group where the line would pass `width` columns."""
    first = [short_name(name) for name in levels.groups[0]]
    edge = ""
    if levels.edge is not None:
        e, slower = levels.edge, short_name(levels.groups[1][0])
        edge = f", then {slower}: {format_factor(e.ratio)}x ({format_factor(e.low)}-{format_factor(e.high)}) as long"
    elif len(first) > 1:
        edge = ": none told apart"
    for named in range(min(MOST_NAMED, len(first)), 0, -1):
        names = " or ".join(first[:named]) + (f" (+{len(first) - named})" if len(first) > named else "")
        if len(names + edge) <= width:
            break
    return names + edge

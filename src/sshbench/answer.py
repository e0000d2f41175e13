"""The run's answer, printed first (issue 13): the fastest combination (with its ties), what a connection with
no options gets here ("your ssh's default") and how much longer it takes, what limited the fastest, the
config lines that apply it, and, when the run could not decide, what to run to decide.

Pure: every figure is read from the run's summaries (summary.py), the bottleneck verdicts
(baselines/analysis.py) and the policy machinery `sshbench recommend` uses (security/policy.py), so the
answer, the table and the JSON always agree. `compute()` gives an `Answer`; `Answer.lines()` the plain text
block (terminal, Markdown, HTML and the JSON's `answer.lines` print it); `Answer.to_json()` the JSON's
`answer` object (docs/results-json.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sshbench import statistics as stats
from sshbench import summary
from sshbench.baselines import analysis as baseline_analysis
from sshbench.baselines import sensitivity
from sshbench.baselines.bottleneck import LIMITS
from sshbench.errors import SshbenchError
from sshbench.results import AXES, IMPLICIT_MAC, Combination, RunResult, short_name, shown_apart, swept_setup
from sshbench.security import policy as policies
from sshbench.summary import Summary
from sshbench.units import format_factor, format_rate

POLICY = "compatible"  # the conclusion's policy: `recommend --policy` gives the others
SLOW_REMARK = 2.0  # the slowest row is named when it takes at least this many times as long as the fastest
MOST_NAMED = 3  # a fastest group larger than this is counted in the headline, not named
CHECKED_KEY = "conclusion_config_checked"  # environment: what `run`'s check of the config lines said
CHECKED_LINES_KEY = "conclusion_config_checked_lines"  # environment: the lines that check connected with


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


def _kex_apart(picks: list[Pick]) -> list[Pick]:
    """Name the kex of picks that would read the same (results.shown_apart, for the headline's group)."""
    names = [p.name for p in picks]
    for p, name in zip(picks, names, strict=True):
        p.kex_shown = names.count(name) > 1
    return picks


@dataclass
class Answer:
    fastest: list[Pick]  # ranked 1 (several when tied)
    tie_margin: float
    # The rest of the fastest group: rows the run could not order against the fastest (summary.Summary.group 0).
    # With them the headline names the group in your ssh's own order, as the config lines do.
    equivalent: list[Pick] = field(default_factory=list)
    top_group: list[Pick] = field(default_factory=list)  # fastest + equivalent, in the stated order
    default: Pick | None = None  # None: not measured (--no-baselines, or the defaults unknown)
    default_note: str | None = None  # why there is no default figure
    slowest: Pick | None = None  # named when it takes SLOW_REMARK times as long or more
    bound_by: str | None = None
    bound_by_evidence: str | None = None
    bound_by_explanation: str | None = None
    bound_by_method: str = "utilisation"  # "experiment": from the --why throttles (baselines/sensitivity.py)
    bound_by_title: str | None = None  # the experiment's verdict in words ("the link's rate", "partly ...")
    policy: str = POLICY
    config: list[str] = field(default_factory=list)  # option lines for ~/.ssh/config (Host *)
    config_comments: list[str] = field(default_factory=list)  # one per line: what it does to the defaults
    config_note: str | None = None  # nothing to change, the fastest not allowed, no set allowed
    config_checked: str | None = None  # recorded by `run` after one real connection with the lines
    undecided: list[dict] = field(default_factory=list)
    advice: str | None = None  # what to run for a decision
    pair: tuple[str, str] = ("openssh", "openssh")

    @property
    def default_is_fastest(self) -> bool:
        """Your ssh's default is in the fastest group (ranked 1, tied with it, or not told apart from it)."""
        return self.default is not None and any(
            (p.cipher, p.mac, p.kex) == (self.default.cipher, self.default.mac, self.default.kex)
            for p in [*self.fastest, *self.equivalent]
        )

    def _only_first_named(self) -> bool:
        """A run that ordered little: the headline names the first row and a count, not its whole group."""
        return bool(self.equivalent) and len(self.top_group or self.fastest) > MOST_NAMED

    def headline(self) -> str:
        group = self.top_group or self.fastest
        if self._only_first_named():
            others = len(group) - 1
            names = f"{self.fastest[0].name}, not told apart from {others} other row(s)"
            group = self.fastest[:1]
        elif self.equivalent:  # not told apart: the group in the stated order, the same run after run
            names = " or ".join(p.name for p in group) + " (equivalent here)"
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
        if self.config:
            out.append(f"  for ~/.ssh/config (Host *; policy {self.policy}; `sshbench recommend` for others):")
            out += [f"    {line}" for line in self.config]
            if (order := self._order_note()) is not None:
                out.append(f"  {order}")
            if self.config_checked:  # `run`'s connection with exactly these lines
                out.append(f"  {self.config_checked}")
        if self.config_note:
            out.append(f"  {self.config_note}")
        if self.advice:  # "undecided: <pairs>; <what would decide>": two lines, to fit 100 columns
            head, _, rest = self.advice.partition("; ")
            out += [f"  {head}", *([f"    {rest}"] if rest else [])]
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
        if self.default_is_fastest and not ranked_first and ratio is not None and ratio > 1 + self.tie_margin:
            # Only not told apart, its median well behind: a noisy 3-round --full grouped chacha20-poly1305 at 1.41x
            # (0.72-2.76) with the first row, and "among the fastest: no change needed" hid the 1.41.
            interval = f" ({format_factor(ci[0])}-{format_factor(ci[1])})" if ci else ""
            line = f"{what}: {format_factor(ratio)}x{interval} as long, not told apart"
        elif self.default_is_fastest:
            if self.equivalent:  # the shorter sentence: the line fits 100 columns with the longest default name
                line = f"{what} is among the fastest: no change needed"
            else:
                line = f"{what} is the fastest: configuring buys nothing measurable here"
        elif ratio is not None:
            interval = f" ({format_factor(ci[0])}-{format_factor(ci[1])})" if ci and ci != [1.0, 1.0] else ""
            line = f"{what} takes {format_factor(ratio)}x{interval} as long"
        else:
            line = f"{what}: no valid trial"
        return line

    def to_json(self) -> dict:
        return {
            "fastest": [p.to_json() for p in self.fastest],
            "equivalent": [p.to_json() for p in self.equivalent],
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
            "policy": self.policy,
            "undecided": self.undecided,
            "advice": self.advice,
            "lines": self.lines(),
        }


def compute(result: RunResult) -> Answer | None:
    """The answer for the run's first client/server pair (OpenSSH's own first); None without a valid row."""
    return summary.cached(result, "answer", lambda: _compute(result))


def _compute(result: RunResult) -> Answer | None:
    rows = [s for s in summary.summaries(result) if s.median_mib_s is not None and s.rank is not None]
    if not rows:
        return None
    pair = summary.implementation_pair(rows[0].combination)  # summaries put OpenSSH's own pair first
    rows = [s for s in rows if summary.implementation_pair(s.combination) == pair]
    best = min(s.rank or 0 for s in rows)
    fastest = [s for s in rows if s.rank == best]
    top = [s for s in rows if s.group == rows[0].group]
    stated = policies.group_order(rows, "cipher", policies.client_defaults(result.environment))
    setup = swept_setup(s.combination for s in rows)
    answer = Answer(
        fastest=[Pick.of(s, setup) for s in fastest],
        tie_margin=summary.tie_margin(result),
        equivalent=[Pick.of(s, setup) for s in top if s not in fastest],
        top_group=_kex_apart([Pick.of(s, setup) for s in sorted(top, key=lambda s: stated(s.combination.cipher, s))]),
        pair=pair,
        config_checked=result.environment.get(CHECKED_KEY),
    )
    _kex_apart([*answer.fastest, *answer.equivalent])
    _default(answer, result, rows, fastest[0])
    slowest = max(rows, key=lambda s: s.relative_to_fastest or 0.0)
    # Over several links the slowest row is a WAN row, as far behind as its link is ("aes128-gcm (wan100m), 85.4x
    # as long"): the block per condition (condition_answer.py) names each one's slowest against its own fastest.
    if (
        not any(a.name in setup for a in AXES if a.condition)
        and (slowest.relative_to_fastest or 0.0) >= SLOW_REMARK
        and (answer.default is None or slowest.combination.cipher != answer.default.cipher)
    ):
        answer.slowest = Pick.of(slowest, setup)
    verdict = baseline_analysis.compare(result).get(fastest[0].combination)
    if verdict is not None and verdict.verdict is not None:
        answer.bound_by = verdict.verdict.bound_by
        answer.bound_by_evidence = verdict.verdict.evidence
        answer.bound_by_explanation = verdict.verdict.explanation
    _why(answer, result, fastest[0].combination)
    _config(answer, result, fastest[0])
    _stale_check(answer, result)
    _undecided(answer, result, pair)
    return answer


def _stale_check(answer: Answer, result: RunResult) -> None:
    """A stored run shown by an sshbench whose rules write other lines than those `run` checked: its check
    was of those, not of these (--full's lines changed with the rule that places a cipher by its rows with an
    allowed MAC). Runs stored before the checked lines were recorded keep their check as it was."""
    checked_lines = result.environment.get(CHECKED_LINES_KEY)
    if answer.config_checked and checked_lines is not None and list(checked_lines) != answer.config:
        answer.config_checked = (
            f"{answer.config_checked}, but with the lines the run wrote then, not these: {'; '.join(checked_lines)}"
        )


def _why(answer: Answer, result: RunResult, top: Combination) -> None:
    """The `--why` experiments' verdict for the fastest row replaces the inferred one where there is one."""
    from dataclasses import asdict

    found = sensitivity.verdict_for((result.baselines or {}).get("why"), asdict(top))
    if found is None or found.get("kind") == "not-measured":
        return
    answer.bound_by, answer.bound_by_method, answer.bound_by_title = found["kind"], "experiment", found.get("title")
    answer.bound_by_evidence, answer.bound_by_explanation = found.get("line"), found.get("help")


def _default(answer: Answer, result: RunResult, rows: list[Summary], top: Summary) -> None:
    """The row a connection with no options would be: its algorithms as recorded at discovery, with the
    fastest row's other settings (tool, direction, link, ...) where several were swept."""
    defaults = result.environment.get(policies.DEFAULTS_KEY)  # an imported document may hold anything here
    recorded = defaults.get("negotiated") if isinstance(defaults, dict) else None
    if answer.pair != ("openssh", "openssh") or not isinstance(recorded, dict):
        answer.default_note = (
            "your ssh's default: not recorded (a run stored by an older sshbench)"
            if answer.pair == ("openssh", "openssh")
            else None
        )
        return
    wanted = (recorded.get("cipher"), recorded.get("mac"), recorded.get("kex"))

    def algorithms(c: Combination) -> tuple[str, str, str]:
        return (c.cipher, c.mac, c.kex)

    matches = [s for s in rows if algorithms(s.combination) == wanted]
    # a build sweep: "your ssh's default" is the first pairing's (first --ssh to first --sshd: what you have)
    first = ((result.environment.get("builds") or {}).get("pairings") or [{}])[0]  # checked on import (document.py)
    own = [
        s
        for s in matches
        if (s.combination.ssh_build, s.combination.sshd_build)
        == (first.get("ssh_build", ""), first.get("sshd_build", ""))
    ] or matches
    same_setup = [s for s in own if s.combination.shape[1:-2] == top.combination.shape[1:-2]]  # but kex, builds
    if not matches:
        mac = "" if wanted[1] == IMPLICIT_MAC else f" + {wanted[1]}"
        settings = result.settings
        left_out_by = (
            "--no-baselines" if not settings.baselines else None if settings.default_reference else "--no-reference"
        )
        answer.default_note = (
            f"your ssh's default ({wanted[0]}{mac}) was not measured in this run ({left_out_by} leaves it out)"
            if left_out_by
            else f"your ssh's default ({wanted[0]}{mac}): no valid trial in this run"
        )
        return
    answer.default = Pick.of((same_setup or own)[0], swept_setup(s.combination for s in rows))


def _config(answer: Answer, result: RunResult, top: Summary) -> None:
    """The policy's option lines for a client's `Host *` (prefixes that keep the other defaults)."""
    try:
        rec = policies.build(result, POLICY, "client", host_pattern="*")
    except SshbenchError as err:
        answer.config_note = f"no config lines: {err}"
        return
    lines = rec.option_lines()
    answer.config = [line.text for line in lines]
    answer.config_comments = [line.comment() for line in lines]
    allowed = {c.name for c in rec.ciphers}
    mac_ok = top.combination.mac == IMPLICIT_MAC or top.combination.mac in {m.name for m in rec.macs}
    if top.combination.cipher not in allowed or not mac_ok:
        left = next((x for x in rec.left_out if x.name in (top.combination.cipher, top.combination.mac)), None)
        why = f" ({left.verdict}: {left.why})" if left else ""
        answer.config_note = (
            f"the fastest, {Pick.of(top).name}, is not allowed by policy {POLICY}{why}; "
            "`sshbench recommend --policy trusted-lan` shows what would include it"
        )
    elif not lines:
        answer.config_note = "nothing to paste: your ssh's defaults already offer the fastest first"


def _undecided(answer: Answer, result: RunResult, pair: tuple[str, str]) -> None:
    """The neighbours the run could not order, each with the reason its own figures give
    (statistics.why_undecided), and one piece of advice that matches those reasons."""
    margin = summary.tie_margin(result)
    whys: list[stats.WhyUndecided] = []
    named: list[str] = []  # each pair as the conclusion names it: with the rows' setup where the run swept one
    setup = swept_setup(
        s.combination for s in summary.summaries(result) if summary.implementation_pair(s.combination) == pair
    )
    for p in summary.undecided(result):
        if summary.implementation_pair(p.faster) != pair:
            continue
        why = stats.why_undecided(p.estimate, margin)
        whys.append(why)
        named.append(" vs ".join(shown_apart([p.faster, p.slower], setup)))
        answer.undecided.append(
            {
                "faster": p.faster.label,
                "slower": p.slower.label,
                "ratio": p.estimate.ratio,
                "ci95": [p.estimate.low, p.estimate.high],
                "rounds_to_decide": why.rounds,
                "reason": why.reason,
                "why": why.sentence(margin, p.estimate.n_pairs),
            }
        )
    if not answer.undecided:
        return
    pairs = named[0] + (f" and {len(answer.undecided) - 1} more pair(s)" if len(answer.undecided) > 1 else "")
    more = [w.more for w in whys if w.more is not None]
    if not more:
        reasons = {w.reason for w in whys}
        what = (
            f"their ratios sit at the ±{margin:.0%} tie margin: a wider --tie would call them tied"
            if reasons == {"margin"}
            else "the rounds scatter too much for the gaps: a quieter machine would decide them sooner"
            if reasons == {"spread"}
            else "at the tie margin or too scattered: no practical number of rounds decides them"
        )
        answer.advice = f"undecided: {pairs}; {what}"
        return
    needed = max(more)
    settings = result.settings
    rounds = max(summary.rounds_run(result), 1)
    elapsed = max((result.finished_at or result.started_at) - result.started_at, 0.0)
    per_round = elapsed / (rounds + settings.warmup)
    if settings.adaptive:
        budget = max(math.ceil((elapsed + needed * per_round) / 60), 1)
        run = f"the same run with --budget {budget}m"
    else:
        run = f"the same run with --runs {rounds + needed}"
    decides = "" if len(more) == len(whys) else f" {len(more)} of them"
    answer.advice = f"undecided: {pairs}; about {needed} more round(s) would decide{decides}: {run}"

"""The run's answer, printed first (issue 13): the fastest combination (with its ties), what a connection with
no options gets here ("your ssh's default") and how much longer it takes, what limited the fastest, the
config lines that apply it, and, when the run could not decide, what to run to decide.

Pure: every figure is read from the run's summaries (summary.py), the bottleneck verdicts
(baselines/analysis.py) and the policy machinery `sshbench recommend` uses (security/policy.py), so the
answer, the table and the JSON always agree. `compute()` gives an `Answer` (answer_block.py: its plain text
block, `Answer.lines()`, and the JSON's `answer` object, `Answer.to_json()`).
"""

from __future__ import annotations

import math
from dataclasses import asdict

from sshbench.answers.answer_block import POLICY, Answer, Pick, kex_apart, own_rows_setup
from sshbench.baselines import analysis as baseline_analysis
from sshbench.baselines import sensitivity
from sshbench.errors import SshbenchError
from sshbench.model import factor_ranking, summary
from sshbench.model import statistics as stats
from sshbench.model.disturbed import disturbed_rounds
from sshbench.model.summary import Summary
from sshbench.naming import shown_apart, swept_setup
from sshbench.results import AXES, IMPLICIT_MAC, Combination, RunResult, short_name
from sshbench.security import policy as policies
from sshbench.units import format_factor

SLOW_REMARK = 2.0  # the slowest row is named when it takes at least this many times as long as the fastest
# environment: this run against the store's earlier runs of its set-up (answers/agreement.py), recorded at its end
AGREEMENT_KEY = "earlier_runs_agreement"
CHECKED_KEY = "conclusion_config_checked"  # environment: what `run`'s check of the config lines said
CHECKED_LINES_KEY = "conclusion_config_checked_lines"  # environment: the lines that check connected with


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
        # "equivalent" only for a decided tie with the first row; the rest of the first group was not told apart
        equivalent=[Pick.of(s, setup) for s in top if s not in fastest and _tied_with_first(s, result)],
        not_told_apart=[Pick.of(s, setup) for s in top if s not in fastest and not _tied_with_first(s, result)],
        top_group=kex_apart([Pick.of(s, setup) for s in sorted(top, key=lambda s: stated(s.combination.cipher, s))]),
        pair=pair,
        config_checked=result.environment.get(CHECKED_KEY),
        factors=factor_ranking.factor_answer(result),
        disturbed=disturbed_rounds(result.trials),
        earlier_runs=_earlier_line(result),
    )
    kex_apart([*answer.fastest, *answer.equivalent, *answer.not_told_apart])
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
    _config_status(answer, result, rows, fastest[0])
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

    why = (result.baselines or {}).get("why")
    found = sensitivity.verdict_for(why, asdict(top))
    if found is None or found.get("kind") == "not-measured":
        if isinstance(why, dict) and isinstance(why.get("skipped"), str):  # said where the verdict is (--full)
            answer.bound_by_skipped = why["skipped"]
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


def _earlier_line(result: RunResult) -> list[str]:
    found = result.environment.get(AGREEMENT_KEY)  # an imported document may hold anything here
    lines = found.get("lines") if isinstance(found, dict) else None
    return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []


def _tied_with_first(s: Summary, result: RunResult) -> bool:
    """Decided tied with the first row: its paired interval against it lies within the tie margin."""
    margin, ci = summary.tie_margin(result), s.relative_to_fastest_ci95
    return ci is not None and 1 / (1 + margin) <= ci[0] and ci[1] <= 1 + margin


def _config_status(answer: Answer, result: RunResult, rows: list[Summary], top: Summary) -> None:
    """Whether the Ciphers line changes what ssh picks on decided evidence: its first cipher against your ssh's own
    first choice (the run's estimate of the two rows, paired). Not decided: said under the lines (what was not
    decided, and what would decide it), the line kept as the medians put it (absence of evidence changes nothing)."""
    line = next((c for c in answer.config if c.startswith("Ciphers ")), None)
    defaults = (policies.client_defaults(result.environment) or {}).get("cipher") or []
    if line is None or not defaults or line.split(None, 1)[1].startswith("-"):
        return
    first_named = line.split(None, 1)[1].lstrip("^+").split(",")[0]
    own = [s for s in rows if s.combination.cipher == defaults[0] and not s.combination.remedy]
    chosen = [s for s in rows if s.combination.cipher == first_named and not s.combination.remedy]
    if not own or not chosen or first_named == defaults[0]:
        return
    faster, slower = chosen[0].combination, own[0].combination
    estimate = summary.pair_estimate(result, faster, slower)
    margin = summary.tie_margin(result)
    if estimate is not None and stats.compare_pair(estimate, margin) == "ordered" and estimate.ratio > 1:
        answer.config_status["Ciphers"] = {"decided": True, "why": None}
        return
    why = f"not decided: {short_name(first_named)} against your default {short_name(defaults[0])}"
    if estimate is not None:
        why += f", {format_factor(estimate.ratio)}x ({format_factor(estimate.low)}-{format_factor(estimate.high)})"
        more = stats.why_undecided(estimate, margin).more
        if more is not None:
            why += f"; about {more} more round(s) would decide it"
    answer.config_status["Ciphers"] = {"decided": False, "why": why}


def _undecided(answer: Answer, result: RunResult, pair: tuple[str, str]) -> None:
    """The neighbours the run could not order, each with the reason its own figures give
    (statistics.why_undecided), and one piece of advice that matches those reasons."""
    margin = summary.tie_margin(result)
    whys: list[stats.WhyUndecided] = []
    named: list[str] = []  # each pair as the conclusion names it: with the rows' setup where the run swept one
    setup = own_rows_setup(
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

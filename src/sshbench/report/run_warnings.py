"""The warnings under a run's table, in every format (terminal, Markdown, HTML): rows that scatter (and why, where the
run read it), rates too short to trust, rows re-measured, invalid trials, the two clocks apart."""

from __future__ import annotations

from sshbench.measure.clock import clock_agreement
from sshbench.model import summary
from sshbench.model.disturbed import disturbed_rounds, measured_neighbours
from sshbench.model.summary import WIDE_SPREAD_CV
from sshbench.report.notes import ASYNCSSH_NOTE
from sshbench.results import RunResult

# Below this median data phase a rate says more about fixed stalls than about the cipher.
SHORT_DATA_PHASE_S = 0.2


def warnings(result: RunResult, compact: bool = False) -> list[str]:
    """`compact`: the default terminal report, whose table has no CV column (--wide marks the rows)."""
    out = []
    wide = [s for s in summary.summaries(result) if s.wide_spread]
    # the cause where the run read it (model/disturbed: the answer names the rounds and the process)
    disturbed = disturbed_rounds(result.trials)
    if disturbed:
        cause = f"other processes used the CPU in round(s) {', '.join(str(r.round) for r in disturbed)}"
    elif measured_neighbours(result.trials):
        cause = "no other process used a quarter of a core during any trial: the machine's own noise"
    else:
        cause = "the machine may be busy"
    if wide and compact:
        out.append(f"{len(wide)} row(s) vary by more than {WIDE_SPREAD_CV:.0%} (CV; --wide marks them !): {cause}")
    elif wide:
        out.append(
            f"{len(wide)} combination(s) vary by more than {WIDE_SPREAD_CV:.0%} (CV, marked !): {cause}; consider "
            "more --runs or a quieter machine."
        )
    short = [
        s for s in summary.summaries(result) if s.median_data_s is not None and s.median_data_s < SHORT_DATA_PHASE_S
    ]
    if short:
        fastest = min(s.median_data_s or 0.0 for s in short)
        out.append(
            f"{len(short)} combination(s) moved their payload in under {SHORT_DATA_PHASE_S * 1000:.0f} ms "
            f"(down to {fastest * 1000:.0f} ms): fixed stalls (~40 ms delayed ACKs, one channel window "
            "buffered before the clock starts) distort rates that short; use a bigger --size, or leave "
            "it out for the adaptive size"
        )
    unmeasured = [s for s in summary.summaries(result) if s.unmeasured_trials]
    if unmeasured and result.settings.size is None:
        # adaptive sizes: such a trial was run again at once, four times as big (rounds.grow_after)
        if not compact:
            out.append(
                f"{len(unmeasured)} combination(s) had a trial too short for a steady part, run again bigger at "
                "once (the short one is not counted)"
            )
    elif unmeasured:
        out.append(
            f"{len(unmeasured)} combination(s) had trials too short to time (their wall time was within the "
            "same-shape handshake's jitter): use a bigger --size or the default adaptive size"
        )
    invalid = [t for t in result.trials if not t.valid]
    for t in invalid[:10]:
        out.append(
            f"invalid trial ({t.combination.label}, {t.kind}, run {t.repetition}"
            f"{' warm-up' if t.warmup else ''}): {t.invalid_reason}"
        )
    if len(invalid) > 10:
        out.append(f"... and {len(invalid) - 10} more invalid trials (see --json)")
    if any("asyncssh" in (c.client, c.server) for c in result.combinations):
        out.append(ASYNCSSH_NOTE)  # every report format (terminal, Markdown, HTML) says it
    agreement = clock_agreement(result.trials)
    if agreement is not None and abs(agreement - 1) > 0.10:
        out.append(
            f"the server-side clock and wall-minus-handshake disagree by {abs(agreement - 1):.0%} "
            "(median); treat absolute rates with care"
        )
    return out

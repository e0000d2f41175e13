"""The run's statistics in words and in the JSON's `stats`: how its ratios were estimated (the model of the run
where it held, statistics.run_model; else paired by round) and what stayed open."""

from __future__ import annotations

from sshbench.model import intervals, outliers, summary
from sshbench.model import statistics as stats
from sshbench.results import RunResult


def ratio_method(result: RunResult) -> str:
    """How the run's ratios were estimated, in words: the model of the run where it held for the first ranking."""
    ranking = next(iter(summary.run_rankings(result).values()), None)
    return "the model of the run (rounds as blocks)" if ranking and ranking.model else "paired by round"


def model_notes(result: RunResult) -> list[str]:
    """A line per ranking whose model of the run was tried and did not hold (statistics.run_model): its pairs
    were decided from their own rounds."""
    return [
        f"the model of the run did not hold ({ranking.model_rejected}): pairs decided from their own rounds"
        + ("" if len(rankings_) == 1 else f" ({'/'.join(pair)})")
        for rankings_ in [summary.run_rankings(result)]
        for pair, ranking in rankings_.items()
        if ranking.model_rejected
    ]


def models_json(result: RunResult) -> list[dict]:
    """Per ranking (client/server pair): the method its ratios came from and what the model's checks found."""
    out = []
    for pair, ranking in summary.run_rankings(result).items():
        model = ranking.model
        out.append(
            {
                "pair": list(pair),
                "method": intervals.EXPERIMENT_MODEL if model else intervals.PAIRED_LOG_T,
                "rows": len(ranking.combinations),
                "rounds": len(model.rounds) if model else None,
                "dropped_rounds": list(model.check.dropped_rounds) if model else [],
                "rejected": ranking.model_rejected,
            }
        )
    return out


def stats_json(result: RunResult) -> dict:
    """The JSON's top-level `stats`: how the decision figures were computed and what stayed open."""
    settings = result.settings
    pairs = []
    for p in summary.undecided(result):
        pairs.append(
            {
                "faster": p.faster.label,
                "slower": p.slower.label,
                "ratio": p.estimate.ratio,
                "ci95": [p.estimate.low, p.estimate.high],
                "method": p.estimate.method,
                "n_pairs": p.estimate.n_pairs,
                "rounds_to_decide": stats.pairs_to_decide(p.estimate, summary.tie_margin(result)),
            }
        )
    return {
        "confidence": intervals.DEFAULT_CONFIDENCE,
        "median_ci_method": "order statistics (sign-test interval); min-max below 6 trials, see ci_coverage",
        "ratio_ci_method": (
            f"{intervals.EXPERIMENT_MODEL} (rows x rounds, rounds as blocks; from {intervals.MODEL_MIN_ROWS} rows) where it "
            f"holds (models), else {intervals.PAIRED_LOG_T} (paired by round; {intervals.UNPAIRED_MEDIANS} below "
            f"{intervals.MIN_PAIRS})"
        ),
        "models": models_json(result),
        "outliers": f"modified z-score above {outliers.OUTLIER_Z} (flagged, kept)",
        "tie_margin": summary.tie_margin(result),
        "runs": "auto" if settings.adaptive else settings.runs,
        "budget_s": settings.budget_s if settings.adaptive else None,
        "rounds_run": summary.rounds_run(result),
        "seed": settings.seed,
        "undecided_pairs": pairs,
    }

"""Today's pairwise method against the model of the run, on the same real trials (issue 52).

`python bench/precision.py RUN.json [RUN.json ...]`: stored runs' JSON (`sshbench run --json RUN.json`, or
`sshbench export`). Per run: the neighbour pairs of its ranking decided (ordered or tied) by each pair's own rounds
(intervals.paired_ratio_ci) and by the model of the run (statistics.rank_groups); for a cipher x MAC run (`--full`)
the paired interval of neighbouring rows against the factorial model's intervals for cipher and MAC contrasts, their
median widths, the interaction test, the factor groups and the config lines; the --why verdict as stored and as the
rules read it now, with its cost intervals. Over several runs: how many distinct answers they gave. Figures are the
runs' own: nothing is simulated here (bench/precision_sim.py does that)."""

from __future__ import annotations

import copy
import json
import math
import statistics
import sys
from collections import Counter

from sshbench.answers import answer
from sshbench.baselines import sensitivity
from sshbench.model import factor_ranking, summary
from sshbench.model import statistics as stats
from sshbench.model.factorial import fit_factorial
from sshbench.model.intervals import paired_ratio_ci
from sshbench.store.document import result_from_document


def _width(low: float, high: float) -> float:
    return math.log(high) - math.log(low)


def _decided(ranking: stats.Ranking) -> str:
    decided = sum(p.decision != "undecided" for p in ranking.pairs)
    return f"{decided} of {len(ranking.pairs)}"


def _factorial_widths(rates: dict) -> None:
    rows = sorted(rates, key=lambda k: -statistics.median(rates[k].values()))
    pair_widths = [
        _width(e.low, e.high)
        for a, b in zip(rows, rows[1:], strict=False)
        for e in [paired_ratio_ci(rates[a], rates[b])]
        if e.low > 0 and math.isfinite(e.high)
    ]
    model = fit_factorial(rates, lambda k: k.cipher, lambda k: k.mac)
    if model is None:
        print("  the factorial model does not fit these trials (experiment.assess): the pairwise method stands")
        return
    print(f"  today: neighbouring rows' paired 95% intervals, median width {statistics.median(pair_widths):.3f} (log)")
    cipher_widths = [
        _width(e.low, e.high)
        for c1, c2 in zip(model.cipher_order, model.cipher_order[1:], strict=False)
        if c1 in model.mac_ciphers and c2 in model.mac_ciphers
        for e in [model.cipher_ratio(c1, c2)]
    ]
    mac_widths = [
        _width(e.low, e.high)
        for m1, m2 in zip(model.mac_order, model.mac_order[1:], strict=False)
        for e in [model.mac_ratio(m1, m2)]
    ]
    for name, widths in (("cipher", cipher_widths), ("MAC", mac_widths)):
        if widths:
            w = statistics.median(widths)
            print(f"  model: neighbouring {name} contrasts, median width {w:.3f} (log): "
                  f"{statistics.median(pair_widths) / w:.1f}x narrower than a pair of rows")  # fmt: skip
    i = model.interaction
    print(f"  interaction cipher x MAC: F = {i.statistic:.2f} on ({i.df1:.1f}, {i.df2:.1f}) df, p = {i.p:.3g}")


def _reversed(positions: list[dict[str, tuple[int, float]]]) -> str:
    """Pairs of rows 20% or more apart that some run ranked the other way round: apart by one run's x fastest, and
    apart over all the runs (the geometric mean of their x fastest)."""
    in_one = set()
    for one in positions:
        for other in positions:
            for a, b in ((a, b) for a in one for b in one if a in other and b in other):
                if one[b][1] / one[a][1] >= 1.2 and other[a][0] > other[b][0]:  # a ahead of b by 20% in `one`
                    in_one.add((a, b))
    rows = set.intersection(*(set(p) for p in positions))
    pooled = {r: statistics.geometric_mean([p[r][1] for p in positions]) for r in rows}
    overall = {
        (a, b) for a in rows for b in rows if pooled[b] / pooled[a] >= 1.2 and any(p[a][0] > p[b][0] for p in positions)
    }
    return f"{len(in_one)} by one run's figures, {len(overall)} by all the runs' together"


def main(paths: list[str]) -> int:
    answers: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    positions: list[dict[str, tuple[int, float]]] = []  # per run: each row's place and rate relative to the first
    for path in paths:
        doc = json.load(open(path))
        result = result_from_document(doc, path)
        by_pair = summary._rates_by_pair(result.trials)
        rates = next(iter(by_pair.values()))
        rounds = max(len(v) for v in rates.values())
        paired = stats.rank_groups(rates, result.settings.tie, use_model=False)
        modelled = stats.rank_groups(rates, result.settings.tie)
        positions.append(
            {c.key.label: (i, c.relative.ratio if c.relative else 1.0) for i, c in enumerate(modelled.combinations)}
        )
        how = "the model" if modelled.model else f"paired ({modelled.model_rejected or 'too few rows'})"
        print(f"{path}: {len(rates)} rows, {rounds} rounds")
        print(f"  neighbour pairs decided: paired {_decided(paired)}, {how} {_decided(modelled)}")
        factors = factor_ranking.factor_answer(result)
        if factors is not None:
            rows = set(factor_ranking.factor_rows(rates))
            _factorial_widths({c: r for c, r in rates.items() if c in rows})
            for levels in (factors.ciphers, factors.macs):
                edge = levels.edge
                told = "" if edge is None else f"; edge {edge.ratio:.2f} ({edge.low:.2f}-{edge.high:.2f})"
                print(f"  {levels.kind} groups: " + " | ".join(", ".join(g) for g in levels.groups) + told)
        conclusion = answer.compute(result)
        if conclusion is not None:
            key = " / ".join(conclusion.config) + (
                f" / ciphers {factors.ciphers.groups[0]} macs {factors.macs.groups[0]}" if factors else ""
            )
            answers[key] += 1
            print("  config:", "; ".join(conclusion.config) or conclusion.config_note)
        for entry in ((doc.get("baselines") or {}).get("why") or {}).get("combinations") or []:
            stored = entry["verdict"]
            now = sensitivity.decide(
                copy.deepcopy(entry["throttles"]), sensitivity.SLOWDOWN, entry["unthrottled_mib_s"]
            )
            costs = [now["cpus"]] if "cpus" in now else [t for t in entry["throttles"] if t.get("loss_ci95")]
            widths = ", ".join(
                f"{t['resource']} ±{(t['loss_ci95'][1] - t['loss_ci95'][0]) * 50:.0f}" for t in costs
            )  # fmt: skip
            pairs = max((t.get("n_pairs") or 0 for t in entry["throttles"]), default=0)
            print(f"  why ({pairs} rounds): stored {stored['title']!r}; now {now['title']!r}; cost ± points: {widths}")
            verdicts[now["title"]] += 1
    if len(paths) > 1:
        print(f"pairs 20% or more apart in one run and in the other order in another: {_reversed(positions)}")
        print(f"{len(paths)} runs: {len(answers)} distinct config lines (+ factor groups), {len(verdicts)} distinct "
              f"why verdicts {dict(verdicts)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

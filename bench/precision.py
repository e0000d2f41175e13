"""Today's pairwise method against the model of the run, on the same real trials (issue 52).

`python bench/precision.py RUN.json`: a stored run's JSON (`sshbench run --full --json RUN.json`). Prints, for that
run's rows: the paired interval of neighbouring rows (today's method, intervals.paired_ratio_ci) against the
factorial model's intervals for cipher and MAC contrasts (model.factorial), their median widths (log scale) and
ratio, the interaction test, and the factor groups. Figures are the run's own: nothing is simulated here
(bench/precision_sim.py does that)."""

from __future__ import annotations

import json
import math
import statistics
import sys

from sshbench.model.factorial import fit_factorial
from sshbench.model.intervals import paired_ratio_ci


def _width(low: float, high: float) -> float:
    return math.log(high) - math.log(low)


def main(path: str) -> int:
    doc = json.load(open(path))
    rates: dict[tuple[str, str], dict[int, float]] = {}
    for t in doc["trials"]:
        if t["kind"] == "transfer" and not t["warmup"] and t["valid"] and t.get("mib_s") and not t.get("remedy"):
            rates.setdefault((t["cipher"], t["mac"]), {})[t["repetition"]] = t["mib_s"]
    rows = sorted(rates, key=lambda k: -statistics.median(rates[k].values()))
    rounds = max(len(v) for v in rates.values())
    pair_widths = []
    for a, b in zip(rows, rows[1:], strict=False):
        e = paired_ratio_ci(rates[a], rates[b])
        if e.low > 0 and math.isfinite(e.high):
            pair_widths.append(_width(e.low, e.high))
    print(f"{path}: {len(rows)} rows, {rounds} rounds")
    print(f"today: neighbouring rows' paired 95% intervals, median width {statistics.median(pair_widths):.3f} (log)")
    model = fit_factorial(rates, lambda k: k[0], lambda k: k[1])
    if model is None:
        print("the factorial model does not fit these trials (experiment.assess): the pairwise method stands")
        return 0
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
            print(f"model: neighbouring {name} contrasts, median width {w:.3f} (log): "
                  f"{statistics.median(pair_widths) / w:.1f}x narrower than a pair of rows")  # fmt: skip
    i = model.interaction
    print(f"interaction cipher x MAC: F = {i.statistic:.2f} on ({i.df1:.1f}, {i.df2:.1f}) df, p = {i.p:.3g}")
    print("cipher groups, fastest first:", " | ".join(", ".join(g) for g in model.cipher_groups()))
    print("MAC groups, fastest first:   ", " | ".join(", ".join(g) for g in model.mac_groups()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

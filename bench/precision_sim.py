#!/usr/bin/env python3
"""The simulated coverage of the model of a run (issue 52; sshbench.model.experiment and factorial), for
docs/statistics.md ("One model of the run"): the table tests/test_experiment_model.py asserts on, with more runs.

Per configuration (rows x rounds, or ciphers x MACs + AEAD ciphers x rounds; "+outlier": one round slows a random
subset of rows 2-3x; "adaptive": rows leave after the 3rd round): how often the model's 95% interval covers the true
ratio ("cover"), how often a true tie is called ordered beyond the 3% margin ("ties"), the paired interval's coverage
on the same rows and the model's interval width over the paired one (median of the log widths; a cipher contrast
against a pair of rows with one MAC), the runs the model fell back in, and the contrasts counted.

Usage: nice -n 19 .venv/bin/python bench/precision_sim.py [--scale N]   (N times the tests' runs; ~20 s x N)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_experiment_model import print_figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="times the tests' simulated runs (default 1)")
    print_figures(parser.parse_args().scale)


if __name__ == "__main__":
    main()

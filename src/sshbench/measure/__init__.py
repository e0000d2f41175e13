"""The measuring core: the run loop and its parts (plan, budget, calibration, trials, warm sessions, clocks)."""

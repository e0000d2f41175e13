"""Baselines measured in the same run as the ssh trials, and the bottleneck verdict drawn from them.

One module per baseline: raw_tcp (the path without SSH), crypto_ceiling (one core running the
primitive), disk (the payload's source), aesni (--no-aesni), bottleneck (the verdict, pure), and
analysis (each combination against them); hooks is the runner's thin entry point.
"""

"""A noisy neighbour: one core kept busy in bursts, seeded, for a given time (issues 64 and 66).

    python bench/neighbour.py [--seconds 600] [--seed 1] [--on 0.5-3] [--off 1-5]

Each burst spins one core for a time drawn from --on (seconds), then rests for a time drawn from --off, until
--seconds have passed; the same seed draws the same bursts. It prints one line per burst to stderr (its start, on,
off) and a summary at the end: a measurement beside it can be read against what it did. A shared machine's
neighbour is rarely steady: `make test`, a compiler, a browser tab come and go; sshbench's answer must hold beside it
(the same config lines, or an explicit "not decided"), and name the rounds it disturbed (docs/reliability.md).

Standard library only; it ends by itself, and at SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time


def _range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    return float(low), float(high or low)


def spin(seconds: float) -> None:
    """Keep this core busy for `seconds` (a tight loop: no sleep, no I/O)."""
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for _ in range(10_000):
            x += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to keep at it (default 600)")
    parser.add_argument("--seed", type=int, default=1, help="the bursts' seed (default 1)")
    parser.add_argument("--on", type=_range, default=(0.5, 3.0), help="a burst's length, LOW-HIGH s (0.5-3)")
    parser.add_argument("--off", type=_range, default=(1.0, 5.0), help="a rest's length, LOW-HIGH s (1-5)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    rng = random.Random(args.seed)
    start = time.monotonic()
    busy = bursts = 0.0
    try:
        while (left := args.seconds - (time.monotonic() - start)) > 0:
            on, off = rng.uniform(*args.on), rng.uniform(*args.off)
            at = time.monotonic() - start
            spin(min(on, left))
            busy, bursts = busy + min(on, left), bursts + 1
            print(f"neighbour: burst at {at:.1f} s: on {on:.2f} s, off {off:.2f} s", file=sys.stderr, flush=True)
            time.sleep(max(min(off, args.seconds - (time.monotonic() - start)), 0.0))  # the rest is the point
    except KeyboardInterrupt:
        pass
    elapsed = time.monotonic() - start
    print(
        f"neighbour: {bursts:.0f} bursts, one core busy {busy:.0f} of {elapsed:.0f} s ({busy / max(elapsed, 1e-9):.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

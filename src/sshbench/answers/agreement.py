"""Does this run's answer agree with the store's earlier runs of the same set-up (issue 64)? Each run answered from its
own minute alone: five default runs in an afternoon wrote `Ciphers ^aes128-gcm@openssh.com,aes256-gcm@openssh.com`
and the sixth, in a noisier minute, left it out. The store holds every earlier run of the set-up; one line in the
answer says whether this one agrees with them, or what differs and by how much (pure: the runs are handed in).

"The same set-up" is store/setups.py's (the same host, rows and options) with the same ssh and sshd versions and CPU:
an upgrade is a change to see (`sshbench history`, `check`), not a run to agree with."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sshbench.answers.answer import AGREEMENT_KEY, compute
from sshbench.answers.answer_block import Answer
from sshbench.results import RunResult
from sshbench.units import format_factor

# The environment's facts that make two runs of one set-up comparable beyond store/setups.py's key.
SAME = ("client_ssh_version", "server_ssh_version", "cpu_model", "kernel")


def comparable(run: RunResult, other: RunResult) -> bool:
    """Same versions, CPU and kernel as `run` (the set-up key is store/setups.py's)."""
    return all(run.environment.get(k) == other.environment.get(k) for k in SAME)


@dataclass
class Agreement:
    """This run's answer against `runs` earlier ones of its set-up."""

    runs: int
    config_agrees: int  # of those whose config lines are this run's (or this run's with a not-decided status)
    their_config: list[str] = field(default_factory=list)  # the lines most of them wrote
    default_ratios: list[float] = field(default_factory=list)  # their "your ssh's default" x fastest
    ours_ratio: float | None = None
    ours_decided: bool = True

    @property
    def agrees(self) -> bool:
        return self.config_agrees == self.runs

    def lines(self) -> list[str]:
        """The verdict, then (indented in the block) your default's ratio here and there: each fits 100 columns."""
        runs = f"{self.runs} earlier run{'s' if self.runs > 1 else ''} of this set-up"
        if self.agrees:
            status = "" if self.ours_decided else " (there decided, here not)"
            out = [f"agrees with the {runs}: the same config lines{status}"]
        else:
            out = [
                f"differs from the {runs}: {self.runs - self.config_agrees} wrote {'; '.join(self.their_config) or 'no line'}"
            ]
        if self.default_ratios and self.ours_ratio is not None:
            low, high = min(self.default_ratios), max(self.default_ratios)
            span = format_factor(low) if low == high else f"{format_factor(low)}-{format_factor(high)}"
            out.append(f"your default {format_factor(self.ours_ratio)}x here, {span}x there")
        return out

    def line(self) -> str:
        return "; ".join(self.lines())

    def to_json(self) -> dict:
        return {
            "runs": self.runs,
            "config_agrees": self.config_agrees,
            "their_config": self.their_config,
            "default_ratios": self.default_ratios,
            "ours_ratio": self.ours_ratio,
            "agrees": self.agrees,
            "line": self.line(),
            "lines": self.lines(),
        }


def _default_ratio(found: Answer | None) -> float | None:
    return found.default.relative_to_fastest if found is not None and found.default is not None else None


def agreement(run: RunResult, earlier: list[RunResult]) -> Agreement | None:
    """This run against the comparable ones of `earlier` (store/setups.runs_of_setup's); None without any."""
    ours = compute(run)
    others = [found for other in earlier if comparable(run, other) and (found := compute(other)) is not None]
    if ours is None or not others:
        return None
    mine = tuple(ours.config)
    agree = sum(1 for found in others if tuple(found.config) == mine)
    differing = Counter(tuple(found.config) for found in others if tuple(found.config) != mine)
    return Agreement(
        runs=len(others),
        config_agrees=agree,
        their_config=list(differing.most_common(1)[0][0]) if differing else [],
        default_ratios=[r for found in others if (r := _default_ratio(found)) is not None],
        ours_ratio=_default_ratio(ours),
        ours_decided=all(status["decided"] for status in ours.config_status.values()),
    )


__all__ = ["AGREEMENT_KEY", "Agreement", "agreement", "comparable"]

"""The run's answer by factor (issue 52): where a run crossed several ciphers with several MACs (`--full`, or
`--ciphers` x `--macs`), which cipher and which MAC are fastest, each from every row that has it (factorial.py),
rather than row against row.

The rows are the conclusion's: the first client/server pair's own rows (no remedy row, no tool choosing its own
algorithms), uncompressed, of the first build pairing; one row per cipher and MAC (a run that also swept a tool, a
direction or a link has no such table: None, and the rows' ranking stands). The groups are factorial.py's (a group
ends where the next level is told apart from the group's first); each group's edge is its first level against the
first level outside it. AEAD ciphers are levels of their own, placed against the MAC ciphers with the fastest MAC.
`security.policy` orders the Ciphers and MACs lines by these groups, the answer prints them (answers/answer_block.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sshbench.compression import NO_COMPRESSION
from sshbench.model import summary
from sshbench.model.intervals import RatioEstimate
from sshbench.results import Combination, RunResult, Trial

if TYPE_CHECKING:
    from sshbench.model.factorial import FactorialModel, InteractionTest

NARROW_SHARE = 0.8  # rows_to_narrow: the rows that hold this share of an edge's variance
INTERACTION_P = 0.05  # below: the cipher x MAC interaction is said (a cipher's lead then differs between MACs)


@dataclass(frozen=True)
class FactorGroups:
    """One factor's levels in groups, fastest first; `edge`: the first level's rate over that of the first level
    outside the first group (None: a single group, nothing told apart)."""

    kind: str  # "cipher" or "mac"
    groups: list[list[str]]
    edge: RatioEstimate | None

    @property
    def rank(self) -> dict[str, int]:
        """Each level's group index (what the config lines sort by)."""
        return {name: i for i, group in enumerate(self.groups) for name in group}

    def to_json(self) -> dict:
        edge = self.edge
        return {
            "groups": self.groups,
            "edge": None
            if edge is None
            else {
                "faster": self.groups[0][0],
                "slower": self.groups[1][0],
                "ratio": edge.ratio,
                "ci95": [edge.low, edge.high],
                "method": edge.method,
            },
        }


@dataclass(frozen=True)
class FactorAnswer:
    ciphers: FactorGroups
    macs: FactorGroups
    aead: list[str]  # AEAD ciphers: placed against the others with reference_mac
    reference_mac: str
    interaction: InteractionTest
    rows: int
    rounds: int

    @property
    def interacts(self) -> bool:
        return self.interaction.p < INTERACTION_P

    def to_json(self) -> dict:
        i = self.interaction
        return {
            "ciphers": self.ciphers.to_json(),
            "macs": self.macs.to_json(),
            "aead": self.aead,
            "reference_mac": self.reference_mac,
            "interaction": {"f": i.statistic, "df": [i.df1, i.df2], "p": i.p},
            "rows": self.rows,
            "rounds": self.rounds,
        }


def factor_answer(result: RunResult) -> FactorAnswer | None:
    """The run's cipher and MAC groups, or None where the run has no cipher x MAC table the model fits."""
    return summary.cached(result, "factor_answer", lambda: _compute(result))


def factor_rows(combinations: Iterable[Combination]) -> list[Combination]:
    """The rows the factors are fitted on (the module's docstring); empty where they are no cipher x MAC table."""
    rows = [c for c in combinations if not c.remedy and not c.unpinned and c.compression == NO_COMPRESSION]
    if not rows:
        return []
    pair = summary.implementation_pair(min(rows, key=summary.implementation_order))  # OpenSSH's own first
    rows = [c for c in rows if summary.implementation_pair(c) == pair]
    if len({c.builds for c in rows}) > 1 or len({(c.cipher, c.mac) for c in rows}) < len(rows):
        return []
    return rows


def _fit(trials: list[Trial]) -> FactorialModel[Combination] | None:
    rates = summary.rates_by_round(trials)
    rows = set(factor_rows(rates))
    if not rows:
        return None
    try:  # numpy and scipy: imported where needed, and a fleet host goes without them (statistics.run_model)
        from sshbench.model.factorial import fit_factorial
    except ImportError:
        return None
    return fit_factorial({c: r for c, r in rates.items() if c in rows}, lambda c: c.cipher, lambda c: c.mac)


def _compute(result: RunResult) -> FactorAnswer | None:
    model = _fit(result.trials)
    if model is None:
        return None
    tie = summary.tie_margin(result)
    return FactorAnswer(
        ciphers=_groups("cipher", model.cipher_groups(tie), model.cipher_ratio),
        macs=_groups("mac", model.mac_groups(tie), model.mac_ratio),
        aead=list(model.aead),
        reference_mac=model.reference_mac,
        interaction=model.interaction,
        rows=len(model.rows.keys),
        rounds=len(model.rows.rounds),
    )


def rows_to_narrow(trials: list[Trial], tie_margin: float) -> list[Combination]:
    """For `--runs auto` past the minimum rounds of a cipher x MAC run: the rows whose next round narrows what the
    answer prints most, its two edges (the first cipher group's first against the next group's, the same for
    MACs): per edge, each row's share of the estimate's variance (weight^2 x its variance / its rounds) and the
    rows that hold NARROW_SHARE of it, largest first. At 3 rounds of `--full` the cipher edge is mostly the AEAD
    rows' own scatter (aes128-gcm: one row, CV 27%, on 2 df) and hardly any of the 96 MAC cipher rows': a round
    of all 115 rows takes ~80 s, one of these a few seconds. Empty: not such a run (the rows' ranking decides)."""
    model = _fit(trials)
    if model is None:
        return []
    edges = []
    for order, groups, weigh in (
        (model.cipher_order, model.cipher_groups(tie_margin), model.cipher_weights),
        (model.mac_order, model.mac_groups(tie_margin), model.mac_weights),
    ):
        first, nxt = (groups[0][0], groups[1][0]) if len(groups) > 1 else (order[0], order[1])
        edges.append(weigh(first, nxt))
    chosen: dict[Combination, None] = {}
    for weights in edges:
        shares = {}
        for key, weight in weights.items():
            variance, rounds = model.rows.noise_per_round(key)
            shares[key] = weight**2 * variance / rounds
        total, held = sum(shares.values()), 0.0
        for key in sorted(shares, key=lambda k: -shares[k]):
            if total <= 0 or held >= NARROW_SHARE * total:
                break
            chosen[key] = None
            held += shares[key]
    return list(chosen)


def _groups(kind: str, groups: list[list[str]], ratio: Callable[[str, str], RatioEstimate]) -> FactorGroups:
    edge = ratio(groups[0][0], groups[1][0]) if len(groups) > 1 else None
    return FactorGroups(kind, groups, edge)

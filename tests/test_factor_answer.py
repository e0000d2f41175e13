"""A cipher x MAC run answered by factor (issue 52, model/factor_ranking.py): the fastest cipher and MAC groups with
their decided edges in the answer and the JSON, the config lines ordered by those groups, and the rows an adaptive
round of such a run measures. Made-up trials with a known truth (no sshd): the wiring, not the statistics, which
tests/test_experiment_model.py simulates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fakes import ENVIRONMENT
from sshbench.answers import answer
from sshbench.model import factor_ranking
from sshbench.results import IMPLICIT_MAC, Combination, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store.document import to_document
from sshbench.units import MIB

pytestmark = pytest.mark.fast

GCM, CHACHA = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"
# The truth: MiB/s of a cipher with a MAC is the cipher's rate shrunk by the MAC's time per byte, as bytes cost.
CIPHERS = {"aes128-ctr": 900.0, "aes192-ctr": 860.0, "aes256-ctr": 820.0, "aes128-cbc": 400.0}
MACS = {"hmac-sha2-256-etm@openssh.com": 1.0, "hmac-sha2-256": 1.0, "umac-64-etm@openssh.com": 0.8, "hmac-sha1": 0.6}
AEAD = {GCM: 1000.0, CHACHA: 600.0}
SSH_ORDER = {  # your ssh's own order (OpenSSH 9.2's defaults, those measured here)
    "cipher": [CHACHA, "aes128-ctr", "aes192-ctr", "aes256-ctr", GCM],
    "mac": ["umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com", "hmac-sha2-256", "hmac-sha1"],
}


def _run(rounds: int = 5, seed: int = 1, tools: tuple[str, ...] = ("scp",)) -> RunResult:
    rng = np.random.default_rng(seed)
    truth = {(c, m): rate * MACS[m] for c, rate in CIPHERS.items() for m in MACS}
    truth.update({(c, IMPLICIT_MAC): rate for c, rate in AEAD.items()})
    combos = [Combination(c, m, "curve25519-sha256", tool=tool) for (c, m) in truth for tool in tools]
    trials = []
    for r in range(rounds):
        slow = rng.uniform(0.6, 1.0)  # the round's common-mode slowdown
        for combo in combos:
            mib_s = truth[(combo.cipher, combo.mac)] * slow * math.exp(rng.normal(0, 0.05))
            data_s = 64 / mib_s
            trials.append(
                Trial(
                    combination=combo,
                    kind="transfer",
                    repetition=r,
                    warmup=False,
                    payload_bytes=64 * MIB,
                    started_at=1.7e9 + len(trials),
                    exit_status=0,
                    valid=True,
                    wall_s=data_s + 0.05,
                    data_s=data_s,
                    data_clock="server-reader",
                    received_bytes_at_sink=64 * MIB,
                )  # fmt: skip
            )
    environment = {
        **ENVIRONMENT,
        "client_default_algorithms": {
            "negotiated": {"cipher": CHACHA, "mac": IMPLICIT_MAC, "kex": "curve25519-sha256"},
            "lists": {**SSH_ORDER, "kex": ["curve25519-sha256"]},
        },
    }
    return RunResult(settings=RunSettings(baselines=False), environment=environment, target={"kind": "fake"},
                     combinations=combos, trials=trials, status="complete", started_at=1.7e9,
                     finished_at=1.7e9 + len(trials), run_id=1)  # fmt: skip


def test_the_answer_names_the_fastest_cipher_and_mac_groups_with_decided_edges() -> None:
    result = _run()
    factors = factor_ranking.factor_answer(result)
    assert factors is not None and factors.rows == 18 and factors.rounds == 5
    assert factors.ciphers.groups[0][0] == GCM and CHACHA not in factors.ciphers.groups[0]
    assert set(factors.macs.groups[0]) == {"hmac-sha2-256-etm@openssh.com", "hmac-sha2-256"}
    assert factors.macs.groups[1][0] == "umac-64-etm@openssh.com"
    for levels in (factors.ciphers, factors.macs):  # each edge told apart from the group's first
        assert levels.edge is not None and levels.edge.low > 1.03
    assert factors.macs.edge is not None and factors.macs.edge.ratio == pytest.approx(1.25, rel=0.05)
    assert factors.aead == [GCM, CHACHA] or sorted(factors.aead) == sorted([GCM, CHACHA])
    conclusion = answer.compute(result)
    assert conclusion is not None
    text = "\n".join(conclusion.lines())
    assert "by factor" in text and "ciphers: aes128-gcm, then aes128-ctr: 1.1" in text
    assert ", then umac-64-etm: 1.2" in text and "AEAD ciphers placed with the fastest MAC" in text
    assert all(len(line) <= 100 for line in conclusion.lines())
    doc = to_document(result)["answer"]["factors"]
    assert doc["macs"]["edge"]["faster"] in factors.macs.groups[0] and doc["rows"] == 18


def test_the_config_lines_follow_the_factor_groups_in_your_ssh_s_order() -> None:
    conclusion = answer.compute(_run())
    assert conclusion is not None
    lines = dict(line.split(" ", 1) for line in conclusion.config)
    assert lines["Ciphers"].lstrip("^").split(",")[0] == GCM
    # the fastest MAC group first, in your ssh's order; hmac-sha1 (weak under policy compatible) left out
    offered = lines["MACs"].lstrip("^").split(",")
    assert offered[:2] == ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-256"]


def test_an_adaptive_round_of_a_cipher_x_mac_run_measures_the_rows_its_edges_rest_on() -> None:
    result = _run(rounds=3)
    rows = factor_ranking.rows_to_narrow(result.trials, 0.03)
    assert rows and len(rows) < len(result.combinations) / 2
    assert any(c.mac == IMPLICIT_MAC for c in rows)  # an AEAD level rests on its one row


def test_a_run_that_swept_more_than_cipher_and_mac_has_no_factor_answer() -> None:
    result = _run(tools=("scp", "sftp"))
    assert factor_ranking.factor_answer(result) is None
    assert factor_ranking.rows_to_narrow(result.trials, 0.03) == []

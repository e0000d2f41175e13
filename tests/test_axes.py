"""results.AXES, the one table of the matrix's axes: every Combination field is an axis, in field order, and
what reads the table (the JSON keys, a connection's shape, `sshbench runs`, the reports' columns) follows it."""

from __future__ import annotations

import dataclasses

from sshbench.results import AXES, Combination, Trial, TrialKind
from sshbench.store.listing import swept


def test_every_combination_field_is_an_axis_in_field_order():
    assert [axis.name for axis in AXES] == [f.name for f in dataclasses.fields(Combination)]
    defaults = {f.name: f.default for f in dataclasses.fields(Combination)}
    for axis in AXES:  # a usual value is the field's default: what a run that did not sweep it has
        assert axis.usual is None or axis.usual == defaults[axis.name], axis


def test_the_json_keys_and_the_shape_come_from_the_table():
    combo = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256", link="lan1g", streams=2)
    names = [axis.name for axis in AXES]
    trial = Trial(combo, TrialKind.TRANSFER, 0, False, 1, 0.0).to_json()
    assert [k for k in trial if k in names] == names and trial["link"] == "lan1g" and trial["streams"] == 2
    assert combo.shape == tuple(getattr(combo, a.name) for a in AXES if a.connection)
    assert "aes128-ctr" not in combo.shape and "hmac-sha2-256" not in combo.shape  # the algorithms are not


def test_runs_names_every_swept_axis_in_the_tables_words():
    base = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256")
    for axis in AXES:
        if axis.name in ("cipher", "mac", "kex"):
            continue
        one, other = (1, 2) if axis.name == "streams" else ("one", "other")  # a build of "": not swept
        listed = swept([dataclasses.replace(base, **{axis.name: one}), dataclasses.replace(base, **{axis.name: other})])
        assert listed.startswith(f"2 {axis.plural}"), (axis.name, listed)


def test_a_handshake_summary_carries_every_axis_of_its_connections_shape():
    from sshbench.model.handshake_summary import HandshakeSummary, summarise_handshakes

    connection = [axis.name for axis in AXES if axis.connection]
    assert set(connection) <= {f.name for f in dataclasses.fields(HandshakeSummary)}
    combo = Combination("aes128-ctr", "hmac-sha2-256", "curve25519-sha256", link="lan1g", streams=4, ssh_build="b")
    trial = Trial(combo, TrialKind.HANDSHAKE, 0, False, 0, 0.0, valid=True, wall_s=0.25)
    (summary,) = summarise_handshakes([trial])
    assert [getattr(summary, name) for name in connection] == list(combo.shape)
    assert summary.median_ms == 250

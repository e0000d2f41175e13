"""Payload files: exact sizes, smaller sizes as prefixes of larger ones, random data that ssh's zlib
cannot compress, and byte ranges of a split transfer that differ from each other."""

from __future__ import annotations

import hashlib
import zlib

from sshbench import payload
from sshbench.payload import MIB, PayloadStore


def test_random_payloads_have_exact_sizes_and_share_prefixes(tmp_path):
    store = PayloadStore(tmp_path, "random")
    big, small = store.path_for(4 * MIB), store.path_for(1 * MIB)
    assert big.stat().st_size == 4 * MIB and small.stat().st_size == 1 * MIB
    assert big.read_bytes()[: 1 * MIB] == small.read_bytes()


def test_random_payload_is_incompressible_across_the_block_repeat(tmp_path, monkeypatch):
    # A small period so that the file repeats its block several times within a few MiB.
    monkeypatch.setattr(payload, "_RANDOM_PERIOD", 1 * MIB + 4093)
    data = PayloadStore(tmp_path, "random").path_for(4 * MIB).read_bytes()
    assert data[: 1 * MIB + 4093] == data[1 * MIB + 4093 : 2 * (1 * MIB + 4093)]  # the block, repeated
    assert len(zlib.compress(data, 6)) / len(data) > 0.999  # zlib's 32 KiB window never sees the repeat


def test_split_ranges_of_ladder_sizes_are_distinct(tmp_path, monkeypatch):
    monkeypatch.setattr(payload, "_RANDOM_PERIOD", 1 * MIB + 4093)
    data = PayloadStore(tmp_path, "random").path_for(8 * MIB).read_bytes()
    for streams in (2, 4, 8):
        part = len(data) // streams
        digests = {hashlib.sha256(data[i * part : (i + 1) * part]).digest() for i in range(streams)}
        assert len(digests) == streams


def test_each_payload_is_written_not_copied_and_its_digest_matches_its_bytes(tmp_path):
    for kind in ("random", "zero", "text"):
        store = PayloadStore(tmp_path / kind, kind)
        (tmp_path / kind).mkdir()
        for size in (3 * MIB, 1 * MIB):  # the smaller after the larger: written, not copied, and still its prefix
            path = store.path_for(size)
            assert store.digest(path) == hashlib.sha256(path.read_bytes()).hexdigest(), (kind, size)
        assert store.path_for(3 * MIB).read_bytes()[: 1 * MIB] == store.path_for(1 * MIB).read_bytes()


def test_the_random_block_is_drawn_as_far_as_the_sizes_need_and_extended_as_a_prefix(tmp_path, monkeypatch):
    monkeypatch.setattr(payload, "_RANDOM_PERIOD", 1 * MIB + 4093)
    store = PayloadStore(tmp_path, "random")
    small = store.path_for(1 * MIB).read_bytes()
    assert store._random is not None and len(store._random) == 1 * MIB  # not the whole period for a small size
    big = store.path_for(3 * MIB).read_bytes()  # the block grows to its period; the small payload stays its prefix
    assert len(store._random) == 1 * MIB + 4093 and big[: 1 * MIB] == small
    assert big[: 1 * MIB + 4093] == big[1 * MIB + 4093 : 2 * (1 * MIB + 4093)]

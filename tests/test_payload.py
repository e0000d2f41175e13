"""Payload files: exact sizes, smaller sizes as prefixes of larger ones, random data that ssh's zlib
cannot compress, and byte ranges of a split transfer that differ from each other."""

from __future__ import annotations

import hashlib
import zlib

from sshbench.measure import payload
from sshbench.measure.payload import MIB, PayloadStore


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


def test_a_smaller_size_is_the_tail_of_the_smallest_file_that_holds_it_and_its_digest_covers_that_range(tmp_path):
    store = PayloadStore(tmp_path, "random")
    path, offset = store.tail_for(3 * MIB)  # nothing written yet: a file of its own
    assert (path.stat().st_size, offset) == (3 * MIB, 0)
    bigger, _ = store.tail_for(5 * MIB)  # none holds it: written
    assert bigger != path and bigger.stat().st_size == 5 * MIB
    tail, offset = store.tail_for(2 * MIB)  # the 3 MiB file's last 2 MiB, not a new file
    assert (tail, offset) == (path, 1 * MIB)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, bigger.name])
    sent = path.read_bytes()[offset:]
    assert len(sent) == 2 * MIB
    assert store.digest(tail, offset, 2 * MIB) == hashlib.sha256(sent).hexdigest()
    assert store.digest(tail) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_users_own_file_is_never_read_from_an_offset(tmp_path):
    own = tmp_path / "mine"
    own.write_bytes(b"x" * (2 * MIB))
    store = PayloadStore(tmp_path, "file", user_file=own)
    assert store.tail_for(1 * MIB) == (own, 0)

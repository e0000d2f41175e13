"""HPN-SSH's threaded ciphers (algorithms/threaded.py): the twin table, and the names sshbench shows for them."""

from sshbench.algorithms import threaded
from sshbench.report import cells
from sshbench.results import IMPLICIT_MAC, Combination, short_name

MT_CHACHA = "chacha20-poly1305-mt@hpnssh.org"
CHACHA = "chacha20-poly1305@openssh.com"


def test_twin_table_pairs_hpn_mt_names_with_serial_openssh_ciphers():
    assert threaded.SERIAL_TWINS == {MT_CHACHA: CHACHA}  # `hpnssh -Q cipher` of HPN-SSH 18.8.0: its only -mt name
    for name, twin in threaded.SERIAL_TWINS.items():
        assert name.endswith("-mt@hpnssh.org") and threaded.serial_twin(twin) is None
    assert threaded.serial(MT_CHACHA) == CHACHA
    assert threaded.serial("aes128-ctr") == "aes128-ctr"  # HPN-SSH's threaded AES-CTR keeps this name
    assert threaded.serial_twin(CHACHA) is None


def test_threaded_names_stay_whole_and_apart_from_their_twin_in_short_names_and_labels():
    """The short forms drop only `@openssh.com`: the -mt name keeps its `@hpnssh.org` and never reads as its twin."""
    assert short_name(MT_CHACHA) == cells.short(MT_CHACHA) == MT_CHACHA
    assert short_name(CHACHA) == cells.short(CHACHA) == "chacha20-poly1305"
    combo = Combination(cipher=MT_CHACHA, mac=IMPLICIT_MAC, kex="curve25519-sha256")
    assert combo.label == MT_CHACHA
    assert short_name(combo.label) != short_name(Combination(CHACHA, IMPLICIT_MAC, "curve25519-sha256").label)

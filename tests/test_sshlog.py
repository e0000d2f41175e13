"""The ssh -v parser on output recorded from this OpenSSH version, and a property test that it
never crashes on arbitrary text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA
from sshbench.openssh.sshlog import (
    client_version_banner,
    explain_failure,
    parse_negotiated,
    parse_peer_kexinit,
    parse_ssh_log,
)
from sshbench.tools.remote_report import parse_marked


def test_negotiated_and_byte_counts_from_recorded_vv():
    log = parse_ssh_log((DATA / "ssh-vv-aes128-ctr.txt").read_text())
    n = log.negotiated
    assert (n.kex, n.cipher, n.mac, n.compression) == (
        "sntrup761x25519-sha512",
        "aes128-ctr",
        "hmac-sha2-256-etm@openssh.com",
        "none",
    )
    assert n.cipher_stoc == "aes128-ctr"
    assert log.sent_bytes == 3004800 and log.received_bytes == 4612
    assert log.transferred_s == 0.2
    assert log.remote_version == "OpenSSH_9.2p1 Debian-2+deb12u10"
    assert log.exit_status == 0


def test_aead_mac_is_implicit_and_compression_seen():
    log = parse_ssh_log((DATA / "ssh-v-gcm-compression.txt").read_text())
    assert log.negotiated.mac == "implicit"
    assert log.negotiated.compression == "zlib@openssh.com"
    assert log.compress_raw_bytes == 3000961 and log.compress_out_bytes == 5420


def test_peer_kexinit_lists_and_strict_marker():
    kexinit = parse_peer_kexinit((DATA / "ssh-vv-aes128-ctr.txt").read_text())
    assert kexinit is not None
    assert "chacha20-poly1305@openssh.com" in kexinit.ciphers_ctos
    assert "umac-128-etm@openssh.com" in kexinit.macs_stoc
    assert kexinit.compression_ctos == ["none", "zlib@openssh.com"]
    assert kexinit.strict_kex is True
    # without the marker
    text = (DATA / "ssh-vv-aes128-ctr.txt").read_text().replace(",kex-strict-s-v00@openssh.com", "")
    assert parse_peer_kexinit(text).strict_kex is False


def test_no_kexinit_in_plain_v_output():
    assert parse_peer_kexinit((DATA / "ssh-v-gcm-compression.txt").read_text()) is None


def test_failures_explained():
    assert "authentication failed" in explain_failure((DATA / "ssh-v-auth-failure.txt").read_text())
    refused = explain_failure((DATA / "ssh-v-refused.txt").read_text())
    assert refused == "cannot connect to 127.0.0.1 port 42223: Connection refused"
    negotiation = explain_failure(
        "Unable to negotiate with 127.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr,aes256-ctr"
    )
    assert "no matching cipher" in negotiation and "aes128-ctr,aes256-ctr" in negotiation


def test_client_banner():
    assert client_version_banner("OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19 27 Jan 2026") == (
        "OpenSSH_9.2p1 Debian-2+deb12u10",
        "OpenSSL 3.0.19",
    )


def test_server_side_report_gnu_dd():
    out = (
        "0+3398 records in\n0+3398 records out\n"
        "100000000 bytes (100 MB, 95 MiB) copied, 0.461126 s, 217 MB/s\n"
        "SSHBENCH-A 2651 (sshd) S 2633 2651 2651 0 -1 4194560 54280 292 2 1 2 8 1 0 20 0 1 0 14107 1\n"
        "SSHBENCH-B 2651 (sshd) S 2633 2651 2651 0 -1 4194560 124143 292 2 1 14 27 1 0 20 0 1 0 14107 1\n"
        "SSHBENCH-C 2653 (bash) R 2651 2653 2653 0 -1 4194560 446 12897 2 12 0 0 7 10 20 0 1 0 14129 1\n"
        "SSHBENCH-HZ 100\n"
    )
    report = parse_marked(out)
    assert report.received_bytes == 100000000
    assert report.reader_s == 0.461126
    assert abs(report.server_cpu_s - 0.31) < 1e-9  # (14+27) - (2+8) ticks
    assert abs(report.sink_cpu_s - 0.17) < 1e-9


def test_server_side_report_bsd_and_busybox_dd():
    assert parse_marked("1048576 bytes transferred in 0.012 secs (87381333 bytes/sec)\n").reader_s == 0.012
    busy = parse_marked("1048576 bytes (1.0MB) copied, 0.010000 seconds, 100.0MB/s\n")
    assert busy.received_bytes == 1048576 and busy.reader_s == 0.01


def test_server_side_report_without_proc():
    report = parse_marked("5 bytes (5 B) copied, 0.001 s, 5 kB/s\nSSHBENCH-A -\nSSHBENCH-B -\nSSHBENCH-C -\n")
    assert report.received_bytes == 5 and report.server_cpu_s is None and report.sink_cpu_s is None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parsers_never_crash_on_arbitrary_text(text):
    parse_ssh_log(text)
    parse_negotiated(text)
    parse_peer_kexinit(text)
    explain_failure(text)
    client_version_banner(text)
    parse_marked(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "debug1: kex: algorithm: ",
                "debug2: peer server KEXINIT proposal",
                "debug2: KEX algorithms: ",
                "Transferred: sent ",
                "SSHBENCH-A ",
                "SSHBENCH-B ",
                "SSHBENCH-HZ ",
                " bytes (1 B) copied, ",
                ")",
                "(",
                "debug1: kex: client->server cipher: x MAC: y compression: ",
                "1",
                "0.5",
                "\n",
                " ",
                ",",
            ]
        ),
        max_size=40,
    ).map("".join)
)
def test_parsers_never_crash_on_near_miss_text(text):
    parse_ssh_log(text)
    parse_peer_kexinit(text)
    parse_marked(text)


def test_server_report_reads_the_kernels_byte_counts_and_the_clock_is_scaled_by_them():
    from sshbench.measure.clock import reader_data_phase

    out = (
        "3000000 bytes (3.0 MB, 2.9 MiB) copied, 0.5 s, 6 MB/s\n"
        "SSHBENCH-TCP 0 0 127.0.0.1:22 127.0.0.1:5555   cubic bytes_sent:5041 bytes_acked:5041 "
        "bytes_received:3013105 segs_out:73\n"
        "SSHBENCH-TCP0 0 0 127.0.0.1:22 127.0.0.1:5555   cubic bytes_received:301310 segs_out:9\n"
    )
    report = parse_marked(out)
    assert (report.tcp_bytes_received, report.tcp_bytes_before_reader) == (3013105, 301310)
    # a tenth arrived before the reader's clock started: the data phase is 1/0.9 of its clock
    assert abs(reader_data_phase(0.5, 3013105, 301310) - 0.5 * 3013105 / (3013105 - 301310)) < 1e-12
    assert reader_data_phase(0.5, None, None) == 0.5  # no ss on the server: the reader's clock as is
    assert reader_data_phase(0.5, 100, 100) == 0.5  # nonsense counts are not used
    # a reader that started with most of a 2 MiB upload buffered: its own time, not x20 (longer than the trial)
    assert reader_data_phase(0.047, 2_200_000, 2_090_000) == 0.047
    assert reader_data_phase(0.5, 2_000_000, 1_000_000) == 1.0  # half timed: still scaled
    assert parse_marked("SSHBENCH-TCP -\nSSHBENCH-TCP0 -\n").tcp_bytes_received is None


def test_download_clock_runs_until_the_client_has_the_tail():
    from sshbench.measure import clock
    from sshbench.results import Combination, Trial

    # dd stopped after 0.5 s; ss read bytes_acked 5 ms later: 60 MiB of the 64 acked (plus the handshake).
    out = (
        "67108864 bytes (67 MB, 64 MiB) copied, 0.5 s, 134 MB/s\n"
        "SSHBENCH-TCP 0 0 10.0.0.2:22 10.0.0.1:5555   bbr bytes_sent:67200000 bytes_acked:62919560 "
        "bytes_received:5000 segs_out:73\n"
        "SSHBENCH-TCP0 0 0 10.0.0.2:22 10.0.0.1:5555   bbr bytes_sent:4000 bytes_acked:4000 bytes_received:3000\n"
        "SSHBENCH-END 1700000000.100000000\nSSHBENCH-TCPAT 1700000000.105000000\n"
    )
    report = parse_marked(out)
    assert (report.tcp_bytes_acked_before_reader, report.tcp_bytes_acked_after_reader) == (4000, 62919560)
    assert abs(report.tcp_read_lag_s - 0.005) < 1e-6 and report.reader_ended_at == 1700000000.1
    wire = 67108864 + 4000 + 80000  # ssh -v: received, handshake and framing included
    tail = clock.download_tail_bytes(0.5, wire, 4000, 62919560, 0.005)
    acked_by_end = (62919560 - 4000) * 0.5 / 0.505
    assert tail == round(wire - 4000 - acked_by_end)
    trial = Trial(
        Combination("aes128-gcm@openssh.com", "implicit", "curve25519-sha256", direction="down"),
        "transfer",
        0,
        False,
        67108864,
        1.0,
        received_bytes=wire,
        tcp_bytes_unacked_at_clock_end=tail,
    )
    clock.set_reader_clock(trial, 0.5)
    assert trial.reader_s == 0.5 and abs(trial.data_s - 0.5 * wire / (wire - tail)) < 1e-12 and trial.data_s > 0.53
    # Missing or nonsense figures: no tail, the reader's clock as is.
    assert clock.download_tail_bytes(0.5, None, 4000, 62919560, 0.005) is None
    assert clock.download_tail_bytes(0.5, wire, 4000, 4000, 0.005) is None  # nothing acked
    assert clock.download_tail_bytes(0.5, wire, 4000, 9000, 0.0) is None  # "tail" over half: not a tail
    assert parse_marked("SSHBENCH-TCP -\nSSHBENCH-TCP0 -\nSSHBENCH-END x\n").tcp_read_lag_s is None

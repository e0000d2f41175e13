"""sshping's echo test and connect times: the pure parts, then for real against a private sshd."""

from __future__ import annotations

import pytest

from sshbench.host.cleanup import Cleanup
from sshbench.links import nshost
from sshbench.measure.latency import (
    REMOTE_COMMAND,
    EchoError,
    EchoResult,
    echo_argv,
    measure_connect,
    measure_echo,
    summarise_echo,
)
from sshbench.targets import PrivateOpenSSH


def test_summarise_echo():
    s = summarise_echo([float(v) for v in range(1, 101)])  # 1..100 us
    assert s["n"] == 100 and s["median_us"] == 50.5 and s["max_us"] == 100.0
    assert s["p90_us"] == pytest.approx(90.1) and s["p99_us"] == pytest.approx(99.01)
    assert summarise_echo([7.0]) == {"median_us": 7.0, "p90_us": 7.0, "p99_us": 7.0, "max_us": 7.0, "n": 1}
    assert summarise_echo([]) == {"median_us": None, "p90_us": None, "p99_us": None, "max_us": None, "n": 0}
    assert summarise_echo([300, 100, 200])["median_us"] == 200  # order does not matter


def test_echo_argv_forces_a_pty_and_raw_mode():
    argv = echo_argv(["ssh", "-F", "/dev/null", "-o", "Port=2222", "host"])
    assert argv[:2] == ["ssh", "-tt"] and argv[-2] == "host" and argv[-1] == REMOTE_COMMAND
    assert "stty raw -echo" in REMOTE_COMMAND and REMOTE_COMMAND.endswith("exec cat")
    with pytest.raises(ValueError):
        echo_argv([])
    result = EchoResult(rtts_us=[1.0, 2.0], chars=3)
    assert result.echoed == 2 and not result.ok


@pytest.fixture(scope="module")
def private_sshd():
    cleanup = Cleanup()
    try:
        target = PrivateOpenSSH()
        target.start(cleanup)
        yield ["ssh", *target.client_options(), *target.destination()]
    finally:
        cleanup.close()


def test_echo_on_loopback(private_sshd):
    result = measure_echo(private_sshd, chars=50, timeout_s=20)
    assert result.ok, result.error
    assert result.echoed == 50 and all(rtt > 0 for rtt in result.rtts_us)
    s = result.summary()
    print(f"echo on loopback: {s}, set-up {result.setup_s * 1000:.0f} ms")
    assert 0 < s["median_us"] < 50_000 and s["median_us"] <= s["p90_us"] <= s["p99_us"] <= s["max_us"]


def test_echo_per_cipher(private_sshd):
    for cipher in ("aes128-ctr", "chacha20-poly1305@openssh.com"):
        result = measure_echo([private_sshd[0], "-c", cipher, *private_sshd[1:]], chars=20, timeout_s=20)
        assert result.ok, (cipher, result.error)


def test_connect_times(private_sshd):
    times = measure_connect(private_sshd, n=2)
    assert len(times) == 2 and all(0 < t < 10 for t in times)


def test_failures_are_one_line(private_sshd):
    wrong = [private_sshd[0], "-o", "Port=1", *private_sshd[1:]]  # the first -o wins: nothing listens on 1
    with pytest.raises(EchoError, match="did not start"):
        measure_echo(wrong, chars=5, timeout_s=10)
    with pytest.raises(EchoError, match="connection 1 of 1 failed"):
        measure_connect(wrong, n=1)


@pytest.mark.skipif(nshost.missing_requirement() is not None, reason=nshost.missing_requirement() or "")
def test_echo_through_the_namespace_host():
    with nshost.NamespaceHost() as host:
        result = measure_echo(host.ssh_argv(), chars=50, timeout_s=20)
        assert result.ok, result.error
        print(f"echo through the namespace host: {result.summary()}")
        assert 0 < result.summary()["median_us"] < 50_000

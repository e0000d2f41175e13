"""--pin: where the client and the private server run (sshbench.host.placement)."""

from __future__ import annotations

import pytest

from sshbench.host import placement
from sshbench.host.placement import Placement
from sshbench.settings import TargetSpec
from sshbench.targets import make_target
from sshbench.targets.local import LocalServer


@pytest.mark.fast
def test_two_cpus_give_one_to_each_side() -> None:
    chosen, reason = placement.choose(True, 1, cpus=[3, 1])
    assert chosen == Placement(client_cpus=(1,), server_cpus=(3,)) and reason is None
    assert chosen.client_prefix() == ["taskset", "-c", "1"]
    assert chosen.server_prefix() == ["taskset", "-c", "3"]


@pytest.mark.fast
def test_more_cpus_split_in_halves_and_streams_must_fit_a_half() -> None:
    chosen, _ = placement.choose(True, 2, cpus=list(range(5)))
    assert chosen is not None and chosen.client_cpus == (0, 1) and chosen.server_cpus == (2, 3, 4)
    none, reason = placement.choose(True, 2, cpus=[0, 1])
    assert none is None and reason is not None and "2 parallel streams" in reason


@pytest.mark.fast
def test_one_cpu_or_no_pin_pins_nothing() -> None:
    assert placement.choose(False, 1, cpus=[0, 1]) == (None, None)  # --no-pin: not even a notice
    none, reason = placement.choose(True, 1, cpus=[0])
    assert none is None and reason is not None and "1 usable CPU" in reason


@pytest.mark.fast
def test_a_private_server_is_pinned_unless_asked_not_to() -> None:
    pinned = make_target(TargetSpec())
    assert isinstance(pinned, LocalServer)
    expected = placement.choose(True, 1)[0]
    assert pinned.placement == expected
    assert pinned.client_prefix() == (expected.client_prefix() if expected else [])
    loose = make_target(TargetSpec(pin=False))
    assert isinstance(loose, LocalServer) and loose.placement is None and loose.client_prefix() == []


def _allowed(text: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Cpus_allowed_list"))


def test_a_started_server_and_its_client_run_on_their_own_cpus() -> None:
    """Real sshd: its sessions inherit the server's CPUs, a client started with client_prefix() the client's."""
    import subprocess

    from sshbench.host.cleanup import Cleanup

    target = make_target(TargetSpec())
    assert isinstance(target, LocalServer)
    if target.placement is None:
        pytest.skip("fewer than 2 usable CPUs or no taskset: nothing is pinned here")
    cleanup = Cleanup()
    try:
        target.start(cleanup)
        status, server_side = target.run_remote("cat /proc/self/status", timeout_s=30)
        assert status == 0, server_side
        client = subprocess.run(
            [*target.client_prefix(), "cat", "/proc/self/status"], capture_output=True, text=True, timeout=30
        )
    finally:
        cleanup.close()
    assert not target.alive()
    assert _allowed(server_side) == ",".join(map(str, target.placement.server_cpus))
    assert _allowed(client.stdout) == ",".join(map(str, target.placement.client_cpus))
    assert target.describe()["placement"]["server_cpus"] == list(target.placement.server_cpus)


@pytest.mark.fast
def test_a_described_placement_reads_back_and_odd_documents_read_as_none() -> None:
    pinned = Placement(client_cpus=(0,), server_cpus=(1, 2))
    assert Placement.from_json(pinned.describe()) == pinned
    assert pinned.text() == "ssh on CPU 0, server on CPU 1,2"
    for odd in (None, "0-1", {}, {"client_cpus": [0]}, {"client_cpus": [], "server_cpus": [1]}):
        assert Placement.from_json(odd) is None

"""Every server of the registry (targets.SERVERS, and LINK_SERVERS behind emulated links) is a Target that
satisfies the capabilities protocol the baselines read (sshbench.capabilities), builds itself from a run's
settings without starting anything, and, before it starts, says it is a server on this machine. A server
added to the registry is tested here without a line of its own."""

from __future__ import annotations

import inspect

import pytest

from fakes import FakeRemote, FakeTarget
from sshbench.capabilities import RawTcpMode, TargetCapabilities
from sshbench.errors import RunError, UsageError
from sshbench.settings import RunSettings, TargetSpec
from sshbench.targets import LINK_SERVERS, SERVERS, RemoteHost, Target, make_target

CLASSES = {**{f"server-{k}": v for k, v in SERVERS.items()}, **{f"link-{k}": v for k, v in LINK_SERVERS.items()}}
CLASSES["host"] = RemoteHost
PROTOCOL_METHODS = [n for n, v in vars(TargetCapabilities).items() if callable(v) and not n.startswith("_")]
PROTOCOL_FIELDS = [*TargetCapabilities.__annotations__, "shares_local_filesystem"]


@pytest.mark.parametrize("name", list(CLASSES))
def test_every_target_class_has_the_capabilities(name: str) -> None:
    cls = CLASSES[name]
    assert issubclass(cls, Target)
    for field in PROTOCOL_FIELDS:
        assert hasattr(cls, field), (name, field)  # a default on the class: never a getattr probe
    for method in PROTOCOL_METHODS:
        ours, theirs = inspect.signature(getattr(cls, method)), inspect.signature(getattr(TargetCapabilities, method))
        assert list(ours.parameters) == list(theirs.parameters), (name, method, ours, theirs)
    assert isinstance(cls.__new__(cls), TargetCapabilities)
    assert not inspect.isabstract(cls), name


@pytest.mark.parametrize("server", list(SERVERS))
def test_every_server_builds_from_a_target_spec_and_is_local_before_it_starts(server: str) -> None:
    try:
        target = SERVERS[server].from_spec(TargetSpec(servers=(server,)))
    except (RunError, UsageError) as err:  # its program is not installed here
        pytest.skip(f"{server}: {err}")
    assert type(target) is SERVERS[server]
    assert target.host is None and target.facts is None and target.shares_local_filesystem
    assert target.raw_tcp().mode is RawTcpMode.LOCAL and target.raw_tcp().runs
    assert target.server_pid() is None  # nothing started
    target.offer_client_builds(["/usr/bin/ssh"])  # a build sweep's other clients: taken or ignored, never an error
    assert target.describe()["kind"] == target.kind


@pytest.mark.fast  # make_target only builds it: nothing starts
def test_an_emulated_link_gets_the_link_servers_class() -> None:
    try:
        target = make_target(TargetSpec.from_options(link="lan1g"))
    except (RunError, UsageError) as err:  # no root or no iproute2 here
        pytest.skip(str(err))
    assert type(target) is LINK_SERVERS["openssh"]
    assert target.raw_tcp().mode is RawTcpMode.LINK
    assert type(make_target(TargetSpec())) is SERVERS["openssh"]
    # a run builds the same spec from its settings
    assert RunSettings(link="lan1g,loopback").target == TargetSpec.from_options(link="lan1g,loopback")


def test_a_remote_host_says_how_its_raw_tcp_control_runs() -> None:
    host = RemoteHost("nas")  # nothing contacted before start()
    assert host.host == "nas" and host.facts is not None and not host.shares_local_filesystem
    assert host.raw_tcp().mode is RawTcpMode.REMOTE and host.raw_tcp().both_directions
    host.remote_raw_tcp, host.raw_tcp_skip_reason = False, "raw TCP control skipped: nas has no python3"
    assert host.raw_tcp().mode is RawTcpMode.SKIPPED and host.raw_tcp().skip_reason == host.raw_tcp_skip_reason


@pytest.mark.parametrize("fake", [FakeTarget, FakeRemote])
def test_the_fakes_are_targets_too(fake) -> None:
    target = fake()
    assert isinstance(target, Target) and isinstance(target, TargetCapabilities)
    assert target.raw_tcp().runs is target.shares_local_filesystem

"""The typed specs built once from a run's settings: TargetSpec (what starts a target, alone) and MatrixSpec
(the other axes, parsed). Fast: nothing starts."""

from __future__ import annotations

import pytest

from sshbench.axis_values import MatrixSpec
from sshbench.errors import UsageError
from sshbench.settings import RunSettings, TargetSpec


def test_the_matrix_spec_holds_the_parsed_axes():
    settings = RunSettings(tool="pipe,scp", direction="both", sink="null,tmpfs", compression="both", parallel="1,2")
    axes = settings.axes
    assert axes == MatrixSpec(
        tools=("pipe", "scp"),
        directions=("up", "down"),
        sinks=("null", "tmpfs"),
        payloads=("random",),
        compressions=("none", "zlib@openssh.com"),
        links=tuple(settings.link_profiles()),
        stream_counts=(1, 2),
    )
    with pytest.raises(UsageError, match="--direction"):
        _ = RunSettings(direction="sideways").axes


def test_a_run_and_a_command_build_the_same_target_spec_from_the_same_options():
    settings = RunSettings(host="box", ssh="/a/ssh,/b/ssh", ssh_config="cfg", raw_tcp_port=5201, pin=False)
    spec = settings.target
    assert spec.host == "box" and spec.ssh_paths == ("/a/ssh", "/b/ssh") and spec.ssh == "/a/ssh"
    assert spec.sshd_paths == (None,) and spec.sshd is None and spec.raw_tcp_port == 5201 and spec.pin is False
    assert TargetSpec.from_options(host="box", ssh="/a/ssh,/b/ssh", ssh_config="cfg") == TargetSpec(
        host="box", ssh_paths=("/a/ssh", "/b/ssh"), ssh_config="cfg"
    )
    assert TargetSpec() == TargetSpec.from_options() and not TargetSpec().emulated
    linked = RunSettings(link="lan1g", parallel="1,2").target
    assert linked.emulated and linked.most_streams == 2

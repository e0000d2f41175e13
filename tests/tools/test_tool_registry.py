"""Every transfer tool of the registry (tools.TOOLS) builds its client command for both directions, with
the trial's files, the host and (where it pins them) the algorithm options in it. A tool added to the
registry is tested here without a line of its own; tests/tools/test_transfer_tools.py runs them for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from sshbench.tools import TOOLS, TransferTool, get_tool
from sshbench.tools.base import TrialFiles

HOST = "127.0.0.1"


def _options(tmp_path: Path) -> list[str]:
    """ssh options as a target gives them (identity, port, user, known hosts) plus the pinned algorithms."""
    key, known = tmp_path / "client_key", tmp_path / "known_hosts"
    key.write_text("not a key\n")
    known.write_text(f"[{HOST}]:2222 ssh-ed25519 AAAA\n")
    return [
        *("-F", "/dev/null", "-i", str(key), "-o", "Port=2222", "-o", "User=bench"),
        *("-o", f"UserKnownHostsFile={known}", "-o", "Ciphers=aes128-ctr", "-o", "MACs=hmac-sha2-256"),
    ]


def _files(tmp_path: Path, tool: TransferTool) -> TrialFiles:
    payload = tmp_path / "payload-random-4M"
    payload.write_bytes(b"\0" * 16)
    return TrialFiles(
        local_source=str(payload),
        remote_source="/dev/shm/sshbench-x/payload-random-4M",
        remote_sink="/dev/shm/sshbench-x/sink" if tool.needs_file_sink else "/dev/null",
        local_sink=str(tmp_path / "sink") if tool.needs_file_sink else "/dev/null",
        streams=2 if tool.splits_streams else 1,
    )


@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize(("client", "name"), list(TOOLS), ids=[f"{c}-{n}" for c, n in TOOLS])
def test_every_tool_builds_its_invocation(client: str, name: str, direction: str, tmp_path: Path) -> None:
    tool = get_tool(name, client)
    assert tool.name == name and isinstance(tool, TOOLS[(client, name)])
    workdir = tmp_path / "work"
    workdir.mkdir()
    files = _files(tmp_path, tool)
    invocation = tool.invocation("ssh", _options(tmp_path), HOST, direction, files, workdir)
    argv = invocation.argv
    assert argv and all(isinstance(a, str) for a in argv), argv
    text = " ".join(argv)
    assert HOST in text, (name, direction, argv)
    moved = files.local_source if direction == "up" else files.remote_source
    written = " ".join(f.read_text(errors="replace") for f in workdir.iterdir() if f.is_file())  # sftp's batch
    assert moved in text or moved in written or invocation.stdin == moved, (name, direction, argv, invocation.stdin)
    if tool.pins and tool.client_name is None:  # the algorithms reach its SSH client
        assert "aes128-ctr" in text, (name, direction, argv)
    if tool.splits_streams and direction in tool.stream_directions:
        assert "2" in argv or any("2" in a.split() for a in argv), (name, argv)  # its N connections
    assert tool.parse_output("", "") is not None  # no output: an empty report, never an exception


@pytest.mark.parametrize(("client", "name"), list(TOOLS), ids=[f"{c}-{n}" for c, n in TOOLS])
def test_every_tool_says_what_it_needs(client: str, name: str) -> None:
    tool = get_tool(name, client)
    assert tool.program and tool.package
    reason = tool.missing()
    assert reason is None or tool.program in reason and "install" in reason
    assert set(tool.stream_directions) <= {"up", "down"}

"""Transfer-tool registry: every way of moving the payload, behind one interface (tools/base.py)."""

from __future__ import annotations

from sshbench.errors import RunError, UsageError
from sshbench.tools.asyncssh_pipe import AsyncsshPipeTool
from sshbench.tools.base import Invocation, SinkReport, TransferTool, TrialFiles
from sshbench.tools.multistream import LftpTool, RcloneTool
from sshbench.tools.pipe import PipeTool
from sshbench.tools.rsync import RsyncTool
from sshbench.tools.scp import ScpLegacyTool, ScpTool
from sshbench.tools.sftp import SftpTool
from sshbench.tools.split import SplitTool

# One registry keyed by (client implementation, tool name): OpenSSH's client runs every tool; AsyncSSH's
# client has its own pipe.
TOOLS: dict[tuple[str, str], type[TransferTool]] = {
    **{
        ("openssh", tool.name): tool
        for tool in (PipeTool, ScpTool, ScpLegacyTool, SftpTool, RsyncTool, SplitTool, LftpTool, RcloneTool)
    },
    ("asyncssh", "pipe"): AsyncsshPipeTool,
    ("rclone", "rclone"): RcloneTool,  # `--tool rclone`: Go's SSH client (TransferTool.client_name)
}


def tool_names(client: str = "openssh") -> list[str]:
    return [name for c, name in TOOLS if c == client]


def get_tool(name: str, client: str = "openssh") -> TransferTool:
    try:
        return TOOLS[(client, name)]()
    except KeyError:
        if client == "openssh":
            raise UsageError(f"unknown transfer tool {name!r}; known: {', '.join(tool_names())}") from None
        raise UsageError(
            f"the {client} client has no {name!r} transfer tool; known: {', '.join(tool_names(client)) or 'none'}"
        ) from None


def tools_for_run(names: tuple[str, ...] | list[str]) -> dict[str, TransferTool]:
    """A run's tools by name, each checked installed here (RunError, exit 1, naming what is missing)."""
    tools = {name: get_tool(name) for name in names}
    for tool in tools.values():
        if reason := tool.missing():
            raise RunError(f"transfer tool {tool.name}: {reason}")
    return tools


__all__ = ["TOOLS", "Invocation", "SinkReport", "TransferTool", "TrialFiles", "get_tool", "tool_names", "tools_for_run"]

"""Transfer-tool registry: every way of moving the payload, behind one interface (tools/base.py)."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.tools.asyncssh_pipe import AsyncsshPipeTool
from sshbench.tools.base import Invocation, SinkReport, TransferTool, TrialFiles
from sshbench.tools.pipe import PipeTool
from sshbench.tools.rsync import RsyncTool
from sshbench.tools.scp import ScpLegacyTool, ScpTool
from sshbench.tools.sftp import SftpTool

TOOLS: dict[str, type[TransferTool]] = {
    tool.name: tool for tool in (PipeTool, ScpTool, ScpLegacyTool, SftpTool, RsyncTool)
}


# Tools of client implementations other than OpenSSH's, by (client, tool): e.g. an AsyncSSH pipe.
CLIENT_TOOLS: dict[tuple[str, str], type[TransferTool]] = {("asyncssh", "pipe"): AsyncsshPipeTool}


def client_tool(client: str, tool: str) -> TransferTool:
    try:
        return CLIENT_TOOLS[(client, tool)]()
    except KeyError:
        raise UsageError(f"the {client} client has no {tool!r} transfer tool; known: "
                         f"{', '.join(t for c, t in CLIENT_TOOLS if c == client) or 'none'}") from None


def get_tool(name: str) -> TransferTool:
    try:
        return TOOLS[name]()
    except KeyError:
        raise UsageError(f"unknown transfer tool {name!r}; known: {', '.join(TOOLS)}") from None


__all__ = ["CLIENT_TOOLS", "TOOLS", "client_tool", "get_tool", "Invocation", "SinkReport", "TransferTool", "TrialFiles"]

"""Transfer-tool registry: every way of moving the payload, behind one interface (tools/base.py)."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.tools.base import Invocation, SinkReport, TransferTool, TrialFiles
from sshbench.tools.pipe import PipeTool
from sshbench.tools.rsync import RsyncTool
from sshbench.tools.scp import ScpLegacyTool, ScpTool
from sshbench.tools.sftp import SftpTool

TOOLS: dict[str, type[TransferTool]] = {
    tool.name: tool for tool in (PipeTool, ScpTool, ScpLegacyTool, SftpTool, RsyncTool)
}


def get_tool(name: str) -> TransferTool:
    try:
        return TOOLS[name]()
    except KeyError:
        raise UsageError(f"unknown transfer tool {name!r}; known: {', '.join(TOOLS)}") from None


__all__ = ["TOOLS", "get_tool", "Invocation", "SinkReport", "TransferTool", "TrialFiles"]

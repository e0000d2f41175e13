"""Transfer-tool registry."""

from __future__ import annotations

from sshbench.errors import UsageError
from sshbench.tools.base import SinkReport, TransferTool
from sshbench.tools.pipe import PipeTool

TOOLS: dict[str, type[TransferTool]] = {PipeTool.name: PipeTool}


def get_tool(name: str) -> TransferTool:
    try:
        return TOOLS[name]()
    except KeyError:
        raise UsageError(f"unknown transfer tool {name!r}; known: {', '.join(TOOLS)}") from None


__all__ = ["TOOLS", "get_tool", "SinkReport", "TransferTool"]

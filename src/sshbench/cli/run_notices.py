"""`run` options that would do nothing in the combination given say so: a notice (printed with the run's
other notices, stored with it) where the run still makes sense, or one line and exit 2 where it would
measure something else than was asked. Decided from the options alone, before anything starts; what
needs the algorithms (every selected cipher AEAD: --macs and --full's MACs idle) is plan.py's, and a
tool that cannot compress beside one that can is left out of the zlib rows there.

`given`: the options the user typed (cli/run_options.py `given_options`; a preset's own count as not typed);
`args`: the parsed options after a preset was applied."""

from __future__ import annotations

import argparse

from sshbench.errors import UsageError
from sshbench.settings import RunSettings
from sshbench.tools import TOOLS


def check(args: argparse.Namespace, given: set[str], settings: RunSettings) -> list[str]:
    """The notices for `settings` as typed; UsageError (exit 2) for the combinations refused."""
    notices: list[str] = []
    fixed = "--file (its size is the size)" if settings.file else "--size" if settings.size else None
    if fixed:
        if "seconds" in given:
            notices.append(f"--seconds sizes the adaptive payload; {fixed} fixes it, so --seconds has no effect")
        if "max_size" in given:
            notices.append(f"--max-size bounds the adaptive payload; {fixed} fixes it, so --max-size has no effect")
    if settings.file:
        if "size" in given and settings.size:
            notices.append("--file is sent whole (its size is the size): --size has no effect")
        if "payload" in given:
            notices.append("--file is the payload: --payload has no effect")
    if args.budget is not None and not settings.adaptive:
        notices.append(f"--budget bounds the rounds --runs auto adds; --runs {settings.runs} is fixed: no effect")
    if not settings.baselines:
        if settings.raw_tcp_port is not None:
            notices.append("--no-baselines skips the raw TCP control: --raw-tcp-port has no effect")
        if not settings.default_reference:
            notices.append("--no-baselines already leaves your ssh's default out: --no-reference has no effect")
    sinks = settings.axes.sinks  # parsed once with the run's spec
    if settings.verify and "null" in sinks and len(sinks) > 1:
        notices.append("--verify checks file sinks: the null sink's rows keep nothing to check")
    if settings.sshd and "openssh" not in settings.target.servers:
        servers = ", ".join(settings.target.servers)
        notices.append(f"--sshd is the private OpenSSH server's binary; --server {servers} starts none: no effect")
    tools = [TOOLS.get(("openssh", name)) for name in settings.axes.tools]
    idle = [tool.name for tool in tools if tool is not None and not tool.compresses]
    # --compression both, or another tool beside: plan.py leaves out only the zlib rows of these
    if idle and len(idle) == len(tools) and "none" not in settings.axes.compressions:
        raise UsageError(
            f"--compression on: {', '.join(idle)} cannot compress (its SSH client has no zlib); "
            "use another --tool, or --compression off"
        )
    return notices

"""`sshbench completion bash|zsh|tcsh`: a shell completion script generated from the one parser (shtab), which
main() passes in as `args.parser`."""

from __future__ import annotations

import argparse

from rich.console import Console

from sshbench.errors import UsageError

SHELLS = ("bash", "zsh", "tcsh")


def add_commands(sub: argparse._SubParsersAction) -> None:
    comp = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print a completion script for SHELL, generated from sshbench's own parser. "
        "bash: sshbench completion bash > ~/.local/share/bash-completion/completions/"
        "sshbench; zsh: sshbench completion zsh > ~/.zfunc/_sshbench",
    )
    comp.add_argument("shell", help=f"one of {', '.join(SHELLS)}")
    comp.set_defaults(handler=cmd_completion)


def cmd_completion(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.shell not in SHELLS:
        raise UsageError(f"unknown shell {args.shell!r}; choose one of: {', '.join(SHELLS)}")
    import shtab  # loaded by this command only, not at every start-up

    out.file.write(shtab.complete(args.parser, shell=args.shell))
    out.file.flush()
    return 0

"""The root parser a command line is parsed with: a usage error is one `sshbench: error:` line and exit 2
(UsageError), and each command group given adds its subcommands (`add_commands(sub)`, each with its handler).

main.py builds it with every group. A command that parses `sshbench run` options again (run's typed options,
fleet's options for its hosts' runs) builds it with the run group alone: no command module imports main.py,
which imports them all."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable

from sshbench import __version__
from sshbench.errors import UsageError

# A command group's `add_commands`: registers its subcommands with set_defaults(handler=...).
AddCommands = Callable[[argparse._SubParsersAction], None]


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # one line, exit 2, like every usage error
        raise UsageError(message)


def make_parser(groups: Iterable[AddCommands]) -> argparse.ArgumentParser:
    parser = Parser(
        prog="sshbench", description="Which SSH cipher, MAC and key exchange is fastest here, and what it costs in CPU."
    )
    parser.add_argument("--version", action="version", version=f"sshbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add_commands in groups:
        add_commands(sub)
    # Every subcommand's --help opens with a description: its one-line help unless it has its own.
    helps = {action.dest: action.help for action in sub._choices_actions}
    for name, command in sub.choices.items():
        if not command.description and helps.get(name):
            text = str(helps[name])
            command.description = text[0].upper() + text[1:] + "."
    return parser

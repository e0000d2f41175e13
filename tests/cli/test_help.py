"""Every subcommand's --help has a description; `run --help` lists the link profiles and their syntax,
the size minimum and the exit codes; `crossover --help` says it needs root."""

import argparse

from sshbench.cli.main import build_parser
from sshbench.links.profiles import LINKS


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_subcommand_has_a_description():
    for name, command in _commands().items():
        assert command.description and len(command.description) > 20, name


def test_run_help_lists_links_sizes_and_exit_codes():
    text = _commands()["run"].format_help()
    for name in LINKS:
        assert name in text
    assert "rate=RATE" in text and "delay=" in text
    assert "at least 1 MiB" in text
    for code in ("0 ", "1 ", "2 ", "130", "143", "129"):
        assert code in text.split("exit codes:")[1]


def test_crossover_help_says_root():
    assert "root" in _commands()["crossover"].format_help()

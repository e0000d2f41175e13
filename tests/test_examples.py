"""docs/examples/ (issue 55): every page's command still parses as a user would type it, its output block holds what
a run printed (scripts/examples.py fills it), and the index links every page; `run --help`'s examples parse too."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from sshbench.cli.main import build_parser
from sshbench.cli.run_options import RUN_EXAMPLES

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "examples").glob("[0-9]*.md"))


def _script():
    spec = importlib.util.spec_from_file_location("examples_script", ROOT / "scripts" / "examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_is_a_page_for_each_of_the_five_seed_posts() -> None:
    seeds = {re.search(r"^# Seed (\d{3})", page.read_text(), re.M) for page in PAGES}
    assert {m.group(1) for m in seeds if m} == {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_a_pages_command_parses(page: Path) -> None:
    argv = _script().command_of(page.read_text())
    args = build_parser().parse_args(argv)  # argparse exits 2 on an option that no longer exists
    assert args.handler is not None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_a_pages_output_is_a_real_run(page: Path) -> None:
    text = page.read_text()
    block = re.search(r"<!-- output[^\n]*-->\n(.*?)<!-- /output -->", text, re.S)
    assert block is not None, "no output markers"
    assert "(not run yet)" not in block.group(1)
    assert re.search(r"^On \d{4}-\d{2}-\d{2}, .+: \d+ s, exit \d+\.$", block.group(1), re.M), "no run line"
    assert "Fastest here:" in block.group(1)
    assert "TODO" not in text


def test_the_index_links_every_page() -> None:
    index = (ROOT / "docs" / "examples" / "README.md").read_text()
    for page in PAGES:
        assert f"({page.name})" in index, page.name


def test_run_help_examples_parse() -> None:
    commands = [line.strip().split("  ")[0] for line in RUN_EXAMPLES.splitlines() if line.startswith("  sshbench ")]
    assert len(commands) >= 5
    for command in commands:
        build_parser().parse_args(shlex.split(command)[1:])


def test_the_readmes_recipes_parse() -> None:
    """Every command in the README's "What to run" table, as a user would copy it."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## What to run", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| "))
    commands = re.findall(r"`(sshbench [^`]+)`", table)
    assert len(commands) >= 10
    for command in commands:
        build_parser().parse_args(shlex.split(command)[1:])

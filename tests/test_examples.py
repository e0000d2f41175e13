"""docs/examples/ (issue 55): every page's command still parses as a user would type it, its output block holds what
a run printed (scripts/examples.py fills it), and the index links every page; `run --help`'s examples parse too."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import run_cli
from fakes import constructed_run
from sshbench.cli.main import build_parser
from sshbench.cli.run_options import RUN_EXAMPLES
from sshbench.report import conclusion
from sshbench.store.document import result_from_document, to_document

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "examples").glob("[0-9]*.md"))
RUNS = ROOT / "docs" / "examples" / "runs"  # each page's run (scripts/examples.py keeps its --json document)
# The line above a page's output (scripts/examples.py): when, where, how long, the exit code and which sshbench.
STAMP = re.compile(
    r"^On \d{4}-\d{2}-\d{2}, .+: \d+ s, exit \d+, sshbench (?P<version>\S+) \((?P<checkout>[^)]+)\)\.$", re.M
)
OUTPUT = re.compile(r"<!-- output[^\n]*-->\n.*?```\n(.*?)```\n<!-- /output -->", re.S)


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
    assert STAMP.search(block.group(1)), "no run line (when, where, which sshbench)"
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


# --- the pages stay true: their answer block is what sshbench prints now ------------------------------------------


def answer_block(page_text: str) -> list[str]:
    """The answer block of a page's output: the lines after sshbench's own `sshbench: ...` lines (the preset, where
    the run was saved) up to the first blank line (the table follows it)."""
    found = OUTPUT.search(page_text)
    assert found is not None, "no output block"
    lines = found.group(1).splitlines()
    # the block starts at its headline: before it, sshbench's own lines and any trial's progress line ("invalid trial")
    start = next((i for i, line in enumerate(lines) if line.startswith("Fastest here")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def stale(page_lines: list[str], now: list[str]) -> list[str]:
    """What differs: the page's lines the current format no longer prints (`-`), and the lines it prints now that the
    page lacks (`+`: a new line such as the answer by factor)."""
    return [f"- {line}" for line in page_lines if line not in now] + [
        f"+ {line}" for line in now if line not in page_lines
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_a_page_records_the_sshbench_that_printed_it(page: Path) -> None:
    found = STAMP.search(page.read_text())
    assert found is not None and found.group("version") and found.group("checkout"), page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_a_pages_answer_block_is_what_sshbench_prints_now(page: Path) -> None:
    kept = RUNS / f"{page.stem}.json.gz"
    if not kept.is_file():
        pytest.skip(f"{page.name} was printed before pages kept their run: `make examples PAGE={page.stem}` keeps it")
    document = json.loads(gzip.decompress(kept.read_bytes()))
    result = result_from_document(document, kept.name)
    # `import` keeps no baselines (the --why experiment, the disk, the crypto ceilings): the block's "limited by" rests
    # on them, so the test hands the document's own back (the JSON's baselines block holds them as recorded)
    result.baselines = dict(document.get("baselines") or {})
    differs = stale(answer_block(page.read_text()), conclusion.block_lines(result))
    assert not differs, f"{page.name}: rerun `make examples PAGE={page.stem}`; its answer block differs:\n" + "\n".join(
        differs
    )


def _page(lines: list[str]) -> str:
    output = "\n".join(["sshbench: run 1 saved in /tmp/x/results.db", *lines, "", "  #  cipher ..."])
    return f"## What sshbench printed\n\n<!-- output -->\nOn 2026-12-06, here: 9 s, exit 0, sshbench 0.1.0 (abc1234).\n\n```\n{output}\n```\n<!-- /output -->\n"


def test_a_page_whose_answer_the_format_no_longer_prints_is_caught() -> None:
    """The check itself, on a made-up run kept as its JSON document would be: the same lines pass; a line of an older
    format (or one the format prints now and the page lacks) is named."""
    result = result_from_document(json.loads(json.dumps(to_document(constructed_run(runs=6)))), "made up")
    now = conclusion.block_lines(result)
    assert now and answer_block(_page(now)) == now and not stale(answer_block(_page(now)), now)
    older = [now[0], "  limited by: the CPU (an older wording)", *now[1:]]
    assert stale(answer_block(_page(older)), now) == ["-   limited by: the CPU (an older wording)"]
    assert stale(answer_block(_page(now[:-1])), now) == [f"+ {now[-1]}"]


def test_a_real_runs_answer_block_renders_again_from_its_json(tmp_path: Path) -> None:
    """What scripts/examples.py keeps is enough: a real run's printed answer block, rendered again from its --json
    document, is the same lines (the config lines' check recorded with the run included)."""
    document = tmp_path / "run.json"
    done = run_cli(
        "run", "--ciphers", "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com", "--runs", "3", "--size", "16M",
        "--no-baselines", "--no-why", "--json", str(document), timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = answer_block(_page(done.stdout.splitlines()))
    assert printed and not stale(printed, conclusion.block_lines(result_from_document(json.loads(document.read_text()), "run.json")))  # fmt: skip

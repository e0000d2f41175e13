"""The conclusion block (sshbench/answers/answer.py) in each report format: first after `sshbench run`, at the top of
`sshbench report` (table, Markdown, HTML; the JSON carries it as `answer`)."""

from __future__ import annotations

import textwrap
from html import escape

from rich.console import Console
from rich.text import Text

from sshbench.answers import answer as answers
from sshbench.answers import build_answer, condition_answer, remedies
from sshbench.results import RunResult


def print_block(result: RunResult, console: Console) -> bool:
    """The block on the terminal (headline in bold, config lines as they are to be pasted); False when the
    run has no valid row to conclude from. On a terminal a long line wraps between words under its own
    indent (the terminal itself would cut "1164 MiB/s" after the "M"); config lines are never wrapped, and
    into a pipe no line is (one line per fact, for grep)."""
    found = answers.compute(result)
    if found is None:
        return False
    lines = found.lines()
    _print(console, lines[0], "bold")
    for line in lines[1:]:
        undecided = line.startswith("  undecided") or (found.advice and line.strip() in found.advice)
        pasted = line.strip() in (found.config or ())
        style = "green" if pasted else "yellow" if undecided else ""
        _print(console, line, style, wrap=not pasted)
    for line in _build_lines(result):
        _print(console, line, "bold" if not line.startswith(" ") else "")
    return True


def block_lines(result: RunResult) -> list[str]:
    """The block as `print_block` prints it into a pipe (no line wrapped); [] where the run has no valid row. What
    docs/examples/ pages are checked against (tests/test_examples.py)."""
    found = answers.compute(result)
    return [*found.lines(), *_build_lines(result)] if found is not None else []


def _print(console: Console, line: str, style: str, wrap: bool = True) -> None:
    if not (wrap and console.is_terminal and len(line) > console.width):
        console.print(Text(line, style=style), soft_wrap=True)
        return
    indent = line[: len(line) - len(line.lstrip())]
    # broken only between words: a word longer than the width stays whole (an algorithm's name is never cut)
    parts = textwrap.wrap(
        line, console.width, subsequent_indent=indent + "    ", break_long_words=False, break_on_hyphens=False
    )
    for part in parts or [line]:
        console.print(Text(part, style=style), soft_wrap=True)


def _build_lines(result: RunResult) -> list[str]:
    """The blocks under the answer: a run over several links, directions, payloads or sinks
    (sshbench/answers/condition_answer.py), a build sweep (sshbench/answers/build_answer.py), what would help
    (--remedies: sshbench/answers/remedies.py)."""
    conditions = condition_answer.compute(result)
    builds = build_answer.compute(result)
    helps = remedies.compute(result)
    return [
        *(conditions.lines() if conditions is not None else []),
        *(builds.lines() if builds is not None else []),
        *(helps.lines() if helps is not None else []),
    ]


def _under_the_headline(lines: list[str], result: RunResult) -> list[str]:
    """The lines below the headline where it stands apart (Markdown, HTML): the answer's two-space indent
    dropped, and each block under it ("per link", "builds") with its items indented under its own head.
    Dropping it from every line had put "  wan100m: ..." flush with "per link (...)"."""
    return [*(line[2:] if line.startswith("  ") else line for line in lines[1:]), *_build_lines(result)]


def markdown(result: RunResult) -> list[str]:
    """The block in Markdown: the headline in bold, the rest as a code block (the config lines paste as they are)."""
    found = answers.compute(result)
    if found is None:
        return []
    lines = found.lines()
    return [f"**{lines[0]}**", "", "```", *_under_the_headline(lines, result), "```", ""]


def html(result: RunResult) -> str:
    found = answers.compute(result)
    if found is None:
        return ""
    lines = found.lines()
    body = "\n".join(escape(line) for line in _under_the_headline(lines, result))
    return (
        f'<section id="answer"><h2>The answer</h2><p><strong>{escape(lines[0])}</strong></p><pre>{body}</pre></section>'
    )

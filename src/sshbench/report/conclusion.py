"""The conclusion block (sshbench/answer.py) in each report format: first after `sshbench run`, at the top of
`sshbench report` (table, Markdown, HTML; the JSON carries it as `answer`)."""

from __future__ import annotations

from html import escape

from rich.console import Console
from rich.text import Text

from sshbench import answer as answers
from sshbench import build_answer
from sshbench.results import RunResult


def print_block(result: RunResult, console: Console) -> bool:
    """The block on the terminal (headline in bold, config lines as they are to be pasted); False when the
    run has no valid row to conclude from. Long lines are left to the terminal to wrap (soft wrap), so a
    name is never cut."""
    found = answers.compute(result)
    if found is None:
        return False
    lines = found.lines()
    console.print(Text(lines[0], style="bold"), soft_wrap=True)
    for line in lines[1:]:
        undecided = line.startswith("  undecided") or (found.advice and line.strip() in found.advice)
        style = "green" if line.strip() in (found.config or ()) else "yellow" if undecided else ""
        console.print(Text(line, style=style), soft_wrap=True)
    for line in _build_lines(result):
        console.print(Text(line, style="bold" if not line.startswith(" ") else ""), soft_wrap=True)
    return True


def _build_lines(result: RunResult) -> list[str]:
    """A build sweep's block (sshbench/build_answer.py), under the answer."""
    found = build_answer.compute(result)
    return found.lines() if found is not None else []


def markdown(result: RunResult) -> list[str]:
    """The block in Markdown: the headline in bold, the rest as a code block (the config lines paste as they are)."""
    found = answers.compute(result)
    if found is None:
        return []
    lines = found.lines()
    return [
        f"**{lines[0]}**",
        "",
        "```",
        *(line[2:] if line.startswith("  ") else line for line in lines[1:]),
        *_build_lines(result),
        "```",
        "",
    ]


def html(result: RunResult) -> str:
    found = answers.compute(result)
    if found is None:
        return ""
    lines = found.lines()
    body = "\n".join(
        escape(line[2:] if line.startswith("  ") else line) for line in [*lines[1:], *_build_lines(result)]
    )
    return (
        f'<section id="answer"><h2>The answer</h2><p><strong>{escape(lines[0])}</strong></p><pre>{body}</pre></section>'
    )

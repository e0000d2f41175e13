"""Every report format (report.formats.FORMATS) renders every kind of run without error: a complete one, one
that failed before any trial, one whose every trial failed. A format added to the registry is tested here
without a line of its own."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

import pytest

from fakes import constructed_run, empty_run, invalid_run
from sshbench.report.formats import FORMATS

RUNS = {"complete": constructed_run, "failed-before-any-trial": empty_run, "every-trial-invalid": invalid_run}


def _well_formed(name: str, text: str) -> None:
    """What each format's own reader says about it (a format with no reader: text, nothing more)."""
    if name == "json":
        assert isinstance(json.loads(text), dict)
    elif name == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert rows and len({len(r) for r in rows}) == 1, rows[:3]  # a header, every row as wide
    elif name == "html":
        parser = HTMLParser()
        parser.feed(text)
        parser.close()
        assert text.lstrip().lower().startswith("<!doctype html>")


@pytest.mark.parametrize("run", list(RUNS))
@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_renders_every_kind_of_run(name: str, run: str) -> None:
    result = RUNS[run]()
    text = FORMATS[name].render(result)
    assert isinstance(text, str) and text.strip(), (name, run)
    _well_formed(name, text)


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_shows_the_fastest_cipher(name: str) -> None:
    result = constructed_run()
    fastest = "chacha20-poly1305@openssh.com"  # the made-up rates grow with the cipher's place: the last is fastest
    assert fastest in FORMATS[name].render(result), name


def test_every_format_has_a_help_line() -> None:
    assert all(f.what and f.name == key for key, f in FORMATS.items())

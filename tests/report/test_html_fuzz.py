"""The HTML report under hostile names: ciphers, kex, hosts, CPU models, notices and errors holding <, >, &,
quotes and any unicode. The page must escape them (no tag or attribute of theirs appears when a real HTML
parser reads it, and their text reads back whole) and keep its Content-Security-Policy."""

from __future__ import annotations

import functools
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakes import ENVIRONMENT, constructed_run, empty_run
from sshbench.report import html

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
NASTY = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</style><script>",
    "</title><h1>x",
    "&amp;&lt;",
    "'; DROP",
    "é€😀\u202e",
    "<!--",
    "]]>",
]
name = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.sampled_from(list("<>&\"'/=;:! abc-@.")), min_size=1, max_size=16),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12),
)


# Names in scripts the chart font lacks: matplotlib says so per glyph; the page is what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font:UserWarning")


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()  # convert_charrefs: text reads back unescaped
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.extend((tag, key, value) for key, value in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _read(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


@functools.cache
def _plain() -> tuple[set[str], set[tuple[str, str]]]:
    """The tags and (tag, attribute) pairs of pages with plain names. Made on first use, not at import: every
    pytest session imports this module to collect it (the timed tier too, which runs none of it), and the two
    pages' charts took ~3 s there."""
    plain = _read(html.render(constructed_run(notices=["a notice"])))
    return plain.tags | _read(html.render(empty_run())).tags, {(tag, key) for tag, key, _ in plain.attrs}


def _check(page: Page) -> None:
    plain_tags, plain_attrs = _plain()
    assert page.tags <= plain_tags, page.tags - plain_tags  # no tag the names brought in
    assert {(tag, key) for tag, key, _ in page.attrs} <= plain_attrs
    csp = [v for tag, key, v in page.attrs if tag == "meta" and key == "content" and v and "default-src" in v]
    assert csp == [CSP]
    assert all(v and v.startswith("data:image/svg+xml;base64,") for tag, key, v in page.attrs if key == "src")


# Each example draws its charts (matplotlib, ~0.45 s): 10 of them keep the fast tier fast.
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cipher=name, kex=name, host=name, cpu=name, notice=name)
def test_hostile_names_are_escaped_and_the_csp_stays(cipher: str, kex: str, host: str, cpu: str, notice: str) -> None:
    ciphers = (cipher, "aes128-ctr") if cipher != "aes128-ctr" else ("aes128-ctr",)
    environment = {**ENVIRONMENT, "hostname": host, "cpu_model": cpu}
    result = constructed_run(ciphers=ciphers, kex=kex, environment=environment, notices=[notice])
    page = _read(html.render(result))
    _check(page)
    text = "".join(page.text)
    assert f"on {host}," in text  # the title and heading read back whole


@settings(max_examples=25, deadline=None)
@given(error=name, host=name)
def test_a_failed_run_with_hostile_text_is_escaped(error: str, host: str) -> None:
    result = empty_run(error=error)
    result.environment = {"hostname": host}
    page = _read(html.render(result))
    _check(page)
    assert f"on {host}," in "".join(page.text)

"""The latency table in a 100-column terminal: cipher names whole, the link column only with several links."""

from __future__ import annotations

import io

from rich.console import Console

from sshbench.report.latency import render_table

CIPHERS = ("aes128-cbc", "aes128-ctr", "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")


def _document(links: tuple[str, ...]) -> dict:
    results = [
        {
            "cipher": cipher,
            "link": link,
            "echo": {"median_us": 150.0, "p90_us": 190.0, "p99_us": 260.0, "max_us": 5220.0, "n": 1000},
            "connect": {"median_ms": 218.1, "min_ms": 208.3, "max_ms": 228.4, "n": 5},
        }
        for link in links
        for cipher in CIPHERS
    ]
    return {"settings": {"chars": 1000}, "target": {"label": "private sshd 127.0.0.1:33827"}, "results": results}


def _text(document: dict) -> str:
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(render_table(document))
    return out.getvalue()


def test_every_cipher_name_is_whole_at_100_columns_and_one_link_is_in_the_title():
    text = _text(_document(("loopback",)))
    for name in ("aes128-cbc", "aes128-ctr", "aes128-gcm ", "chacha20-poly1305 "):  # was "aes128-c…" for both
        assert name in text, text
    assert "…" not in text and "over loopback" in text and "│ loopback" not in text, text
    assert "208-228" in text  # the connect span in whole ms
    assert max(len(line) for line in text.splitlines()) <= 100


def test_several_links_keep_the_link_column():
    text = _text(_document(("loopback", "wan24m")))
    assert "│ wan24m" in text and "│ loopback" in text and "…" not in text, text


def test_the_line_under_the_table_gives_the_ciphers_range_the_links_share_and_the_connects():
    """Ranges, not a ranking: the ciphers are measured one after another. On loopback the ciphers' medians
    (111-196 µs) were 85 µs apart; on wan24m the link's 20.9 ms round trip is nearly all of the echo."""
    from sshbench.report.latency import conclusion_lines

    document = _document(("loopback", "wan24m"))
    for i, row in enumerate(r for r in document["results"] if r["link"] == "loopback"):
        row["echo"]["median_us"] = 111.0 + 85.0 * i / 3
    for row in document["results"]:
        if row["link"] == "wan24m":
            row["echo"]["median_us"], row["link_rtt_s"] = 21020.0, 0.020927
    document["results"].append({"cipher": "aes256-ctr", "link": "loopback", "error": "refused", "echo": {}})
    loopback, wan = conclusion_lines(document)
    assert loopback == "loopback: echo 111-196 µs median over 4 ciphers, 85 µs (0.09 ms) apart; connect 218 ms median"
    assert wan.startswith("wan24m: echo 21,020 µs median over 4 ciphers, 0 µs (0.00 ms) apart; the link's round trip, ")
    assert "20,927 µs, is 99.6% of the lowest" in wan
    assert conclusion_lines({"results": []}) == []

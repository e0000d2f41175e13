"""The Links table fits a terminal: each method named in a word or two, with a legend of the parts shown."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from sshbench.links import shaping
from sshbench.report import link_table


def _result(methods: dict[str, str]) -> SimpleNamespace:
    links = {
        name: {"method": method, "rate_bit_s": 100e6, "delay_ms": 20, "rtt_measured_ms": 40.8, "tc_counters": {}}
        for name, method in methods.items()
    }
    return SimpleNamespace(baselines={"links": links}, trials=[])


def _rendered(result: SimpleNamespace, width: int) -> str:
    table = link_table.links_table(result)
    assert table is not None
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(table)
    return out.getvalue()


def test_each_link_is_one_line_at_100_columns_with_the_methods_named_short():
    result = _result({"loopback": shaping.METHOD_LOOPBACK, "wan100m": shaping.METHOD_RELAY})
    text = _rendered(result, 100)
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 2, text  # was six lines a row: the method in full wrapped in its column
    assert "tbf + relay" in rows[1] and "100 Mbit/s, 20 ms" in rows[1], text
    legend = link_table.method_legend(result)
    assert legend is not None
    assert legend.startswith("how: veth: ") and "tbf: tc tbf" in legend and "relay: sshbench's userspace" in legend
    assert "netem:" not in legend  # only the parts the table shows


def test_a_method_the_table_does_not_know_is_shown_whole_and_has_no_legend():
    result = _result({"wan": "something else"})
    assert "something else" in _rendered(result, 120)
    assert link_table.method_legend(result) is None

"""`sshbench check`'s outputs (model/gate.py's GateResult): a line per row for the terminal and CI logs, Markdown for a
CI job's summary page, JUnit XML for CI systems that read test results. Pure text."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from dataclasses import replace

from sshbench.model import gate
from sshbench.model.gate import Checked, GateResult

WIDTH = 100  # a terminal's columns: every line fits (tests/test_gate.py)
VERDICT = {
    gate.REGRESSION: "REGRESSION",
    gate.COULD_NOT_TELL: "COULD NOT TELL",
    gate.NO_REGRESSION: "no regression",
}
EXIT_MEANING = {
    gate.EXIT_NO_REGRESSION: "no regression shown",
    gate.EXIT_REGRESSION: "a regression decided",
    gate.EXIT_COULD_NOT_TELL: "could not tell (--inconclusive pass: 0, fail: 1)",
}


def _ratio(c: Checked) -> str:
    if c.ratio is None:
        return "not measured"
    if c.low is None or c.high is None:
        return f"{c.ratio:.3f} (no interval)"
    return f"{c.ratio:.3f} ({c.low:.3f}-{c.high:.3f})"


def _rates(c: Checked) -> str:
    if c.old_mib_s is None or c.new_mib_s is None:
        return ""
    return f"{c.old_mib_s:.0f} -> {c.new_mib_s:.0f} MiB/s"


def _explain(c: Checked) -> str:
    if c.ratio is None:
        return ""
    slower = 1.0 - c.ratio
    change = f"{slower:.0%} slower" if slower > 0.005 else f"{-slower:.0%} faster" if slower < -0.005 else "the same"
    return change


def header(result: GateResult) -> str:
    return f"check ({result.mode}): {result.new} (NEW) against {result.old} (OLD), threshold {result.threshold:.0%}"


def _short(label: str) -> str:
    return label.replace("@openssh.com", "")


def _wrapped(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def lines(result: GateResult, inconclusive: str | None = None) -> list[str]:
    """What `check` prints on stdout (at most WIDTH columns): the header, a line per row, all rows together, how the
    intervals were made, the decision and its exit code."""
    by_rate = sorted(result.rows, key=lambda r: -(r.old_mib_s or 0.0))  # OLD's fastest row first
    rows = [*by_rate, replace(result.overall, label=f"{result.overall.label} ({len(result.rows)})")]
    width = max(len(_short(r.label)) for r in rows)
    out = _wrapped(header(result), "")
    out.append(f"  {'row':<{width}}  {'OLD -> NEW MiB/s':>16}  {'NEW/OLD (95% CI)':>20}  decision")
    for r in rows:
        rates = f"{r.old_mib_s:.0f} -> {r.new_mib_s:.0f}" if r.old_mib_s is not None and r.new_mib_s is not None else ""
        out.append(f"  {_short(r.label):<{width}}  {rates:>16}  {_ratio(r):>20}  {VERDICT.get(r.decision, r.decision)}")
    if len(result.rows) > 1:
        family = result.rows[0].confidence
        out += _wrapped(
            f"each row's interval at {family:.1%} (Bonferroni over {len(result.rows)} rows); {result.method}"
        )
    elif result.method:
        out += _wrapped(result.method)
    out += [line for n in result.notes for line in _wrapped(f"note: {n}")]
    code = result.exit_code(inconclusive)
    meaning = EXIT_MEANING.get(code, "")
    if result.decision == gate.COULD_NOT_TELL and inconclusive:
        meaning = f"could not tell, --inconclusive {inconclusive}"
    out += _wrapped(f"result: {VERDICT[result.decision]}: {_summary(result)} (exit {code}: {meaning})", "")
    return out


def _summary(result: GateResult) -> str:
    o = result.overall
    if o.ratio is None:
        return "nothing to compare"
    regressed = [_short(r.label) for r in result.rows if r.decision == gate.REGRESSION]
    rows = f"; decided slower: {', '.join(regressed)}" if regressed else ""
    hidden = ""
    if o.decision == gate.NO_REGRESSION and o.low is not None and o.low < 1.0 - result.threshold:
        hidden = f"; a slowdown of up to {1.0 - o.low:.0%} is not excluded"
    return f"all rows together {_explain(o)}, {_ratio(o)}{rows}{hidden}"


def markdown(result: GateResult, inconclusive: str | None = None) -> str:
    out = [
        f"### sshbench check: {VERDICT[result.decision]}",
        "",
        f"{result.new} against {result.old} ({result.mode}); threshold {result.threshold:.0%}; exit "
        f"{result.exit_code(inconclusive)}",
        "",
        "| row | OLD MiB/s | NEW MiB/s | NEW/OLD (CI) | decision |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for r in [*result.rows, result.overall]:
        old = f"{r.old_mib_s:.0f}" if r.old_mib_s is not None else ""
        new = f"{r.new_mib_s:.0f}" if r.new_mib_s is not None else ""
        label = r.label.replace("|", "\\|")
        out.append(f"| {label} | {old} | {new} | {_ratio(r)} | {VERDICT.get(r.decision, r.decision)} |")
    out += ["", f"Intervals: {result.method}."] + [f"- {n}" for n in result.notes]
    return "\n".join(out) + "\n"


def junit(result: GateResult, inconclusive: str | None = None) -> str:
    """One test case per row and one for all rows together: a regression is a failure; "could not tell" a failure
    of type "inconclusive" (skipped with --inconclusive pass)."""
    cases = [*result.rows, result.overall]
    suite = ET.Element("testsuite", name="sshbench check", tests=str(len(cases)))
    failures = skipped = 0
    for r in cases:
        case = ET.SubElement(suite, "testcase", classname="sshbench.check", name=r.label)
        message = f"NEW/OLD {_ratio(r)}: {VERDICT.get(r.decision, r.decision)} (threshold {result.threshold:.0%})"
        if r.decision == gate.REGRESSION:
            failures += 1
            ET.SubElement(case, "failure", type="regression", message=message)
        elif r.decision == gate.COULD_NOT_TELL and inconclusive != "pass":
            failures += 1
            ET.SubElement(case, "failure", type="inconclusive", message=message)
        elif r.decision == gate.COULD_NOT_TELL:
            skipped += 1
            ET.SubElement(case, "skipped", message=message)
        ET.SubElement(case, "system-out").text = message
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"

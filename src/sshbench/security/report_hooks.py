"""What the terminal table and the JSON export show about security: a verdict per measured combination and
whether strict kex (the Terrapin countermeasure) applied. Thin helpers so that report/ stays small.

A report must never be lost to a verdict problem (e.g. a changed ssh-audit layout): these return None /
"?" with the error as a warning instead of raising.
"""

from __future__ import annotations

from rich.text import Text

from sshbench.errors import SshbenchError
from sshbench.model.summary import Summary
from sshbench.security import terrapin
from sshbench.security.audit_adapter import load
from sshbench.security.verdicts import Verdict, combination_verdict


def strict_kex(environment: dict) -> terrapin.StrictKex:
    return terrapin.from_environment(environment)


# A row whose algorithms the tool chose itself (rclone before 1.64: "unpinned"): there is no cipher or kex to
# judge, and rating the placeholder would call it weak. Its verdict cell says so instead.
UNPINNED_CELL = "unpinned"
UNPINNED_REASON = (
    "not pinned: the tool's own SSH client chose the algorithms and reports none, so they cannot be judged"
)


def summary_verdict(summary: Summary, environment: dict) -> Verdict | None:
    """The combination's verdict; None when there is none (no verdicts here, or an unpinned row)."""
    c = summary.combination
    if c.unpinned:
        return None
    try:
        return combination_verdict(c.cipher, c.mac, c.kex, c.compression, strict_kex(environment).negotiated)
    except SshbenchError:
        return None


def verdict_error() -> str | None:
    """The one-line reason verdicts are unavailable, or None."""
    try:
        load()
    except SshbenchError as err:
        return str(err)
    return None


def summary_json(summary: Summary, environment: dict) -> dict:
    """Keys added to each summary in the JSON document."""
    c = summary.combination
    if c.unpinned:
        return {
            "verdict": UNPINNED_CELL,
            "verdict_reason": UNPINNED_REASON,
            "terrapin_affected": None,  # not known: what it negotiated is not known
            "strict_kex_applied": strict_kex(environment).negotiated,
        }
    verdict = summary_verdict(summary, environment)
    return {
        "verdict": verdict.label if verdict else None,
        "verdict_reason": verdict.reason if verdict else verdict_error(),
        "terrapin_affected": terrapin.affected(c.cipher, c.mac),
        "strict_kex_applied": strict_kex(environment).negotiated,
    }


def strict_kex_json(environment: dict) -> dict:
    s = strict_kex(environment)
    return {"client": s.client, "server": s.server, "negotiated": s.negotiated, "note": s.describe()}


def table_cell(summary: Summary, environment: dict) -> str:
    if summary.combination.unpinned:
        return UNPINNED_CELL
    verdict = summary_verdict(summary, environment)
    return verdict.label if verdict else "?"


VERDICT_STYLES = {
    "broken": "bold red",
    "weak": "yellow",
    "acceptable": "",
    "recommended": "green",
    "?": "dim",
    UNPINNED_CELL: "dim",
}


def styled_verdict(cell: str) -> Text:
    """A verdict cell (table_cell) in its colour: broken red, weak yellow, recommended green."""
    return Text(cell, style=VERDICT_STYLES.get(cell, ""))


def report_notes(summaries: list[Summary], environment: dict, each: bool = True) -> list[str]:
    """Lines under the table: which Terrapin case applied, why verdicts are missing if they are, and the
    broken and weak rows: one line each (`each`), or one line per verdict class naming the algorithms and
    reasons (the default output: a line per verdict class, not per row)."""
    error = verdict_error()
    if error:
        return [f"no security verdicts: {error}"]
    strict = strict_kex(environment)
    if each:
        notes = [
            f"verdicts: {strict.describe()}; chacha20-poly1305 and CBC+ETM are rated with that (Terrapin, CVE-2023-48795)"
        ]
    else:  # the default output names the Terrapin case only where it lowers a verdict: strict kex not in force
        notes = [] if strict.negotiated is True else [f"verdicts with {strict.describe()} (Terrapin)"]
    below = [(s, summary_verdict(s, environment)) for s in summaries]
    flagged = [(s, v) for s, v in below if v is not None and v.level.label in ("broken", "weak")]
    if each:
        return notes + [f"{s.combination.label} is {v.label}: {v.reason}" for s, v in flagged]
    for level in ("broken", "weak"):
        reasons: dict[str, list[str]] = {}
        for s, v in flagged:
            if v.label == level:
                name, _, why = v.reason.partition(": ")  # "<algorithm>: <why>" (verdicts.combination_verdict)
                if not why:
                    name, why = s.combination.cipher, v.reason
                names = reasons.setdefault(why, [])
                if name not in names:
                    names.append(name)
        if reasons:
            notes.append(f"{level}: " + "; ".join(f"{', '.join(n)} ({why})" for why, n in reasons.items()))
    return notes

"""`sshbench check`: a regression gate (docs/check.md). Side by side (`--ssh/--sshd/--link OLD,NEW`: one run, both
in the same interleaved rounds) or against a stored run (`--against RUN|latest|FILE.json`: its settings measured
again, options given here overriding them). The run is stored as `run` stores it, with the check's decision
(model/gate.py) in its environment (`check`); exit 0, 1 (a regression), 2 (bad input) or 3 (could not tell)."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import fields, replace
from pathlib import Path

from rich.console import Console

from sshbench.cli.common import check_writable, parse_percentage, write_output
from sshbench.cli.run import measure
from sshbench.cli.run_options import add_run_options, check_args, given_options, settings_from_args
from sshbench.errors import SshbenchError, UsageError
from sshbench.host.osfiles import atomic_write
from sshbench.measure.spec import RunSpec
from sshbench.model import gate, gate_stored
from sshbench.openssh import builds
from sshbench.report import check as check_report
from sshbench.report import dashboards, json_export
from sshbench.results import RunResult
from sshbench.settings import RunSettings
from sshbench.store import setups
from sshbench.store.document import result_from_document
from sshbench.store.recorder import RunRecorder
from sshbench.store.sqlite import Store

CHECK_KEY = "check"  # environment key of the run's check (the store and --json)
CHECK_BUDGET_S = 60.0  # a side-by-side check of the default ciphers: about a minute (issue 54)
HISTORY_RUNS = 12  # the stored runs of one set-up that the run-to-run scatter is taken from (the newest)
# Options typed that set settings of other names (cli/run_options.settings_from_args derives them).
DERIVED = {
    "runs": ("runs", "adaptive"),
    "budget": ("budget_s",),
    "seconds": ("seconds", "fit_seconds"),
    "trial_timeout": ("trial_timeout_s",),
    "reverse": ("direction",),
    "no_baselines": ("baselines",),
    "no_reference": ("default_reference",),
    "no_pin": ("pin",),
    "no_warm": ("warm",),
}
EPILOG = """exit codes:
  0    no regression shown: NEW not decided slower than OLD by more than --threshold
  1    a regression decided: NEW slower than OLD by more than --threshold, the 95% interval beyond it
  2    bad input, refused before anything is measured
  3    could not tell: NEW decided slower, its estimate beyond --threshold, but its interval reaches above
       the threshold (--inconclusive pass: 0, fail: 1); 129/130/143: stopped by a signal, trials kept
examples:
  sshbench check --sshd /usr/sbin/sshd,/opt/openssh-10/sbin/sshd     an upgrade, side by side (~1 min)
  sshbench run && sshbench check --against latest                    tonight against the last run
  sshbench check --against base.json --sshd ./sshd --junit check.xml  a CI job against a stored run
"""


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="a regression gate: is NEW slower than OLD? (side by side, or against a stored run)",
        description="Is NEW slower than OLD by more than --threshold? Side by side in one run (--ssh OLD,NEW,\n"
        "--sshd OLD,NEW or --link OLD,NEW), or against a stored run (--against), measured again here.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_check_options(p)
    p.set_defaults(handler=cmd_check)


def add_check_options(p: argparse.ArgumentParser) -> None:
    add_run_options(p)
    p.add_argument("--against", metavar="RUN", help="a stored run's id, 'latest', or a `run --json` file")
    p.add_argument(
        "--threshold",
        type=parse_threshold,
        default=gate.DEFAULT_THRESHOLD,
        metavar="PCT",
        help=f"a slowdown beyond this fails (default {gate.DEFAULT_THRESHOLD:.0%}%: docs/check.md says why)",
    )
    p.add_argument(
        "--inconclusive",
        choices=("pass", "fail"),
        help="what 'could not tell' exits with: pass (0) or fail (1); default its own code, 3",
    )
    p.add_argument("--markdown", metavar="FILE", help="also write the check as Markdown (a CI job's summary)")
    p.add_argument("--junit", metavar="FILE", help="also write the check as JUnit XML")


def parse_threshold(text: str) -> float:
    return parse_percentage(text, "--threshold", "5%", 0.5, below=True)


def _compared(settings: RunSettings) -> list[str]:
    """The options of a side-by-side check with two values; UsageError when none has, or one has more."""
    values = {
        "--ssh": builds.split_paths(settings.ssh),
        "--sshd": builds.split_paths(settings.sshd),
        "--link": [p.name for p in settings.axes.links],
    }
    more = [name for name, v in values.items() if len(v) > 2]
    if more:
        raise UsageError(f"check compares two: {more[0]} OLD,NEW (it has {len(values[more[0]])})")
    two = [name for name, v in values.items() if len(v) == 2]
    if not two:
        raise UsageError(
            "check needs two things to compare: --sshd OLD,NEW, --ssh OLD,NEW or --link OLD,NEW, or --against RUN"
        )
    return two


def _overrides(args: argparse.Namespace, given: set[str], stored: RunSettings) -> RunSettings:
    """The stored run's settings with the options typed here in their place."""
    fresh = settings_from_args(args)
    names = {f.name for f in fields(RunSettings)}
    changed: set[str] = set()
    for option in given:
        changed.update(n for n in DERIVED.get(option, (option,)) if n in names)
    return replace(stored, **{n: getattr(fresh, n) for n in changed}, seed=fresh.seed)


def _is_file(ref: str) -> bool:
    """--against names a `run --json` file (else a run of the store: an id or 'latest')."""
    return ref.endswith(".json") or (Path(ref).is_file() and not ref.isdigit() and ref != "latest")


def _load_reference(ref: str, store: Store) -> RunResult:
    path = Path(ref)
    if _is_file(ref):
        try:
            document = json.loads(path.read_text())
        except OSError as e:
            raise UsageError(f"--against {ref}: {e.strerror}") from None
        except ValueError as e:
            raise UsageError(f"--against {ref} is not JSON: {e}") from None
        return result_from_document(document, ref)
    return store.load_result(ref)


def _history(store: Store, reference: RunResult, exclude: int | None) -> list[tuple[RunResult, RunResult]]:
    """Consecutive pairs of stored runs of the reference's set-up (store/setups.py; a check that decided a regression
    is left out: its change is no scatter): what the run-to-run scatter is taken from."""

    def regression(run: RunResult) -> bool:
        return (run.environment.get(CHECK_KEY) or {}).get("decision") == gate.REGRESSION

    same = setups.runs_of_setup(store, reference, HISTORY_RUNS, HISTORY_RUNS * 3, exclude, regression)
    return list(zip(same, same[1:], strict=False))


def _side_by_side_names(
    result: RunResult, compared: list[str]
) -> tuple[dict[str, str], dict[str, str], tuple[str, str]]:
    """Each compared field's OLD and NEW value (build labels, link names), and OLD and NEW in words."""
    found = result.environment.get("builds") or {}
    old: dict[str, str] = {}
    new: dict[str, str] = {}
    words: tuple[list[str], list[str]] = ([], [])
    for option in compared:
        side = option.removeprefix("--")  # ssh | sshd | link
        if side == "link":
            field, values = "link", [p.name for p in result.settings.axes.links]
        else:
            field, values = f"{side}_build", [b["label"] for b in found.get(side) or []]
        if len(values) == 2:
            old[field], new[field] = values
            words[0].append(f"{side} {values[0]}")
            words[1].append(f"{side} {values[1]}")
    return old, new, (", ".join(words[0]), ", ".join(words[1]))


def cmd_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    given = given_options(args.argv, "check", add_check_options)
    check_args(args, given)
    if args.json_stream or args.resume or args.preset or args.seeds:
        raise UsageError("check prints its own lines: --json-stream, --resume, --preset and --seeds are for `run`")
    for path in (args.json, args.markdown, args.junit, args.bmf, args.gab):
        check_writable(path)
    recorder = RunRecorder.for_run(args.db, None, typed=given)
    reference = _load_reference(args.against, recorder.store) if args.against else None
    if reference is not None:
        settings = _overrides(args, given, reference.settings)
        compared: list[str] = []
        if builds.sweeps(settings.sshd) or builds.sweeps(settings.ssh) or len(settings.axes.links) > 1:
            raise UsageError(
                "--against compares one set-up with a stored run: give one --ssh, --sshd and --link (two of one, "
                "without --against, compare them side by side)"
            )
    else:
        settings = settings_from_args(args)
        if "budget" not in given:
            settings = replace(settings, budget_s=CHECK_BUDGET_S)
        compared = _compared(settings)
    # A check measures rows: no --why experiment, no remedies, no reference row beyond them; its rounds go to its
    # decision (measure/rounds.next_round), its baselines only where a stored run is normalised by them.
    settings = replace(settings, check_threshold=args.threshold, why="off", remedies="off", remedy_builds=False)
    if reference is None:  # the rows are both sides' own; no raw TCP control to normalise by
        settings = replace(settings, default_reference=False, baselines=False)
    spec = RunSpec.check(settings)
    verdict: dict[str, gate.GateResult] = {}

    def decide(result: RunResult, _err: Console) -> None:
        if reference is not None:
            history = _history(recorder.store, reference, result.run_id)
            names = (
                os.path.basename(args.against) if _is_file(args.against) else f"run {reference.run_id}",
                f"run {result.run_id}" if result.run_id else "this run",
            )
            found = gate_stored.against(result, reference, args.threshold, history, names)
        else:
            old, new, names = _side_by_side_names(result, compared)
            found = gate.side_by_side(result.trials, old, new, args.threshold, names)
        verdict["check"] = found
        result.environment[CHECK_KEY] = found.to_json()

    result, stored = measure(args, spec, recorder, err, decide)
    for notice in result.notices:
        err.print(f"sshbench: {notice}", highlight=False, markup=False)
    if result.error:
        err.print(f"sshbench: error: {result.error}", highlight=False, markup=False)
        return result.exit_code or 1
    found = verdict.get("check")
    if found is None:
        err.print("sshbench: error: nothing was measured", highlight=False)
        return 1
    for line in check_report.lines(found, args.inconclusive):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    try:
        if args.json:
            json_export.write(result, args.json)
        if args.markdown:
            atomic_write(args.markdown, check_report.markdown(found, args.inconclusive))
        if args.junit:
            atomic_write(args.junit, check_report.junit(found, args.inconclusive))
        if args.bmf:
            write_output(dashboards.text(dashboards.check_bmf(found)), args.bmf, out)
        if args.gab:
            write_output(dashboards.text(dashboards.check_gab(found)), args.gab, out)
    except (OSError, SshbenchError) as e:
        err.print(f"sshbench: error: {e}", highlight=False, markup=False)
        return 1
    return found.exit_code(args.inconclusive) if stored else 1

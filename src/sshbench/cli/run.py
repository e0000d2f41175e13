"""`sshbench run [HOST]`: the benchmark, with `--preset`/`--seeds`, recorded into the store as it goes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sshbench.answers import agreement, answer
from sshbench.cli import presets, run_notices
from sshbench.cli.common import check_writable, write_output
from sshbench.cli.run_options import add_run_options, check_args, given_options, run_epilog, settings_from_args
from sshbench.errors import SshbenchError
from sshbench.measure.runner import Runner
from sshbench.measure.spec import RunSpec
from sshbench.model import summary
from sshbench.recommend import config as recommend
from sshbench.report import formats, json_export, table
from sshbench.report.json_stream import JsonStream
from sshbench.results import RunResult, Trial
from sshbench.store.recorder import RunRecorder
from sshbench.store.setups import runs_of_setup

# The store's earlier runs of a set-up a run's answer is held against (the newest, among four times as many scanned):
# each is loaded and answered again, ~0.29 s a run here (3 runs: 0.17 s loading, 0.69 s answering), at the run's end
EARLIER_RUNS = 5


def add_commands(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser(
        "run",
        help="benchmark a target (default: a private sshd on 127.0.0.1)",
        description="Benchmark SSH ciphers, MACs and key exchanges against a target: by default a private\n"
        "sshd started on 127.0.0.1 for this run (nothing of yours is touched); with HOST, a remote\n"
        "machine through your ssh. Every trial is recorded in the results database as it finishes.",
        epilog=run_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_options(run)
    run.set_defaults(handler=cmd_run_presets)


def _check_conclusion(result: RunResult, err: Console) -> None:
    """The conclusion's config lines, checked as `recommend` checks its own: one real connection with exactly
    those lines (to the private sshd, or to HOST with the user's config). Its outcome is recorded with the
    run (environment `conclusion_config_checked`) and shown in the block and the JSON's
    `answer.config_checked`; a failure says so there and never loses the run."""
    found = answer.compute(result)
    if found is None or not found.config or result.status != "complete":  # stopped or failed: no new connection
        return
    try:
        rec = recommend.build(result, found.policy, "client", host_pattern="*")
        candidates = _check_builds(result)
        for attempt, (sshd, ssh, builds_label) in enumerate(candidates):
            try:
                checked = recommend.verify(rec, result, sshd=sshd, ssh=ssh) + builds_label
                break
            except SshbenchError:
                if attempt == len(candidates) - 1:
                    raise
    except SshbenchError as e:
        checked = f"NOT checked: {e}"
        err.print(f"sshbench: warning: the conclusion's config lines: {e}", markup=False, highlight=False)
    result.environment[answer.CHECKED_KEY] = found.config_checked = checked
    result.environment[answer.CHECKED_LINES_KEY] = list(found.config)


def _agree_with_earlier(result: RunResult, recorder: RunRecorder, err: Console) -> None:
    """The run's answer against the store's earlier runs of its set-up (answers/agreement.py): one line in the block,
    recorded with the run. Nothing where the store cannot be read (the run is kept all the same)."""
    found = answer.compute(result)
    if found is None or result.status != "complete" or recorder.unsaved is not None:
        return
    try:
        earlier = runs_of_setup(recorder.store, result, keep=EARLIER_RUNS, scan=4 * EARLIER_RUNS, exclude=result.run_id)
    except SshbenchError as e:
        err.print(f"sshbench: warning: the earlier runs of this set-up: {e}", markup=False, highlight=False)
        return
    if (compared := agreement.agreement(result, earlier)) is not None:
        result.environment[agreement.AGREEMENT_KEY] = compared.to_json()
        found.earlier_runs = compared.lines()


def _check_builds(result: RunResult) -> list[tuple[str | None, str, str]]:
    """(sshd, ssh, label) to check the conclusion's lines with: --sshd and --ssh; in a build sweep the fastest
    row's builds first, then the other pairings (newest client first): the lines may name an algorithm only
    some builds have (ML-KEM of OpenSSH 10.0), and the check says which builds took them."""
    paths = result.settings.sshd_paths()[0], result.settings.ssh_paths()[0]
    found = result.environment.get("builds") or {}
    if not (found.get("ssh") or found.get("sshd")):
        return [(paths[0], paths[1], "")]
    sshds = [(b["label"], b["path"]) for b in found.get("sshd") or []] or [("", paths[0])]
    sshs = [(b["label"], b["path"]) for b in reversed(found.get("ssh") or [])] or [("", paths[1])]
    pairs = [(d, c) for c in sshs for d in sshds]
    top = next((s.combination for s in summary.summaries(result) if s.median_mib_s), None)
    if top is not None:
        pairs.sort(key=lambda p: (p[0][0], p[1][0]) != (top.sshd_build, top.ssh_build))

    def named(ssh_label: str, sshd_label: str) -> str:
        ssh_part, sshd_part = ssh_label.removeprefix("OpenSSH_"), sshd_label.removeprefix("OpenSSH_")
        if ssh_part and sshd_part:
            return f" (with {ssh_part} -> {sshd_part})"
        return f" (with ssh {ssh_part})" if ssh_part else f" (with sshd {sshd_part})"

    return [(sshd, ssh, named(ssh_label, sshd_label)) for (sshd_label, sshd), (ssh_label, ssh) in pairs]


def _trial_line(index: int, total: int, trial: Trial) -> str:
    rate = f"{trial.mib_s:.1f} MiB/s" if trial.mib_s else (f"{trial.wall_s * 1000:.0f} ms" if trial.wall_s else "")
    state = "ok" if trial.valid else f"INVALID: {trial.invalid_reason}"
    what = "warm-up" if trial.warmup else f"run {trial.repetition + 1}"
    if trial.warm_burst is not None:  # in the row's kept connection (sshbench.measure.warm)
        what += f", burst {trial.warm_burst + 1}"
    return (
        f"trial {index}/{total} {trial.kind} {trial.combination.label} [{trial.combination.kex}] {what}: {rate} {state}"
    )


def cmd_run_presets(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`run`, with --preset applied, or once per seed preset with --seeds (the worst exit code wins)."""
    given = given_options(args.argv)  # the options typed: a preset fills in the others
    check_args(args, given)
    names = list(presets.SEEDS) if args.seeds else [args.preset] if args.preset else []
    if not names:
        return cmd_run(args, given, out, err)
    worst = 0
    runs = [(name, presets.apply(args, given, name)) for name in names]  # unknown names fail here
    for name, preset_args in runs:
        err.print(f"sshbench: preset {name}: {presets.PRESETS[name].what}", highlight=False)
        code = cmd_run(preset_args, given, out, err)
        worst = max(worst, code)
        if code >= 128:  # interrupted: do not start the next preset
            break
    return worst


def measure(
    args: argparse.Namespace,
    spec: RunSpec,
    recorder: RunRecorder,
    err: Console,
    finish: Callable[[RunResult, Console], None],
    stream: JsonStream | None = None,
    notices: list[str] | None = None,
) -> tuple[RunResult, bool]:
    """The run of `spec` with its progress bar, each trial into the store as it finishes; `finish` adds to the
    result before it is saved (a Ctrl-C there saves the run first). (the result, whether it was stored)."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # into a pipe or file the bar is no use (it left one blank line there)
    )
    task = progress.add_task("trials", total=None)

    def on_plan(total: int) -> None:
        progress.update(task, total=total)
        recorder.on_plan(runner.result)
        if stream is not None:
            stream.plan(total, runner.result)

    def on_trial(index: int, total: int, trial: Trial) -> None:
        recorder.on_trial(runner.result, trial)  # committed before anything else can go wrong
        if stream is not None:
            stream.trial(index, total, trial)
        progress.update(task, completed=index, description=trial.combination.label[:40])
        if args.verbose:
            progress.console.print(_trial_line(index, total, trial), markup=False, highlight=False)
        if not trial.valid and not args.verbose:
            progress.console.print(
                f"[yellow]invalid trial[/] {trial.combination.label}: {trial.invalid_reason}", highlight=False
            )

    recorder.warn = lambda line: progress.console.print(f"sshbench: warning: {line}", markup=False, highlight=False)
    runner = Runner(spec, on_trial=on_trial, on_plan=on_plan, resume_from=recorder.resume_from)
    runner.result.notices.extend(notices or [])  # options that do nothing here (a resumed run's were said)
    recorder.started(runner.result)
    with progress:
        result: RunResult = runner.run()
    interrupted: BaseException | None = None
    try:
        if result.trials or result.environment:
            finish(result, err)  # before the run is saved: what it adds is part of its record
    except BaseException as e:  # Ctrl-C during the check: the run is saved first, then the interrupt goes on
        interrupted = e
    stored = recorder.finished(result, err)
    if interrupted is not None:
        raise interrupted
    return result, stored


def cmd_run(args: argparse.Namespace, given: set[str], out: Console, err: Console) -> int:
    # The results store: opened (and --resume checked) before anything is measured.
    for path in (args.json, args.bmf, args.gab):
        check_writable(path)  # before anything is measured, not after
    recorder = RunRecorder.for_run(args.db, args.resume, typed=given)
    # The run's spec, made and checked once: a resumed run's stored settings, else the options given.
    spec = RunSpec.check(recorder.settings or settings_from_args(args))
    stream = JsonStream(sys.stdout) if args.json_stream else None
    notices = run_notices.check(args, given, spec.settings) if recorder.settings is None else []

    def finish(result: RunResult, err: Console) -> None:
        _check_conclusion(result, err)
        _agree_with_earlier(result, recorder, err)

    result, stored = measure(args, spec, recorder, err, finish, stream, notices)
    if stream is not None:
        stream.end(result)
    elif result.trials or result.environment:
        table.print_report(result, out, wide=args.wide, quiet=args.quiet)
    for notice in result.notices:  # after the report: its first lines are the conclusion
        err.print(f"sshbench: {notice}", highlight=False)
    try:
        if args.json:
            json_export.write(result, args.json)
            err.print(f"sshbench: wrote {args.json}", highlight=False)
        for path, name in ((args.bmf, "bmf"), (args.gab, "gab")):  # what dashboards ingest (report/dashboards.py)
            if path:
                write_output(formats.render(result, name), path, out)
                err.print(f"sshbench: wrote {path}", highlight=False, markup=False)
    except SshbenchError as e:
        err.print(f"sshbench: error: {e}", highlight=False, markup=False)
        return result.exit_code or 1
    if result.error:
        measured = sum(1 for t in result.trials if not t.warmup)
        kept = f" ({measured} measured trials kept above)" if measured and "kept" not in result.error else ""
        err.print(f"sshbench: error: {result.error}{kept}", highlight=False, markup=False)
    return result.exit_code or (0 if stored else 1)

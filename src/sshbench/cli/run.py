"""`sshbench run [HOST]`: the benchmark, with `--preset`/`--seeds`, recorded into the store as it goes."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sshbench.answers import answer
from sshbench.cli import presets, run_notices
from sshbench.cli.common import (
    add_db_option,
    add_output_options,
    add_ssh_config_option,
    add_sshd_option,
    check_writable,
)
from sshbench.cli.parser import make_parser
from sshbench.errors import SshbenchError, UsageError
from sshbench.measure.runner import Runner
from sshbench.model import summary
from sshbench.recommend import config as recommend
from sshbench.report import json_export, table
from sshbench.report.json_stream import JsonStream
from sshbench.results import RunResult, Trial
from sshbench.settings import (
    DEFAULT_BUDGET_S,
    DEFAULT_FULL_BUDGET_S,
    MIN_AUTO_RUNS,
    RunSettings,
    parse_duration,
    parse_runs,
    parse_tie,
)
from sshbench.store.recorder import RunRecorder
from sshbench.targets import cpu_quota
from sshbench.units import parse_size


def add_commands(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser(
        "run",
        help="benchmark a target (default: a private sshd on 127.0.0.1)",
        description="Benchmark SSH ciphers, MACs and key exchanges against a target: by default a private\n"
        "sshd started on 127.0.0.1 for this run (nothing of yours is touched); with HOST, a remote\n"
        "machine through your ssh. Every trial is recorded in the results database as it finishes.",
        epilog=_run_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("host", nargs="?", help="user@host or an ssh_config alias; omit for the private sshd")
    run.add_argument(
        "--ciphers",
        help="comma list of names, globs ('aes*-gcm*'), 'all' or 'default' (default: the ones your ssh offers by "
        "default that the server speaks; 'all' adds the CBC and 3DES ones; --full: all)",
    )
    run.add_argument("--macs", help="as --ciphers (default: the MAC a default connection negotiates; all with --full)")
    run.add_argument("--kex", help="as --ciphers (default: the kex a default connection negotiates)")
    run.add_argument("--full", action="store_true", help="the whole cipher x MAC matrix")
    run.add_argument("--size", type=parse_size, help="fixed payload size, e.g. 64M (default: adaptive per combination)")
    run.add_argument(
        "--seconds",
        type=float,
        help="adaptive sizing: aim for a data phase this long (default 1.0; with --runs auto it shrinks, to "
        "0.25 at least, when 5 rounds would not fit in --budget; under --server-cpu F below 0.3, 0.3/F "
        "and never shrunk: a transfer's fixed CPU cost at the server would otherwise rank every fast cipher alike)",
    )
    run.add_argument(
        "--max-size",
        type=parse_size,
        default=parse_size("1G"),
        help="adaptive sizing never goes above this (default 1G)",
    )
    run.add_argument(
        "--runs",
        default="auto",
        help="measured rounds per combination (a fixed count), or 'auto': 3, then more only for combinations "
        "still undecided against a neighbour, within --budget (default auto)",
    )
    run.add_argument(
        "--budget",
        help="--runs auto: the run's time (set-up and calibration included) within which rounds are added, "
        f"e.g. 90s, 5m (default {DEFAULT_BUDGET_S:.0f}s, {int(DEFAULT_FULL_BUDGET_S // 60)}m"
        f"{int(DEFAULT_FULL_BUDGET_S % 60):02d}s with --full: the command ends about 1 or 5 minutes after it started; the 3 minimum rounds "
        "run in full even when they need longer, and a notice says so)",
    )
    run.add_argument(
        "--tie",
        default="3%",
        metavar="PCT",
        help="neighbours whose 95%% CI of the ratio lies within this are tied and share a rank (default 3%%)",
    )
    run.add_argument(
        "--seed", type=int, help="shuffle the order within each round with this seed (default: random, recorded)"
    )
    run.add_argument("--warmup", type=int, default=1, help="warm-up passes, not counted (default 1)")
    run.add_argument(
        "--preset",
        metavar="NAME",
        help="a seed's set-up: seed000 (scp of a tar, +-compression), seed001 (cipher x MAC), "
        "seed002 (scp of zeros to disk), seed004 (pipe per cipher); given options win",
    )
    run.add_argument(
        "--seeds",
        action="store_true",
        help="run the seed000 and seed001 presets one after the other, to compare with the seeds' tables",
    )
    run.add_argument(
        "--server",
        default="openssh",
        help="comma list of private server implementations to sweep: openssh, dropbear, asyncssh (default openssh)",
    )
    run.add_argument(
        "--dropbear-window",
        type=parse_size,
        metavar="BYTES",
        help="--server dropbear: its receive window (-W), e.g. 8M (default Dropbear's 24576; "
        "at most 10M); it caps uploads",
    )
    run.add_argument("--link", default="loopback", help="comma list of link profiles to sweep (default loopback)")
    run.add_argument(
        "-P",
        "--parallel",
        default="1",
        metavar="N[,M...]",
        help="N connections of each combination started together, each moving 1/N of the payload; the rate is "
        "the aggregate over the common data phase; a comma list sweeps stream counts, e.g. 1,2,4 (default 1)",
    )
    run.add_argument(
        "--tool", default="pipe", help="comma list of transfer tools: pipe, scp, scp-legacy, sftp, rsync (default pipe)"
    )
    run.add_argument(
        "--direction",
        default="up",
        choices=["up", "down", "both"],
        help="up: client to server; down: server to client (default up)",
    )
    run.add_argument("-R", "--reverse", action="store_true", help="same as --direction down (as iperf3 -R)")
    run.add_argument("--sink", default="null", help="comma list: null (/dev/null), tmpfs, disk (default null)")
    run.add_argument("--payload", default="random", help="comma list: random, zero, text (default random)")
    run.add_argument("--file", metavar="PATH", help="send this file instead (never modified; its size is the size)")
    run.add_argument(
        "--compression",
        default="off",
        choices=["off", "on", "both"],
        help="ssh compression (zlib@openssh.com): off, on, or both swept (default off)",
    )
    verify = run.add_mutually_exclusive_group()
    verify.add_argument(
        "--verify",
        dest="verify",
        action="store_true",
        default=None,
        help="compare the SHA-256 of what arrived with the payload's (default: on for file sinks)",
    )
    verify.add_argument("--no-verify", dest="verify", action="store_false", help="never compute checksums")
    run.add_argument("--json", metavar="FILE", help="write settings, environment, summaries and every trial")
    run.add_argument(
        "--json-stream",
        action="store_true",
        help="one JSON object per line on stdout as the run goes: plan, each trial, then the summary "
        "(docs/results-json.md); the human report is not printed",
    )
    add_ssh_config_option(run)
    run.add_argument(
        "--ssh",
        metavar="PATH[,PATH...]",
        help="ssh client build(s); several are swept like any other axis, labelled by `ssh -V` (default: ssh in PATH)",
    )
    add_sshd_option(
        run,
        "sshd build(s) for the private target; several are swept, each its own private sshd (default /usr/sbin/sshd)",
        builds=True,
    )
    run.add_argument(
        "--sshd-session",
        metavar="PATH",
        help="an OpenSSH 9.8+ --sshd build's sshd-session, when not next to it (sshd-auth is looked for beside it)",
    )
    run.add_argument(
        "--trial-timeout", type=float, default=300.0, help="seconds before a trial is killed (default 300)"
    )
    run.add_argument("-v", "--verbose", action="store_true", help="a line per trial")
    add_output_options(run)
    run.add_argument(
        "--no-aesni",
        action="store_true",
        help="mask AES-NI (OPENSSL_ia32cap) for ssh and the private sshd, verified before any trial",
    )
    run.add_argument(
        "--no-pin",
        action="store_true",
        help="let the scheduler place the client and the private server (default: each on its own CPUs, "
        "which halves the GCM ciphers' spread on a 2-core machine; docs/clock.md)",
    )
    run.add_argument(
        "--no-warm",
        action="store_true",
        help="a connection per trial in every round. Default: after each row's first round, its pipe uploads to "
        "the private sshd are bursts in one connection kept open (about 0.55 s each against ~0.9 s a trial; "
        'docs/clock.md "Warm sessions")',
    )
    run.add_argument(
        "--no-baselines",
        action="store_true",
        help="skip the raw TCP control, crypto ceiling and disk baselines (and the bottleneck verdict)",
    )
    run.add_argument(
        "--no-reference",
        action="store_true",
        help="do not measure your ssh's default combination beside the selection (the conclusion then "
        "says it was not measured)",
    )
    run.add_argument(
        "--why",
        choices=("fastest", "all"),
        help="find what limits the speed by experiment: slow the client's CPU, the server's CPU and the link "
        "by half in turn, interleaved with unthrottled trials (root); default: the fastest row of a --runs auto "
        "run when --budget has room for it after the minimum rounds (not --full's); all: every row",
    )
    run.add_argument("--no-why", action="store_true", help="skip the --why experiments (the verdict is then inferred)")
    run.add_argument(
        "--why-rounds",
        type=int,
        default=4,
        metavar="N",
        help="paired rounds per --why experiment (3-100; default 4)",
    )
    run.add_argument(
        "--server-cpu",
        type=float,
        metavar="FRACTION",
        help="run the private sshd and its sessions under a CPU quota of FRACTION cores (0.1 = a tenth of one "
        "core), to emulate a slow server; root",
    )
    run.add_argument(
        "--raw-tcp-port",
        type=int,
        metavar="N",
        help="a remote HOST: run the raw TCP control's listener on port N there (default: any free port; "
        "pick one its firewall lets through)",
    )
    add_db_option(run)
    run.add_argument(
        "--resume", metavar="RUN_ID", help="finish the missing trials of an interrupted run, with its stored settings"
    )
    run.set_defaults(handler=cmd_run_presets)


def _run_epilog() -> str:
    from sshbench.links.profiles import LINKS
    from sshbench.measure.payload import MIN_SIZE
    from sshbench.units import format_size

    def mbit(p) -> str:
        return "unshaped" if p.rate_bit_s is None else f"{p.rate_bit_s / 1e6:g} Mbit/s"

    profiles = "\n".join(f"  {name:<10} {mbit(p)}, RTT {p.rtt_ms:g} ms" for name, p in LINKS.items())
    return (
        "link profiles (--link, a comma list; anything but loopback needs root: network namespaces + tc):\n"
        f"{profiles}\n"
        "  custom:    rate=RATE[,delay=TIME][,jitter=TIME][,loss=PCT], e.g. rate=200mbit,delay=10ms\n"
        "             (RATE in bit, kbit, mbit, gbit; TIME in us, ms, s; delay is one-way)\n"
        "\n"
        f"sizes: --size/--max-size take 64M, 512MiB, 1G or bytes; at least {format_size(MIN_SIZE)}\n"
        "\n"
        "exit codes:\n"
        "  0    every combination measured\n"
        "  1    the run failed (target unreachable, a tool missing, ...) or a combination never worked;\n"
        "       measured trials are kept in the results database\n"
        "  2    bad input (an option, a name, a path), refused before anything is measured or stored\n"
        "  129  SIGHUP, 130 Ctrl-C (SIGINT), 143 SIGTERM: stopped, cleaned up, trials kept\n"
        f"\n{RUN_EXAMPLES}"
    )


# The most common commands, last in `run --help` as hyperfine's and iperf3's help end (tests/cli parses each).
RUN_EXAMPLES = """examples:
  sshbench run                                    your ssh's default ciphers, a private sshd (~1 min)
  sshbench run myserver                           the same against a host of your ssh_config
  sshbench run --full                             every cipher x MAC, as seed 001's matrix (~5 min)
  sshbench run --link wan24m --compression both   does compression pay on a 24 Mbit/s link? (root)
  sshbench run --tool scp,sftp,rsync --sink disk  which tool is fastest, writing to disk
  sshbench recommend                              the last run's fastest safe ~/.ssh/config lines
more: docs/examples/ (the seed posts' five situations) and the README's "What to run"
"""


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
    if args.seeds and args.preset:
        raise UsageError("--seeds runs the seed presets itself; give either --seeds or --preset")
    if (args.seeds or args.preset) and args.resume is not None:
        raise UsageError("--resume uses the stored run's settings; drop --preset/--seeds")
    given = _given_run_options(args.argv)
    run_count = parse_runs(args.runs)  # a count, or None for auto
    if (run_count is not None and run_count > 10_000) or args.warmup > 100:  # a typo'd count would plan for ever
        raise UsageError(f"--runs {args.runs} / --warmup {args.warmup}: at most 10000 runs and 100 warm-up passes")
    if args.reverse and "direction" in given and args.direction != "down":
        raise UsageError(f"-R/--reverse means --direction down; it contradicts --direction {args.direction}")
    if args.no_why and args.why:
        raise UsageError(f"--no-why contradicts --why {args.why}")
    names = list(presets.SEEDS) if args.seeds else [args.preset] if args.preset else []
    if not names:
        return cmd_run(args, out, err)
    worst = 0
    runs = [(name, presets.apply(args, given, name)) for name in names]  # unknown names fail here
    for name, preset_args in runs:
        err.print(f"sshbench: preset {name}: {presets.PRESETS[name].what}", highlight=False)
        code = cmd_run(preset_args, out, err)
        worst = max(worst, code)
        if code >= 128:  # interrupted: do not start the next preset
            break
    return worst


def _given_run_options(argv: list[str]) -> set[str]:
    """The `run` options the user typed (a preset fills in only the others): parse again with every
    default suppressed, so only given options appear."""
    parser = make_parser([add_commands])
    run_parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    for action in run_parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv))) - {"command"}


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    # The results store: opened (and --resume checked) before anything is measured.
    runs = parse_runs(args.runs)
    tie = parse_tie(args.tie)
    budget_s = (
        parse_duration(args.budget)
        if args.budget is not None
        else DEFAULT_FULL_BUDGET_S
        if args.full
        else DEFAULT_BUDGET_S
    )
    check_writable(args.json)  # before anything is measured, not after
    recorder = RunRecorder.for_run(args.db, args.resume, typed=_given_run_options(args.argv))
    settings = recorder.settings or RunSettings(
        host=args.host,
        ciphers=args.ciphers,
        macs=args.macs,
        kex=args.kex,
        full=args.full,
        size=args.size,
        seconds=cpu_quota.data_phase_seconds(args.server_cpu) if args.seconds is None else args.seconds,
        # not fitted to --budget under --server-cpu: shorter phases would time sshd's fixed cost per transfer
        fit_seconds=runs is None and args.seconds is None and args.server_cpu is None,
        max_size=args.max_size,
        runs=MIN_AUTO_RUNS if runs is None else runs,
        adaptive=runs is None,
        budget_s=budget_s,
        tie=tie,
        seed=args.seed,
        warmup=args.warmup,
        trial_timeout_s=args.trial_timeout,
        sshd=args.sshd,
        ssh=args.ssh or "ssh",
        sshd_session=args.sshd_session,
        ssh_config=args.ssh_config,
        tool=args.tool,
        direction="down" if args.reverse else args.direction,
        sink=args.sink,
        payload=args.payload,
        file=args.file,
        compression=args.compression,
        verify=args.verify,
        server=args.server,
        link=args.link,
        no_aesni=args.no_aesni,
        baselines=not args.no_baselines,
        default_reference=not args.no_reference,
        dropbear_window=args.dropbear_window,
        server_cpu=args.server_cpu,
        parallel=args.parallel,
        raw_tcp_port=args.raw_tcp_port,
        why="off" if args.no_why else args.why or "auto",
        why_rounds=args.why_rounds,
        pin=not args.no_pin,
        warm=not args.no_warm,
    )
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

    stream = JsonStream(sys.stdout) if args.json_stream else None

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

    runner = Runner(settings, on_trial=on_trial, on_plan=on_plan, resume_from=recorder.resume_from)
    if recorder.settings is None:  # options that do nothing here say so (a resumed run's were said)
        runner.result.notices.extend(run_notices.check(args, _given_run_options(args.argv), settings))
    recorder.started(runner.result)
    with progress:
        result: RunResult = runner.run()
    interrupted: BaseException | None = None
    try:
        if result.trials or result.environment:
            _check_conclusion(result, err)  # before the run is saved: the check is part of its record
    except BaseException as e:  # Ctrl-C during the check: the run is saved first, then the interrupt goes on
        interrupted = e
    stored = recorder.finished(result, err)
    if interrupted is not None:
        raise interrupted
    if stream is not None:
        stream.end(result)
    elif result.trials or result.environment:
        table.print_report(result, out, wide=args.wide, quiet=args.quiet)
    for notice in result.notices:  # after the report: its first lines are the conclusion
        err.print(f"sshbench: {notice}", highlight=False)
    if args.json:
        try:
            json_export.write(result, args.json)
            err.print(f"sshbench: wrote {args.json}", highlight=False)
        except SshbenchError as e:
            err.print(f"sshbench: error: {e}", highlight=False, markup=False)
            return result.exit_code or 1
    if result.error:
        measured = sum(1 for t in result.trials if not t.warmup)
        kept = f" ({measured} measured trials kept above)" if measured and "kept" not in result.error else ""
        err.print(f"sshbench: error: {result.error}{kept}", highlight=False, markup=False)
    return result.exit_code or (0 if stored else 1)

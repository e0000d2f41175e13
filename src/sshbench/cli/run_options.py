"""`sshbench run`'s options: declared once (`add_run_options`, which `run` and fleet's per-host runs share), each
parsed into its typed value where it is read (argparse `type=`, the parsers below), checked together once
(`check_args`), and turned into the run's frozen settings in one place (`settings_from_args`)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import fields

from sshbench.axis_values import comma_list
from sshbench.cli.common import (
    add_db_option,
    add_output_options,
    add_result_file_options,
    add_ssh_config_option,
    add_sshd_option,
    add_wait_option,
    parse_percentage,
)
from sshbench.cli.parser import make_parser
from sshbench.errors import UsageError
from sshbench.links import parse_links
from sshbench.links.profiles import LINKS
from sshbench.measure.payload import MIN_SIZE
from sshbench.settings import DEFAULT_BUDGET_S, DEFAULT_FULL_BUDGET_S, MAX_TIE, MIN_AUTO_RUNS, RunSettings
from sshbench.targets import cpu_quota
from sshbench.tools import get_tool
from sshbench.units import format_size, parse_size


def add_run_options(run: argparse.ArgumentParser) -> None:
    """Every option of `sshbench run`."""
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
        type=parse_runs,  # a count, or None for auto
        help="measured rounds per combination (a fixed count), or 'auto': 3, then more only for combinations "
        "still undecided against a neighbour, within --budget (default auto)",
    )
    run.add_argument(
        "--budget",
        type=parse_duration,  # seconds
        help="--runs auto: the run's time (set-up and calibration included) within which rounds are added, "
        f"e.g. 90s, 5m (default {DEFAULT_BUDGET_S:.0f}s, {int(DEFAULT_FULL_BUDGET_S // 60)}m"
        f"{int(DEFAULT_FULL_BUDGET_S % 60):02d}s with --full: the command ends about 1 or 5 minutes after it started; the 3 minimum rounds "
        "run in full even when they need longer, and a notice says so)",
    )
    run.add_argument(
        "--tie",
        default="3%",
        type=parse_tie,  # a fraction
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
    run.add_argument(
        "--link",
        default="loopback",
        type=_checked(parse_links),
        help="comma list of link profiles to sweep (default loopback)",
    )
    run.add_argument(
        "-P",
        "--parallel",
        default="1",
        metavar="N[,M...]",
        help="N connections of each combination started together, each moving 1/N of the payload; the rate is "
        "the aggregate over the common data phase; a comma list sweeps stream counts, e.g. 1,2,4 (default 1)",
    )
    run.add_argument(
        "--tool",
        default="pipe",
        type=_checked(_check_tools),
        help="comma list of transfer tools: pipe, scp, scp-legacy, sftp, rsync (default pipe)",
    )
    run.add_argument(
        "--direction",
        default="up",
        choices=["up", "down", "both"],
        help="up: client to server; down: server to client (default up)",
    )
    run.add_argument("-R", "--reverse", action="store_true", help="same as --direction down (as iperf3 -R)")
    run.add_argument(
        "--sink",
        default="null",
        type=_checked(lambda text: RunSettings(sink=text).sinks()),
        help="comma list: null (/dev/null), tmpfs, disk (default null)",
    )
    run.add_argument(
        "--payload",
        default="random",
        type=_checked(lambda text: RunSettings(payload=text).payloads()),
        help="comma list: random, zero, text (default random)",
    )
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
    add_result_file_options(run)
    add_wait_option(run)
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
        "--remedies",
        choices=("auto", "on", "off"),
        default="auto",
        help="measure what would help, against your setup in the same rounds: HPN-SSH (where installed), -P 4, zlib "
        "where the payload compresses (default auto: over a --link with a delay; on: also to a remote HOST)",
    )
    run.add_argument(
        "--why-rounds",
        type=int,
        default=6,
        metavar="N",
        help="paired rounds per --why experiment (3-100; default 6, of which a --budget run keeps time for 4)",
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


def run_epilog() -> str:
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


def _checked(check: Callable[[str], object]) -> Callable[[str], str]:
    """An option's comma list checked as argparse reads it (`check` raises one UsageError line for the first bad
    name, the settings' own message), kept as the text the settings store."""

    def checked(text: str) -> str:
        check(text)
        return text

    return checked


def _check_tools(text: str) -> None:
    for name in comma_list(text):
        get_tool(name)


def parse_tie(text: str) -> float:
    """`--tie 3%` (or `3`, or `0.5%`) as a fraction; UsageError unless a percentage from 0 to 50%."""
    return parse_percentage(text, "--tie", "3%", MAX_TIE)


def parse_duration(text: str) -> float:
    """`--budget 90s`, `5m`, `1h`, `1m30s` or plain seconds; UsageError unless a positive time."""
    raw = text.strip().lower()
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", raw)
    if not raw or parts is None or not any(parts.groups()):
        raise UsageError(f"--budget {text!r} is not a time (e.g. 90s, 5m)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in parts.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise UsageError(f"--budget {text!r} must be positive")
    return total


def parse_runs(text: str | int | None) -> int | None:
    """`--runs N` (a positive count) or `--runs auto` (None)."""
    if text is None:  # already parsed: auto
        return None
    text = str(text)
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--runs {text!r}: a count (e.g. 5) or 'auto'") from None
    if value < 1:
        raise UsageError(f"--runs must be at least 1 (got {value})")
    return value


def given_options(
    argv: list[str], command: str = "run", add_options: Callable[[argparse.ArgumentParser], None] = add_run_options
) -> set[str]:
    """The options the user typed (`check` passes its own command and options), by their destinations (a preset fills in
    only the others; --resume refuses measurement options): `argv` parsed again with every default suppressed."""
    parser = make_parser([lambda sub: add_options(sub.add_parser(command))])
    run_parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    for action in run_parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv))) - {"command"}


def check_args(args: argparse.Namespace, given: set[str]) -> None:
    """What no single option's parser can check: options that contradict each other, counts that would plan for
    ever. One UsageError line for the first."""
    if args.seeds and args.preset:
        raise UsageError("--seeds runs the seed presets itself; give either --seeds or --preset")
    if (args.seeds or args.preset) and args.resume is not None:
        raise UsageError("--resume uses the stored run's settings; drop --preset/--seeds")
    run_count = parse_runs(args.runs)  # a preset's count is not parsed yet
    if (run_count is not None and run_count > 10_000) or args.warmup > 100:  # a typo'd count would plan for ever
        raise UsageError(f"--runs {args.runs} / --warmup {args.warmup}: at most 10000 runs and 100 warm-up passes")
    if args.reverse and "direction" in given and args.direction != "down":
        raise UsageError(f"-R/--reverse means --direction down; it contradicts --direction {args.direction}")
    if args.no_why and args.why:
        raise UsageError(f"--no-why contradicts --why {args.why}")


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """The run's settings from its parsed options: the options named as their settings are taken as they are,
    the others derived here (--runs auto, --budget's default with --full, the negated --no-* flags)."""
    runs = args.runs  # parse_runs: a count, or None for auto
    derived = {
        "runs": MIN_AUTO_RUNS if runs is None else runs,
        "adaptive": runs is None,
        "tie": args.tie,
        "budget_s": args.budget
        if args.budget is not None
        else DEFAULT_FULL_BUDGET_S
        if args.full
        else DEFAULT_BUDGET_S,
        "seconds": cpu_quota.data_phase_seconds(args.server_cpu) if args.seconds is None else args.seconds,
        # not fitted to --budget under --server-cpu: shorter phases would time sshd's fixed cost per transfer
        "fit_seconds": runs is None and args.seconds is None and args.server_cpu is None,
        "trial_timeout_s": args.trial_timeout,
        "ssh": args.ssh or "ssh",
        "direction": "down" if args.reverse else args.direction,
        "baselines": not args.no_baselines,
        "default_reference": not args.no_reference,
        "why": "off" if args.no_why else args.why or "auto",
        "pin": not args.no_pin,
        "warm": not args.no_warm,
    }
    given = vars(args)
    same = {f.name: given[f.name] for f in fields(RunSettings) if f.name in given and f.name not in derived}
    return RunSettings(**same, **derived)

"""`sshbench latency [HOST]`: per cipher, the round trip of single keystrokes echoed by a remote `cat`
(sshping's echo test, sshbench.measure.latency) and the connect-time distribution, on the private sshd (default),
an emulated link (`--link`) or a HOST. Each run is recorded in the results store as a latency run
(store/latency_runs.py: `runs`, `report`, `export`, `import` and `compare` read it); --json also writes it."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from types import SimpleNamespace

from rich.console import Console

from sshbench import __version__
from sshbench.algorithms.select import select
from sshbench.cli.common import (
    add_db_option,
    add_ssh_config_option,
    add_sshd_option,
    add_wait_option,
    check_writable,
    write_output,
)
from sshbench.errors import Interrupted, RunError, UsageError
from sshbench.host import environment
from sshbench.host.cleanup import Cleanup, signals_raise
from sshbench.host.leftovers import clean_leftovers
from sshbench.measure import latency
from sshbench.report.latency import conclusion_lines, render_table
from sshbench.settings import RunSettings
from sshbench.store import latency_runs, open_store
from sshbench.store.sqlite import Store
from sshbench.targets import make_target
from sshbench.targets.base import Target

DEFAULT_CHARS = 1000
DEFAULT_CONNECTS = 10


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("latency", help="interactive latency: keystroke echo round trip and connect time per cipher")
    p.add_argument("host", nargs="?", help="user@host or an ssh_config alias; omit for the private sshd")
    p.add_argument("--ciphers", default="all", help="comma list of names, globs, 'all' or 'default' (default all)")
    p.add_argument("--kex", help="key exchange for the connections, as --ciphers, one name (default: ssh's)")
    p.add_argument(
        "--chars", type=int, default=DEFAULT_CHARS, help=f"characters echoed per cipher (default {DEFAULT_CHARS})"
    )
    p.add_argument(
        "--connects",
        type=int,
        default=DEFAULT_CONNECTS,
        help=f"connections timed per cipher, 0 for none (default {DEFAULT_CONNECTS})",
    )
    p.add_argument("--link", default="loopback", help="comma list of link profiles (private sshd only)")
    p.add_argument("--json", metavar="FILE", help="write the settings, target and figures as JSON")
    add_ssh_config_option(p)
    add_sshd_option(p)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per echo test (default 120)")
    add_db_option(p)
    add_wait_option(p)
    p.set_defaults(handler=cmd_latency)


def _check(args: argparse.Namespace) -> None:
    if args.chars < 1 or args.chars > 1_000_000:
        raise UsageError(f"--chars must be between 1 and 1000000 (got {args.chars})")
    if args.connects < 0 or args.connects > 10_000:
        raise UsageError(f"--connects must be between 0 and 10000 (got {args.connects})")
    if not args.timeout > 0:
        raise UsageError("--timeout must be positive")
    if args.kex is not None and "," in args.kex:
        raise UsageError("--kex takes one key exchange name")
    check_writable(args.json)


def connect_summary(times_s: list[float]) -> dict:
    """{median_ms, min_ms, max_ms, n} of connect wall times (None and 0 for none)."""
    if not times_s:
        return {"median_ms": None, "min_ms": None, "max_ms": None, "n": 0}
    ms = [t * 1000 for t in times_s]
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "n": len(ms)}


def _ssh_argv(target: Target, ssh: str, cipher: str, kex: str | None) -> list[str]:
    algorithms = ["-o", f"Ciphers={cipher}"] + (["-o", f"KexAlgorithms={kex}"] if kex else [])
    return [ssh, *target.client_options(), *algorithms, *target.destination()]


def measure(settings: RunSettings, args: argparse.Namespace, err: Console, store: Store | None = None) -> dict:
    """Start the target, then per link and cipher: echo test and connect times. The JSON document; with a
    store, the run is recorded there once it starts measuring, each row as it is measured."""
    removed = clean_leftovers()
    if removed:
        err.print(f"sshbench: removed leftovers of an earlier run that was killed: {', '.join(removed)}")
    document: dict = {
        "command": latency_runs.COMMAND,
        "schema_version": latency_runs.SCHEMA_VERSION,
        "sshbench_version": __version__,
        "status": "running",
        "error": None,
        "started_at": time.time(),
        "finished_at": None,
        "settings": {
            "host": settings.host,
            "ciphers": args.ciphers,
            "kex": args.kex,
            "chars": args.chars,
            "connects": args.connects,
            "link": settings.link,
            "ssh_config": settings.ssh_config,
        },
        "environment": {},
        "target": {},
        "results": [],
    }
    cleanup = Cleanup()
    run_id: int | None = None
    with signals_raise():
        try:
            target = make_target(settings.target)
            target.start(cleanup)
            client, server = target.client_algorithms(), target.server_algorithms()
            ciphers = select("cipher", args.ciphers, client, server, target.label)
            if args.kex:
                select("kex", args.kex, client, server, target.label)
            document["target"] = target.describe()
            document["environment"] = {
                **environment.collect(settings.ssh),
                "server_ssh_version": document["target"].get("server_version"),
                "target": target.label,
            }
            if store is not None:  # measuring from here on: the run's row (a refused run stores nothing)
                run_id = latency_runs.create(store, document)
            links = [p.name for p in settings.link_profiles()]
            for link in links:
                target.before_trial(SimpleNamespace(link=link))
                details = (target.link_details() or {}).get(link, {})
                shown = "direct" if settings.host else link  # a HOST: the real path, no emulated link
                for cipher in ciphers:
                    document["results"].append(_one(target, settings.ssh, cipher, shown, details, args, err))
                    if store is not None and run_id is not None:
                        latency_runs.update(store, run_id, document)
            document["status"] = "complete"
        except BaseException as stop:
            stopped = isinstance(stop, (KeyboardInterrupt, Interrupted))
            document["status"] = "interrupted" if stopped else "failed"
            document["error"] = "interrupted" if stopped else (str(stop) or type(stop).__name__)
            raise
        finally:
            cleanup.close()
            document["finished_at"] = time.time()
            if store is not None and run_id is not None:
                latency_runs.update(store, run_id, document, finished=True)
                err.print(f"sshbench: stored as run {run_id} in {store.path}", markup=False, highlight=False)
    return document


def _one(
    target: Target, ssh: str, cipher: str, link: str, details: dict, args: argparse.Namespace, err: Console
) -> dict:
    argv = _ssh_argv(target, ssh, cipher, args.kex)
    row: dict = {"cipher": cipher, "kex": args.kex, "link": link, "link_rtt_s": details.get("rtt_s"), "error": None}
    try:
        prefix, env = target.client_prefix(), target.client_env()
        echo = latency.measure_echo(argv, chars=args.chars, timeout_s=args.timeout, env=env, prefix=prefix)
        row["echo"] = echo.summary()
        row["setup_s"] = echo.setup_s
        row["error"] = echo.error
        row["rtts_us"] = [round(rtt, 1) for rtt in echo.rtts_us]  # every keystroke: what compare's intervals use
        connects = latency.measure_connect([*prefix, *argv], n=args.connects, env=env) if args.connects else []
        row["connect"] = connect_summary(connects)
        row["connect_ms"] = [round(t * 1000, 3) for t in connects]
    except latency.EchoError as e:
        row.setdefault("echo", latency.summarise_echo([]))
        row.setdefault("connect", connect_summary([]))
        row.setdefault("rtts_us", [])
        row.setdefault("connect_ms", [])
        row["error"] = str(e)
    if row["error"]:
        err.print(f"sshbench: {cipher} on {link}: {row['error']}", markup=False, highlight=False)
    return row


def cmd_latency(args: argparse.Namespace, out: Console, err: Console) -> int:
    _check(args)
    settings = RunSettings(host=args.host, ssh_config=args.ssh_config, link=args.link, sshd=args.sshd)
    settings.validate()
    with open_store(args.db) as store:
        document = measure(settings, args, err, store)
    out.print(render_table(document))
    for line in conclusion_lines(document):
        out.print(line, markup=False, highlight=False)
    if args.json:
        write_output(json.dumps(document, indent=2) + "\n", args.json, out)
        err.print(f"sshbench: wrote {args.json}", highlight=False)
    if not document["results"]:
        raise RunError("no cipher was measured")
    return 1 if any(r["error"] for r in document["results"]) else 0

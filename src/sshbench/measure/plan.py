"""Plan the matrix (which combinations: selection per client/server pair, then every dimension) and
the schedule (in which order trials run).

Trials are interleaved round-robin: every combination once, then all again, so that a burst of
load on a shared machine spreads over all combinations instead of sinking one.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sshbench.algorithms import ClientAlgorithms
from sshbench.compression import NO_COMPRESSION
from sshbench.errors import UsageError
from sshbench.measure.algorithm_choice import (
    default_algorithms,
    note_ciphers_left_out,
    note_idle_mac_options,
    notice_once,
    select_algorithms,
)
from sshbench.results import CROSSED_AXES, IMPLICIT_MAC, UNPINNED, Combination, TrialKind
from sshbench.tools import TOOLS, TransferTool

if TYPE_CHECKING:  # only for annotations: settings and targets import far more than the plan needs
    from sshbench.settings import RunSettings
    from sshbench.targets import Target


@dataclass(frozen=True)
class ScheduledTrial:
    combination: Combination
    kind: TrialKind
    repetition: int
    warmup: bool
    calibration: bool = False  # a warm-up trial whose rate sizes the payload


def build_matrix(
    ciphers: list[str],
    macs: list[str],
    kexes: list[str],
    aead_ciphers: set[str],
    **values: str | int | Sequence[str | int],
) -> list[Combination]:
    """ciphers x MACs x every other axis of the table (results.AXES, nested as CROSSED_AXES): `values` gives an
    axis's values by its name (one value or a list; an axis not given takes Combination's default). AEAD ciphers
    carry their own integrity, so they are not multiplied by MACs. Algorithms vary fastest, so one table of ciphers
    reads together per setting. A new axis is a Combination field and an AXES line: this crosses it."""
    unknown = set(values) - set(CROSSED_AXES)
    if unknown:
        raise ValueError(f"build_matrix: not an axis: {', '.join(sorted(unknown))}")
    given: dict[str, str | int | Sequence[str | int]] = {**values, "kex": kexes}
    fields = Combination.__dataclass_fields__
    lists = [_values(given[name]) if name in given else [fields[name].default] for name in CROSSED_AXES]
    combos: list[Combination] = []
    for point in itertools.product(*lists):
        setting = dict(zip(CROSSED_AXES, point, strict=True))
        for cipher in ciphers:
            for mac in [IMPLICIT_MAC] if cipher in aead_ciphers else macs:
                combo = Combination(cipher=cipher, mac=mac, **setting)  # type: ignore[arg-type]  # AXES: its fields
                if combo not in combos:
                    combos.append(combo)
    return combos


def _values(value: str | int | Sequence[str | int]) -> list[str | int]:
    """An axis's values as a Combination holds them: plain str (an enum's value) or int."""
    values = [value] if isinstance(value, str | int) else list(value)
    return [v if isinstance(v, int) else str(v) for v in values]


# The kex transfers are set up with where the run does not measure kex (no --kex): the fastest to set up that
# OpenSSH 9.2 and every server here speak. A transfer row's kex (what the user's ssh negotiates) sets only the
# set-up's length and the rekeys' stall, and the data phase does not depend on it. On this 2-core VM
# `ssh host true` took 0.23 s with sntrup761x25519-sha512 (69 ms of it the client's key generation) and
# 0.14 s with curve25519-sha256: 0.09 s of every trial's ~0.8 s in --full (351 trials). The row's own kex is
# still what its handshake trials (the set-up figure) and its rekey probe (the rekeys' stall) connect with.
SETUP_KEX = "curve25519-sha256"


def setup_kex(combo: Combination, client_kex: list[str], server_kex: list[str]) -> str | None:
    """The kex a transfer of `combo` connects with instead of its own (SETUP_KEX), or None: its own. Only for
    OpenSSH's client (the one whose kex sshbench pins and checks), never in a build sweep (whose rows compare
    the builds' own set-up), and only where both ends speak it."""
    if combo.client != "openssh" or combo.kex in (UNPINNED, SETUP_KEX) or combo.ssh_build or combo.sshd_build:
        return None
    return SETUP_KEX if SETUP_KEX in client_kex and SETUP_KEX in server_kex else None


def handshake_combinations(
    transfers: list[Combination], setup_kexes: dict[Combination, str] | None = None
) -> list[Combination]:
    """One no-data combination per connection shape (kex, compression, tool, direction, sink), shaped
    like the first transfer of that shape, so that its wall time can be subtracted from a transfer's:
    the data clock of tools with no server-side clock, and the cross-check of those with one. A transfer
    set up with another kex (`setup_kexes`, setup_kex) adds that shape too: its wall time is the one subtracted."""
    seen: dict[tuple, Combination] = {}
    for combo in transfers:
        seen.setdefault(combo.shape, combo)
        if setup_kexes and (kex := setup_kexes.get(combo)):
            other = replace(combo, kex=kex)
            seen.setdefault(other.shape, other)
    return list(seen.values())


def kex_handshakes(
    transfers: list[Combination], client_builds: dict[str, ClientAlgorithms] | None, targets: dict[str, Target]
) -> list[Combination]:
    """A build sweep's set-up table per kex and build: besides the transfers' own shapes, a handshake of
    every pairing with each kex some pairing measures (e.g. OpenSSH 10.0's default mlkem768x25519-sha256
    next to 9.2's sntrup761x25519-sha512@openssh.com on 10.0 <-> 10.0) that both builds of the pairing speak."""
    if not (client_builds or any(t.sshd_build for t in targets.values())):
        return []
    shapes = {c.shape for c in transfers}
    kexes = list(dict.fromkeys(c.kex for c in transfers if c.kex != UNPINNED))
    servers = {t.sshd_build: t.server_algorithms().kex for t in targets.values()}
    out: list[Combination] = []
    for combo in handshake_combinations(transfers):
        if combo.client != "openssh" or combo.server != "openssh":
            continue
        client_kex = client_builds[combo.ssh_build].kex if client_builds and combo.ssh_build else None
        for kex in kexes:
            other = replace(combo, kex=kex)
            speaks = kex in servers.get(combo.sshd_build, []) and (client_kex is None or kex in client_kex)
            if speaks and other.shape not in shapes and other not in out:
                out.append(other)
    return out


def calibration_key(combo: Combination) -> Combination:
    """What a combination's payload size is calibrated by: everything but its MAC and kex. The cipher
    (with tool, direction, link, streams...) sets the rate to within ~2x; a MAC moves it less (aes128-ctr
    with umac-64 vs hmac-sha2-512: ~1.6x here), and a data phase 0.5-2x the target times as well. So
    `--full` (115 combinations on OpenSSH 9.2, ~1.2 s of probes each) probes once per cipher; a build sweep's
    pairings share their probe too (builds of one cipher run within ~10% of each other here)."""
    return replace(combo, mac="", kex="", ssh_build="", sshd_build="")


def calibration_groups(transfers: list[Combination]) -> dict[Combination, list[Combination]]:
    """Each calibration group's first combination (in matrix order) -> every member, itself first."""
    groups: dict[Combination, list[Combination]] = {}
    for combo in transfers:
        groups.setdefault(calibration_key(combo), []).append(combo)
    return {members[0]: members for members in groups.values()}


def schedule(
    transfers: list[Combination],
    handshakes: list[Combination],
    runs: int,
    warmup: int,
    calibrate: bool,
    raw_tcp: Combination | list[Combination] | None = None,
    seed: int | None = None,
) -> list[ScheduledTrial]:
    """Warm-up passes first (the first one calibrates sizes when asked, one probe per calibration group:
    the others of a group take its size), then `runs` interleaved passes.
    Each pass opens with its handshake trials, so that a tool timed by wall minus handshake (scp,
    sftp, rsync) has a handshake figure when its calibration probe needs a rate.
    `raw_tcp`: the raw TCP control (sshbench.baselines.raw_tcp), one trial per pass like a combination
    (a list: one per emulated link). `seed`: the transfers of each measured pass in an order shuffled
    with it (recorded in the settings, so a run can be replayed); None keeps the matrix order."""
    rng = random.Random(seed) if seed is not None else None
    plan: list[ScheduledTrial] = []
    raw_tcps = [] if raw_tcp is None else [raw_tcp] if isinstance(raw_tcp, Combination) else list(raw_tcp)
    warmup_passes = max(warmup, 1 if calibrate else 0)
    probed = list(calibration_groups(transfers)) if calibrate else transfers
    for rep in range(warmup_passes):
        plan.extend(ScheduledTrial(c, TrialKind.HANDSHAKE, rep, True) for c in handshakes)
        first = calibrate and rep == 0  # the calibration pass: one probe per group (calibration_key)
        plan.extend(
            ScheduledTrial(c, TrialKind.TRANSFER, rep, True, calibration=first)
            for c in (probed if first else transfers)
        )
        plan.extend(
            ScheduledTrial(r, TrialKind.RAW_TCP, rep, True, calibration=calibrate and rep == 0) for r in raw_tcps
        )
    for rep in range(runs):
        plan.extend(measured_round(transfers, handshakes, rep, rng))
        plan.extend(ScheduledTrial(r, TrialKind.RAW_TCP, rep, False) for r in raw_tcps)
    return plan


def measured_round(
    transfers: list[Combination], handshakes: list[Combination], rep: int, rng: random.Random | None = None
) -> list[ScheduledTrial]:
    """One measured pass: its handshakes, then every transfer once (shuffled by `rng` when given)."""
    order = rng.sample(transfers, len(transfers)) if rng is not None else list(transfers)
    return [
        *(ScheduledTrial(c, TrialKind.HANDSHAKE, rep, False) for c in handshakes),
        *(ScheduledTrial(c, TrialKind.TRANSFER, rep, False) for c in order),
    ]


def server_name(target_key: str) -> str:
    """The server implementation of a runner's target key (`openssh`, or `openssh@OpenSSH_10.0p2` in a build sweep)."""
    return target_key.split("@", 1)[0]


def target_key(server: str, sshd_build: str = "") -> str:
    """The runner's key for the target of `server` (and, in a build sweep, of that sshd build)."""
    return f"{server}@{sshd_build}" if sshd_build else server


def plan_matrix(
    targets: dict[str, Target],
    tools: dict[str, TransferTool],
    settings: RunSettings,
    notices: list[str],
    client_builds: dict[str, ClientAlgorithms] | None = None,
) -> list[Combination]:
    """Every combination over every (server, client implementation) pair, and in a build sweep every
    (ssh build, sshd build) pairing (`client_builds`: label -> what that ssh build speaks; the targets'
    `sshd_build`). With several pairs, an algorithm one pair cannot speak is skipped for that pair with a
    notice (an algorithm only one build has, say); it is an error only when no pair can."""
    s = settings
    axes = s.axes  # parsed once for every pair and tool below
    pairs = [
        (server_name(name), t, client_name, build, algorithms)
        for name, t in targets.items()
        for client_name, client in t.client_implementations().items()
        for build, algorithms in (
            client_builds.items() if client_builds and client_name == "openssh" else [("", client)]
        )
    ]
    combos: list[Combination] = []
    errors: list[UsageError] = []
    for server_impl, target, client_name, ssh_build, client in pairs:
        pair_name = f"{client_name}/{server_impl}"
        if ssh_build or target.sshd_build:
            pair_name = f"{ssh_build or client_name} -> {target.sshd_build or server_impl}"
        skipped: list[str] | None = [] if len(pairs) > 1 else None
        try:
            ciphers, macs, kexes = select_algorithms(
                s,
                client,
                target.server_algorithms(),
                target.label,
                skipped,
                every_cipher=server_impl == "asyncssh" or client_name != "openssh",
            )
            note_ciphers_left_out(s, ciphers, client, target.server_algorithms(), notices)
            if skipped:
                notices.append(f"{pair_name} leaves out {', '.join(skipped)}: not spoken by both ends of that pair")
        except UsageError as err:
            if len(pairs) == 1:
                raise
            errors.append(err)
            notices.append(f"{pair_name}: {err}")
            continue
        note_idle_mac_options(s, ciphers, client.aead_ciphers, notices)
        for tool in tools.values():
            if client_name != "openssh" and (client_name, tool.name) not in TOOLS:
                # e.g. AsyncSSH's client has a pipe only: its scp/sftp/rsync cells are left out, said once
                notice = f"the {client_name} client has no {tool.name} tool: {pair_name} runs pipe only"
                if notice not in notices:
                    notices.append(notice)
                continue
            sinks: list[str] = list(axes.sinks)
            if tool.needs_file_sink and "null" in sinks:
                # rsync renames a temp file into place: /dev/null cannot be its destination
                sinks = list(dict.fromkeys("tmpfs" if k == "null" else k for k in sinks))
                notice = f"{tool.name} cannot write to /dev/null: it writes to a tmpfs sink instead"
                if notice not in notices:
                    notices.append(notice)
            tool_ciphers, tool_macs, tool_kexes, tool_client = ciphers, macs, kexes, client_name
            compressions = list(axes.compressions)
            if not tool.compresses and compressions != [NO_COMPRESSION]:
                # its zlib rows would be uncompressed ones under another name (refused up front when it is the
                # only tool and --compression on: cli/run_notices.py)
                compressions = [c for c in compressions if c == NO_COMPRESSION]
                notice_once(
                    notices,
                    f"{tool.name} cannot compress (its SSH client has no zlib): its --compression rows are left out",
                )
                if not compressions:
                    continue
            if tool.client_name is not None:  # rclone: its own SSH client, ranked apart from OpenSSH's
                tool_client = tool.client_name
                if not tool.pins:
                    tool_ciphers, tool_macs, tool_kexes = [UNPINNED], [IMPLICIT_MAC], [UNPINNED]
                    notice_once(
                        notices,
                        f"{tool.name} cannot be told which cipher, MAC or kex to use: its rows are its own choice "
                        f"('{UNPINNED}'), ranked apart and never with pinned ones",
                    )
            # The conclusion compares with what a connection with no options gets: measured even when the
            # selection leaves it out (a reference, like the raw TCP control: --no-baselines drops it).
            default = (
                default_algorithms(client, target.server_algorithms())
                if s.baselines and s.default_reference and tool_client == client_name
                else None
            )
            algorithm_sets = [(tool_ciphers, tool_macs, tool_kexes)]
            if default is not None:
                algorithm_sets.append(([default["cipher"]], [default["mac"]], [default["kex"]]))
            for set_index, (set_ciphers, set_macs, set_kexes) in enumerate(algorithm_sets):
                before = len(combos)
                tool_combos = build_matrix(
                    set_ciphers,
                    set_macs,
                    set_kexes,
                    client.aead_ciphers | {UNPINNED},
                    compression=compressions,
                    tool=tool.name,
                    direction=list(axes.directions),
                    sink=sinks,
                    payload=list(axes.payloads),
                    server=server_impl,
                    client=tool_client,
                    link=[p.name for p in axes.links],
                    streams=list(axes.stream_counts),
                )
                if ssh_build or target.sshd_build:
                    ssh_label = ssh_build if tool_client == client_name else ""  # rclone brings its own client
                    tool_combos = [replace(c, ssh_build=ssh_label, sshd_build=target.sshd_build) for c in tool_combos]
                # lftp's pget and rclone's multi-thread copy split downloads only: no N-stream uploads for them
                kept = [c for c in tool_combos if c.streams == 1 or c.direction in tool.stream_directions]
                if len(kept) < len(tool_combos):
                    notice_once(
                        notices,
                        f"{tool.name} splits a file over several connections only when downloading: "
                        "its -P N uploads are left out",
                    )
                combos.extend(c for c in kept if c not in combos)
                if set_index == 1 and default is not None and len(combos) > before:
                    mac = "" if default["mac"] == IMPLICIT_MAC else f" + {default['mac']}"
                    notice_once(
                        notices,
                        f"{pair_name}: also measured the default, {default['cipher']}{mac} "
                        f"({default['kex']}), to compare with (--no-baselines leaves it out)",
                    )
    if not combos and errors:
        raise errors[0]
    if any(c.streams > 1 for c in combos):
        notices.append(
            "-P N: N connections started together, each moving 1/N of the payload; MiB/s is the aggregate "
            "(all bytes over the common data phase, first start to last end); per-stream figures in the JSON"
        )
    return combos

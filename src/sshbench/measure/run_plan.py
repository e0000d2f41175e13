"""What a run plans before its first trial, besides the schedule (sshbench.measure.plan): its rows (the matrix, then
--remedies' rows), each row's first payload size and the raw TCP control's rows. Pure: the settings, the matrix's axes and the crypto ceilings are passed in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sshbench.algorithms import ClientAlgorithms
from sshbench.axis_values import MatrixSpec
from sshbench.baselines import crypto_ceiling
from sshbench.links import profile_named
from sshbench.measure import parallel
from sshbench.measure.calibration import FIRST_WINDOW_BYTES, RAMP_PROBE_SIZE
from sshbench.measure.payload import PROBE_SIZE, size_at_least
from sshbench.measure.plan import plan_matrix, setup_kex
from sshbench.measure.remedies import with_remedy_rows
from sshbench.measure.steady import OMIT_S
from sshbench.measure.streams import stream_share
from sshbench.measure.trial_files import TrialPaths
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import Target
from sshbench.tools import TransferTool


def planned_rows(
    targets: dict[str, Target],
    tools: dict[str, TransferTool],
    settings: RunSettings,
    notices: list[str],
    client_builds: dict[str, ClientAlgorithms] | None,
    primary: Target,
) -> list[Combination]:
    """The run's rows: the matrix over every pair (plan.plan_matrix), then --remedies' rows (remedies.with_remedy_rows)."""
    combos = plan_matrix(targets, tools, settings, notices, client_builds)
    return with_remedy_rows(combos, settings, primary, client_builds, notices)


# A cipher whose one-core crypto ceiling (`openssl speed`, measured before the trials) is at least this fast
# probes with RAMP_PROBE_SIZE at once, OpenSSH to OpenSSH on this machine's loopback: its 16 MiB probe would
# only ask for the 64 MiB one (a default run probed every one of its 6 ciphers twice: ~2.5 s of its 55).
FAST_CEILING_MIB_S = 1000.0


# Behind a shaped link the rate cannot pass the line rate, so a probe needs only its first channel window, the
# omitted start and a steady part at that rate: 16 MiB took 6.2 s a probe behind wan24m (24 Mbit/s; 45 s of
# warm-up for 6 ciphers), where 4 MiB already has a steady part of ~0.4 s.
LINK_PROBE_S = OMIT_S + 0.3


def link_probe_size(rate_bit_s: int, max_size: int) -> int:
    """The calibration probe behind a link shaped to `rate_bit_s`: never bigger than PROBE_SIZE."""
    line_bytes_s = rate_bit_s / 8
    return min(size_at_least(int(line_bytes_s * LINK_PROBE_S) + FIRST_WINDOW_BYTES, max_size), PROBE_SIZE, max_size)


def first_probe_size(ceiling_mib_s: float | None, max_size: int) -> int:
    """The calibration probe's size for a combination with this crypto ceiling (None: not measured)."""
    fast = ceiling_mib_s is not None and ceiling_mib_s >= FAST_CEILING_MIB_S
    return min(RAMP_PROBE_SIZE if fast else PROBE_SIZE, max_size)


def first_sizes(
    combos: list[Combination],
    handshakes: list[Combination],
    settings: RunSettings,
    *,
    fixed_size: int | None,
    emulated: bool,
    crypto: dict,
) -> dict[Combination, int]:
    """Each transfer's and handshake's first size: the fixed one (--size, --file), else a calibration probe's; OpenSSH
    on loopback starts a fast cipher's probe past the connection's start (its crypto ceiling), a shaped link's what
    its line rate needs (calibration.first_probe_size, link_probe_size)."""
    s = settings
    sizes = {c: fixed_size or min(PROBE_SIZE, s.max_size) for c in [*combos, *handshakes]}
    if fixed_size is None and s.server_cpu is None and s.host is None and not emulated:
        for c in combos:  # OpenSSH on loopback: a fast cipher's probe starts past the connection's start
            if c.client == "openssh" and c.server == "openssh":
                sizes[c] = first_probe_size(crypto_ceiling.ceiling_for(c, crypto)[0], s.max_size)
    if fixed_size is None and emulated:
        for c in combos:  # behind a shaped link: what its line rate needs (calibration.link_probe_size)
            profile = profile_named(c.link)
            if profile is not None and profile.rate_bit_s:
                sizes[c] = link_probe_size(profile.rate_bit_s, s.max_size)
    return sizes


def raw_tcp_combinations(
    raw_tcp_combo: Combination | None, axes: MatrixSpec, both_directions: bool
) -> list[Combination]:
    """The raw TCP control's rows. Emulated links (sshbench.links): the control runs once per link, over that link.
    A remote host's control runs in each direction measured (the server sends for "down"), its download with one
    stream; with -P N the control has N streams too."""
    if raw_tcp_combo is None:
        return []
    directions = [str(d) for d in axes.directions] if both_directions else ["up"]
    return [
        replace(raw_tcp_combo, link=p.name, direction=d, streams=n)  # -P N: the control with N streams too
        for p in axes.links
        for d in directions
        for n in axes.stream_counts
        if d == "up" or n == 1  # a remote host's download control: one stream
    ]


def setup_kexes(
    combos: list[Combination], target_for: Callable[[Combination], Target], measures_kex: bool
) -> dict[Combination, str]:
    """The kex each transfer connects with instead of its own (plan.setup_kex): none where the run measures kex
    (--kex), where the rows' kex is what is compared."""
    if measures_kex:
        return {}
    out: dict[Combination, str] = {}
    for combo in combos:
        target = target_for(combo)
        if kex := setup_kex(combo, target.client_algorithms().kex, target.server_algorithms().kex):
            out[combo] = kex
    return out


def write_tails(
    combos: list[Combination],
    sizes: dict[Combination, int],
    paths_of: Callable[[Combination], TrialPaths],
    tool_for: Callable[[Combination], TransferTool],
) -> None:
    """Before the measured rounds, each payload file their stdin tools read tails of (TrialPaths.tail), at the
    biggest size they start with: one file written here, where a round in shuffled order wrote a new one
    each time a bigger size came (2-3 for a default run's six)."""
    biggest: dict[tuple[int, str], tuple[TrialPaths, int]] = {}
    for c in combos:
        tool = tool_for(c)
        if c.direction != "up" or not tool.source_on_stdin:
            continue
        paths = paths_of(c)
        key = (id(paths), c.payload)
        size = stream_share(sizes[c], c.streams) if parallel.fans_out(c, tool) else sizes[c]  # -P N: each its share
        biggest[key] = (paths, max(size, biggest.get(key, (paths, 0))[1]))
    for (_, kind), (paths, size) in biggest.items():
        paths.tail(kind, size)

"""What would help (--remedies): the rows a run adds to measure, against the user's own setup and in the same
interleaved rounds, what lifts a transfer that the link, the window or a CPU holds back.

The reference is the user's setup as a connection with no options has it: the default algorithms between the
first --ssh and the first --sshd (the first selected row where the default is not measured), one stream, no
compression. Each remedy row changes one thing of it:

- `hpn-both`, `hpn-server`, `hpn-client`: HPN-SSH (found by openssh.builds.find_hpn, or the user's own sweep)
  at both ends, at the server only, at the client only: its window follows the socket's buffer where OpenSSH's
  is 2 MiB (lfn1g here: 11.7 -> 114 MiB/s at both ends). A remote HOST: the client only (sshbench installs
  nothing there).
- `streams`: REMEDY_STREAMS connections (-P), each with its own window (mscp: throughput grows up to 8).
- `compression`: zlib, where the payload compresses (random bytes do not: nothing is tried on them).

Planned here, at spec time (the HPN builds, with_hpn_builds) and after the matrix (with_remedy_rows); the answer
compares each with its reference (answers.remedies). Remedy rows are ranked apart (model.summary): the run's
answer, its config lines and its adaptive rounds stay the user's rows'."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sshbench.algorithms import ClientAlgorithms
from sshbench.compression import NO_COMPRESSION, ZLIB
from sshbench.measure.algorithm_choice import default_algorithms, notice_once
from sshbench.openssh import builds
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import Target
from sshbench.targets.private_openssh import find_sshd
from sshbench.tools import get_tool

REMEDY_STREAMS = 4  # -P 4: mscp's gains level off near 8 connections; 4 fits a 2-core machine's processes
COMPRESSIBLE = ("text", "zero", "file")  # payloads zlib can shrink (a --file: the user's own, perhaps)
HPN_REMEDIES = {
    (True, True): "hpn-both",
    (False, True): "hpn-server",
    (True, False): "hpn-client",
}


def with_hpn_builds(settings: RunSettings) -> RunSettings:
    """With --remedies and HPN-SSH installed or built (openssh.builds.find_hpn), its hpnssh (and, for a private
    sshd, hpnsshd) as the last build of a sweep the user did not ask for (`remedy_builds`). Unchanged where the
    user sweeps builds already, runs HPN-SSH already, or the server is not OpenSSH's."""
    if not settings.remedies_on() or settings.remedy_builds or settings.server != "openssh":
        return settings
    if builds.sweeps(settings.ssh) or builds.sweeps(settings.sshd):
        return settings  # the user's own sweep: its pairings are compared as they are (answers.remedies)
    found = builds.find_hpn()
    if found is None:
        return settings
    hpnssh, hpnsshd = found
    if settings.host is not None:  # a remote HOST: what an HPN-SSH client alone buys against its sshd
        return replace(settings, ssh=f"{settings.ssh},{hpnssh}", remedy_builds=True)
    sshd = find_sshd(settings.sshd)
    if builds.is_hpn(builds.inspect(sshd, "sshd", settings.sshd_session).version):
        return settings
    return replace(settings, ssh=f"{settings.ssh},{hpnssh}", sshd=f"{sshd},{hpnsshd}", remedy_builds=True)


def reference_algorithms(
    combos: Sequence[Combination], target: Target, client: ClientAlgorithms | None
) -> tuple[str, str] | None:
    """The (cipher, MAC) of the user's setup: what a connection with no options negotiates, where measured."""
    if not combos:
        return None
    default = default_algorithms(client, target.server_algorithms()) if client is not None else None
    measured = {(c.cipher, c.mac) for c in combos}
    if default is not None and (default["cipher"], default["mac"]) in measured:
        return default["cipher"], default["mac"]
    return combos[0].cipher, combos[0].mac


def with_remedy_rows(
    combos: list[Combination],
    settings: RunSettings,
    target: Target,
    client_builds: Mapping[str, ClientAlgorithms] | None,
    notices: list[str],
) -> list[Combination]:
    """The user's rows, then the remedy rows: a build sweep sshbench added (`remedy_builds`) keeps, for its other
    pairings, only the reference's algorithms (one kex each), marked; -P and zlib rows of the reference added."""
    if not settings.remedies_on():
        return combos
    first = combos[0] if combos else None
    base = (first.ssh_build, first.sshd_build) if first else ("", "")
    own = [c for c in combos if (c.ssh_build, c.sshd_build) == base or not settings.remedy_builds]
    client = next(iter(client_builds.values()), None) if client_builds else None
    if client is None:
        client = target.client_implementations().get("openssh")
    reference = reference_algorithms([c for c in own if c.client == "openssh"], target, client)
    if reference is None:  # no OpenSSH row to compare with (a tool with its own client): the user's rows only
        return own
    references = [
        c for c in own if (c.cipher, c.mac) == reference and c.streams == 1 and c.compression == NO_COMPRESSION
    ]
    references = list({_condition(c): c for c in reversed(references)}.values())[::-1]  # one per condition
    added: list[Combination] = []
    if settings.remedy_builds:
        added += _build_rows(combos, base, reference, client_builds or {})
        dropped = {label for c in combos for label in (c.ssh_build, c.sshd_build) if label not in base}
        # the plan's notices about the added pairings' own selection (their default, what they leave out)
        notices[:] = [n for n in notices if not any(f"{label} ->" in n or f"-> {label}" in n for label in dropped)]
    axes = settings.axes
    for ref in references:
        tool = get_tool(ref.tool)
        if axes.stream_counts == (1,) and ref.direction in tool.stream_directions:
            added.append(replace(ref, streams=REMEDY_STREAMS, remedy="streams"))
        if axes.compressions == (NO_COMPRESSION,) and ref.payload in COMPRESSIBLE and tool.compresses:
            added.append(replace(ref, compression=ZLIB, remedy="compression"))
    if added:
        notice_once(
            notices,
            f"--remedies: {len(added)} row(s) beside yours measure what would help (HPN-SSH, -P {REMEDY_STREAMS}, "
            "zlib where they apply), each against your setup in the same rounds; ranked apart",
        )
    return own + added


def _build_rows(
    combos: list[Combination],
    base: tuple[str, str],
    reference: tuple[str, str],
    client_builds: Mapping[str, ClientAlgorithms],
) -> list[Combination]:
    """Per pairing other than the user's and per condition, one row of the reference's algorithms with that
    pairing's kex (HPN-SSH at both ends negotiates its own default cipher, chacha20-poly1305-mt, so the plan has no
    row of the reference there: one is made from a row of that pairing), marked with what it changes."""
    rows: dict[tuple, Combination] = {}
    for c in combos:
        pairing = (c.ssh_build, c.sshd_build)
        if pairing == base or c.streams != 1 or c.compression != NO_COMPRESSION:
            continue
        client = client_builds.get(c.ssh_build)
        if client is not None and reference[0] not in client.ciphers:
            continue
        key = (pairing, _condition(c))
        made = replace(c, cipher=reference[0], mac=reference[1])
        if key not in rows or (c.cipher, c.mac) == reference:
            rows[key] = made
    return [
        replace(c, remedy=HPN_REMEDIES[(pairing[0] != base[0], pairing[1] != base[1])])
        for (pairing, _), c in rows.items()
    ]


def _condition(c: Combination) -> tuple:
    """What a remedy keeps from its reference: everything but the algorithms, the builds, streams, compression."""
    return (c.tool, c.direction, c.sink, c.payload, c.server, c.client, c.link)


__all__ = ["REMEDY_STREAMS", "reference_algorithms", "with_hpn_builds", "with_remedy_rows"]

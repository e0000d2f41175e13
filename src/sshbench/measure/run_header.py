"""The run's environment header (RunResult.environment as a run starts): the machine, both ends' versions and
defaults, the clock's rules this run follows, a build sweep's builds and pairings, the payload line. Pure but for
environment.collect and the --file's size: every value it reads is passed in (sshbench.measure.runner builds it once)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from sshbench.algorithms import ClientAlgorithms
from sshbench.axis_values import MatrixSpec
from sshbench.compression import NO_COMPRESSION
from sshbench.host import environment
from sshbench.measure.algorithm_choice import defaults_json
from sshbench.measure.calibration import steady_window_cap
from sshbench.measure.payload import FLATTERING_KINDS
from sshbench.measure.steady import OMIT_S
from sshbench.openssh import builds
from sshbench.results import Combination
from sshbench.settings import RunSettings
from sshbench.targets import Target
from sshbench.units import format_size


def environment_header(
    *,
    settings: RunSettings,
    axes: MatrixSpec,
    ssh: str,
    target: Target,
    targets: Mapping[str, Target],
    client_builds: dict[str, ClientAlgorithms] | None,
    ssh_builds: Sequence[builds.Build],
    sshd_builds: Sequence[builds.Build],
) -> dict:
    """The environment a run records before its first trial; `target` is the primary one (the first --server's)."""
    s = settings
    client, server = target.client_algorithms(), target.server_algorithms()
    return {
        **environment.collect(ssh),
        "server_ssh_version": target.server_version,
        "server_strict_kex": server.strict_kex,
        "client_strict_kex": client.strict_kex,
        "client_default_algorithms": defaults_json(client, server),  # the conclusion's "your ssh's default"
        "target": target.label,
        # the start-up the steady clock leaves out of this run's rates (0.2 s before it was recorded; docs/clock.md)
        "steady_omit_s": OMIT_S,
        # its steady windows end at --seconds (sshbench sized the payloads; absent before 2026-11-26: never)
        "steady_window_capped": steady_window_cap(s) is not None,
        # its rates count the rekeys of a long transfer where they come every 1 GiB (sshbench.measure.rekey; not before)
        "rekeys_counted": True,
        **(
            {"builds": build_facts(client_builds or {}, targets, ssh_builds, sshd_builds)}
            if client_builds or len(sshd_builds) > 1
            else {}
        ),
        **(
            {
                "servers": {
                    name: {
                        "label": t.label,
                        "version": t.server_version,
                        "strict_kex": t.server_algorithms().strict_kex,
                    }
                    for name, t in targets.items()
                }
            }
            if len(targets) > 1
            else {}
        ),
        "payload_kind": f"file {s.file}" if s.file else ",".join(axes.payloads),
        "payload_size": (
            format_size(os.path.getsize(s.file))
            if s.file
            else format_size(s.size)
            if s.size
            else f"adaptive (~{s.seconds:g} s per trial, at most {format_size(s.max_size)})"
        ),
    }


def build_facts(
    client_builds: dict[str, ClientAlgorithms],
    targets: Mapping[str, Target],
    ssh_builds: Sequence[builds.Build],
    sshd_builds: Sequence[builds.Build],
) -> dict:
    """The environment's `builds`: each build's path, version and label, and per (ssh, sshd) pairing what a
    connection with no options negotiates (the conclusion's default per build)."""
    primary = targets[next(iter(targets))]
    clients = client_builds or {"": primary.client_algorithms()}
    servers = {t.sshd_build: t for t in targets.values() if t.sshd_build} or {"": primary}
    return {
        "ssh": [b.to_json() for b in ssh_builds] if len(ssh_builds) > 1 else [],
        "sshd": [b.to_json() for b in sshd_builds] if len(sshd_builds) > 1 else [],
        "pairings": [
            {
                "ssh_build": ssh_label,
                "sshd_build": sshd_label,
                "server_version": t.server_version,
                **defaults_json(client, t.server_algorithms()),
            }
            for ssh_label, client in clients.items()
            for sshd_label, t in servers.items()
        ],
    }


# The notice where compressed rows run on zero-filled payloads (FLATTERING_KINDS)
FLATTERING_NOTICE = (
    "zero-filled payloads compress ~1000:1: compressed rates on them flatter "
    "compression far beyond real data (use --payload text or --file)"
)


def payload_record(ratios: dict[str, float], combinations: list[Combination]) -> tuple[dict | None, str | None]:
    """After the run: the environment's `payload_zlib_ratio` (None where no payload was compressed) and the notice
    where compressed rows ran on a payload that flatters them."""
    record = {k: round(v, 4) for k, v in ratios.items()} if ratios else None
    flatters = FLATTERING_KINDS & set(ratios) and any(c.compression != NO_COMPRESSION for c in combinations)
    return record, FLATTERING_NOTICE if flatters else None

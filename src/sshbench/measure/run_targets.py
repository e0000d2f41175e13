"""The run's targets up: one per --server, or for OpenSSH in a build sweep (--sshd A,B) one private sshd per build,
each keyed and labelled by its banner's version (sshbench.openssh.builds). Values in: the spec, the builds, the cleanup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sshbench.host.cleanup import Cleanup
from sshbench.measure.plan import target_key
from sshbench.openssh import builds
from sshbench.openssh.builds import version_label
from sshbench.settings import RunSettings, TargetSpec
from sshbench.targets import Target, make_target


def start_targets(
    server: str,
    spec: TargetSpec,
    settings: RunSettings,
    cleanup: Cleanup,
    *,
    env: dict[str, str] | None,
    ssh_builds: Sequence[builds.Build],
) -> tuple[list[tuple[str, Target]], list[builds.Build] | None]:
    """The target(s) of one --server, each with its key, and a sweep's sshd builds relabelled by their banners
    (None where this --server is no build sweep)."""
    sshd_builds = builds.inspect_all(settings.sshd, "sshd", settings.sshd_session) if server == "openssh" else []
    if len(sshd_builds) < 2:
        started = make_target(spec, server=server, env=env)
        offer_every_client(started, ssh_builds)
        started.start(cleanup)
        return [(server, started)], None
    out: list[Target] = []
    for index, build in enumerate(sshd_builds):  # behind emulated links, each its own namespace pair
        one = make_target(replace(spec, sshd_paths=(build.path,), link_index=index), server=server, env=env)
        offer_every_client(one, ssh_builds)
        one.start(cleanup)
        out.append(one)
    labels = [version_label(t.server_version or b.version) for t, b in zip(out, sshd_builds, strict=True)]
    relabelled = builds.relabel(sshd_builds, labels)
    for one, build in zip(out, relabelled, strict=True):
        one.sshd_build = build.label
    return [(target_key(server, b.label), t) for b, t in zip(relabelled, out, strict=True)], relabelled


def offer_every_client(target: Target, ssh_builds: Sequence[builds.Build]) -> None:
    """A build sweep's private sshd offers what any of the client builds speaks (mlkem768x25519-sha256 for
    OpenSSH 10.0's client even when 9.2's is the first)."""
    target.offer_client_builds([b.path for b in ssh_builds[1:]])

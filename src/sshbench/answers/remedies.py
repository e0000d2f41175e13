"""What would help: each remedy row a run measured (--remedies, sshbench.measure.remedies) against the user's setup,
by the paired ratio of their rounds (intervals.paired_ratio_ci: every row runs in the same interleaved rounds), most
gain first; then another cipher (the run's fastest row against the reference), what could not be tried and why, and
on an emulated link with a delay whether the machine's TCP buffers let a window cover the path.

Printed under the answer (report/conclusion.py); the JSON carries it as `remedies`. Pure, like answer.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from sshbench.answers.answer import compute as compute_answer
from sshbench.answers.build_answer import paired_verdict
from sshbench.model import summary
from sshbench.model.summary import Summary
from sshbench.openssh.builds import is_hpn
from sshbench.results import IMPLICIT_MAC, Combination, RunResult

MIB = 1024 * 1024
REMEDY_NAMES = {
    "hpn-both": "HPN-SSH at both ends",
    "hpn-server": "HPN-SSH at the server only",
    "hpn-client": "HPN-SSH at the client only",
    "streams": "{streams} connections (-P {streams})",
    "compression": "compression (zlib)",
    "cipher": "another cipher: {cipher}",
}
# The verdicts (baselines/bottleneck.py) under which a remedy is the question: the path or a CPU holds it back.
WHEN_ASKED = ("window", "network", "crypto", "cpu-client", "cpu-server", "shared-cpu", "ssh-overhead")


@dataclass
class Remedy:
    """One remedy against the reference: `ratio` its rate over the reference's (above 1: it helps)."""

    name: str  # "hpn-both", "streams", "compression", "cipher", ...
    what: str  # in words: "HPN-SSH at both ends"
    condition: str  # the link/direction it was measured on, where the run had several ("" otherwise)
    ratio: float | None
    low: float | None
    high: float | None
    decision: str  # "faster" | "slower" | "same speed" | "undecided"
    rate_mib_s: float | None
    reference_mib_s: float | None

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RemedyAnswer:
    reference: str  # the user's setup, as the lines name it
    reference_mib_s: float | None
    remedies: list[Remedy] = field(default_factory=list)
    not_tried: list[str] = field(default_factory=list)
    buffers: list[str] = field(default_factory=list)  # emulated links with a delay: do the buffers cover the path?

    def lines(self) -> list[str]:
        rate = f", {self.reference_mib_s:.3g} MiB/s" if self.reference_mib_s else ""
        out = [f"What would help (each against {self.reference}{rate}, in the same rounds; most gain first):"]
        width = max((len(_label(r)) for r in self.remedies), default=0)
        for r in self.remedies:
            out.append(f"  {_label(r):<{width}}  {_figure(r)}")
        out += [f"  not tried: {why}" for why in self.not_tried]
        out += [f"  {line}" for line in self.buffers]
        return out

    def to_json(self) -> dict:
        return {
            "reference": self.reference,
            "reference_mib_s": self.reference_mib_s,
            "remedies": [r.to_json() for r in self.remedies],
            "not_tried": self.not_tried,
            "buffers": self.buffers,
        }


def _label(r: Remedy) -> str:
    return f"{r.what} ({r.condition})" if r.condition else r.what


def _figure(r: Remedy) -> str:
    if r.ratio is None:
        return "not measured (no valid round)"
    interval = f"({r.low:.2f}-{r.high:.2f})" if r.low is not None and r.high is not None else ""
    rate = f", {r.rate_mib_s:.3g} MiB/s" if r.rate_mib_s else ""
    verdict = {"faster": "", "slower": ", slower", "same speed": ", the same speed", "undecided": ", undecided"}
    return f"{r.ratio:.2f}x {interval}{verdict.get(r.decision, '')}{rate}"


def compute(result: RunResult) -> RemedyAnswer | None:
    """None where the run measured no remedy row and the user's own answer is not a question of the path."""
    return summary.cached(result, "remedies", lambda: _compute(result))


def _compute(result: RunResult) -> RemedyAnswer | None:
    rows = [s for s in summary.summaries(result) if s.median_mib_s]
    remedy_rows = [s for s in rows if s.combination.remedy]
    settings = result.settings
    if not remedy_rows and not settings.remedies_on():
        return None
    # the user's own set-up: the first --ssh with the first --sshd (what they have), whatever builds the run added
    own_builds = _own_builds(result)
    own = [s for s in rows if not s.combination.remedy]
    yours = [s for s in own if own_builds is None or (s.combination.ssh_build, s.combination.sshd_build) == own_builds]
    by_round = summary.rates_by_round(result.trials)
    tie = summary.tie_margin(result)
    conditions = {_condition(s.combination) for s in own}
    found: list[Remedy] = []
    references: list[Summary] = []
    for s in remedy_rows:
        ref = _reference_of(s.combination, yours or own)
        if ref is None:
            continue
        references.append(ref)
        what = REMEDY_NAMES.get(s.combination.remedy, s.combination.remedy).format(streams=s.combination.streams)
        found.append(_versus(s, ref, what, by_round, tie, _where(s.combination, conditions)))
    reference = references[0] if references else _first_reference(yours or own, result)
    if reference is None:
        return None
    answer = compute_answer(result)
    top = next((s for s in own if answer and answer.fastest and _is_pick(s, answer.fastest[0])), None)
    if top is not None and (top.combination.cipher, top.combination.mac) != (
        reference.combination.cipher,
        reference.combination.mac,
    ):
        name = REMEDY_NAMES["cipher"].format(cipher=_name(top.combination))
        found.append(_versus(top, reference, name, by_round, tie, ""))
    found.sort(key=lambda r: -(r.ratio or 0.0))
    return RemedyAnswer(
        reference=_name(reference.combination),
        reference_mib_s=reference.median_mib_s,
        remedies=found,
        not_tried=_not_tried(result, {s.combination.remedy for s in remedy_rows}),
        buffers=_buffer_lines(result),
    )


def _condition(c: Combination) -> tuple:
    return (c.tool, c.direction, c.sink, c.payload, c.server, c.client, c.link)


def _where(c: Combination, conditions: set[tuple]) -> str:
    """The remedy's link (and direction) where the run measured several, for its line."""
    if len(conditions) < 2:
        return ""
    links = {k[6] for k in conditions}
    directions = {k[1] for k in conditions}
    parts = ([c.link] if len(links) > 1 else []) + ([c.direction] if len(directions) > 1 else [])
    return "/".join(parts)


def _reference_of(c: Combination, own: list[Summary]) -> Summary | None:
    """The user's row the remedy changed one thing of: same algorithms (any kex: a build's default may differ),
    one stream, no compression, the first pairing of a build sweep."""
    candidates = [
        s
        for s in own
        if (s.combination.cipher, s.combination.mac) == (c.cipher, c.mac)
        and _condition(s.combination) == _condition(c)
        and s.combination.streams == 1
        and s.combination.compression == "none"
    ]
    candidates.sort(key=lambda s: s.combination.kex != c.kex)
    return candidates[0] if candidates else None


def _own_builds(result: RunResult) -> tuple[str, str] | None:
    """The first pairing's (ssh_build, sshd_build) of a build sweep (the first --ssh to the first --sshd: what the user
    has); None without one. Over --link lfn1g with HPN-SSH builds added, the rows' fastest (the HPN-SSH pairing, 113
    MiB/s) was taken for the user's set-up and "-P 4" read 0.42x against it."""
    pairings = ((result.environment or {}).get("builds") or {}).get("pairings") or []
    if not pairings or not isinstance(pairings[0], dict):
        return None
    return (pairings[0].get("ssh_build", ""), pairings[0].get("sshd_build", ""))


def _first_reference(own: list[Summary], result: RunResult) -> Summary | None:
    """The user's own row where no remedy names one: what a connection with no options negotiates, if measured."""
    plain = [s for s in own if s.combination.streams == 1 and s.combination.compression == "none"]
    recorded = ((result.environment or {}).get("client_default_algorithms") or {}).get("negotiated") or {}
    default = [
        s for s in plain if (s.combination.cipher, s.combination.mac) == (recorded.get("cipher"), recorded.get("mac"))
    ]
    return next(iter(default or plain), None)


def _is_pick(s: Summary, pick) -> bool:
    c = s.combination
    return (c.cipher, c.mac, c.kex) == (pick.cipher, pick.mac, pick.kex)


def _name(c: Combination) -> str:
    return c.cipher if c.mac == IMPLICIT_MAC else f"{c.cipher} + {c.mac}"


def _versus(
    s: Summary,
    ref: Summary,
    what: str,
    by_round: dict[Combination, dict[int, float]],
    tie: float,
    condition: str,
) -> Remedy:
    a, b = by_round.get(s.combination), by_round.get(ref.combination)
    if not a or not b:
        return Remedy(s.combination.remedy or "cipher", what, condition, None, None, None, "undecided", None, None)
    estimate, label = paired_verdict(a, b, tie)
    return Remedy(
        s.combination.remedy or "cipher",
        what,
        condition,
        estimate.ratio,
        estimate.low,
        estimate.high,
        label,
        s.median_mib_s,
        ref.median_mib_s,
    )


def _not_tried(result: RunResult, measured: set[str]) -> list[str]:
    """Each remedy the run could not measure, with the reason."""
    settings = result.settings
    out: list[str] = []
    env = result.environment
    families = {b.get("family") for side in ("ssh", "sshd") for b in (env.get("builds") or {}).get(side) or []}
    runs_hpn = "hpn-ssh" in families or any(
        is_hpn(env.get(k) or "") for k in ("client_ssh_version", "server_ssh_version")
    )  # the user's own: nothing to add
    if not measured & {"hpn-both", "hpn-server", "hpn-client"} and not runs_hpn:
        if settings.server != "openssh":
            out.append(f"HPN-SSH: the server is {settings.server}, not an OpenSSH sshd")
        else:
            out.append(
                "HPN-SSH: not installed here (hpnssh/hpnsshd on the PATH, $SSHBENCH_HPN_DIR, or "
                "`sh scripts/build-hpnssh.sh` builds it into ~/.cache/sshbench)"
            )
    if measured & {"hpn-both", "hpn-server"}:
        out.append(
            "HPN-SSH with its window code off (HPNDisabled, how much of its gain is the window): the server's half "
            "needs an hpnsshd of its own"
        )
    if settings.host is not None and "hpn-client" in measured:
        out.append(f"HPN-SSH at {settings.host}'s end: sshbench installs nothing there (its gain at both ends)")
    if "streams" not in measured and settings.axes.stream_counts == (1,):
        out.append("more connections: the tool splits a transfer over several only the other way")
    if "compression" not in measured and settings.axes.compressions == ("none",):
        payloads = set(settings.axes.payloads)
        if payloads <= {"random"}:
            out.append("compression: the payload is random bytes, which zlib cannot shrink (--payload text tries it)")
    return out


def _buffer_lines(result: RunResult) -> list[str]:
    """Emulated links with a delay: whether this machine's TCP buffers let one connection's window cover the
    path (autotuning grows a buffer to tcp_rmem's max at most, and a window is about half of it)."""
    links: dict = (result.baselines or {}).get("links") or {}
    out = []
    for name, d in links.items():
        bdp, most = d.get("bdp_bytes"), d.get("tcp_rmem_max")
        rtt_s = d.get("rtt_s")
        if not (bdp and most and rtt_s):
            continue
        ceiling = most / 2 / MIB / rtt_s
        if most >= 2 * bdp:
            out.append(
                f"TCP buffers ({name}): not what limits; this machine's tcp_rmem max ({most / MIB:.3g} MiB) "
                f"is at least twice the path's BDP ({bdp / MIB:.3g} MiB)"
            )
        else:
            out.append(
                f"TCP buffers ({name}): tcp_rmem max {most / MIB:.3g} MiB holds one connection's window near "
                f"{ceiling:.0f} MiB/s at this RTT; net.ipv4.tcp_rmem/tcp_wmem max at {2 * bdp / MIB:.3g} MiB "
                "(twice the BDP) would lift it (computed, not measured)"
            )
    return out


__all__ = ["Remedy", "RemedyAnswer", "compute"]

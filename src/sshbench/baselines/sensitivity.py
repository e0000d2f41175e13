"""Why, by experiment (`run --why`): each resource's sensitivity and the verdict drawn from them. Pure.

The experiments (sshbench.why) slow one resource at a time by a known fraction `f` (the client's
CPU, the server's CPU, the path's rate) in trials interleaved with unthrottled ones, round by round,
and record each round's pair of rates. Here:

- sensitivity = fractional throughput loss / fractional slow-down = (1 - throttled/unthrottled) / f,
  the ratio and its 95% CI from intervals.paired_ratio_ci over the rounds (a round's common noise
  drops out of each pair). 1: the resource is the limit (a 50% slower one costs 50%); 0: headroom.
- the verdict: a resource whose interval lies wholly at or above HIGH is a limit; one wholly below
  is headroom; one that straddles it is undecided. One limit: that resource. Two or more: a shared
  limit. None, with every resource tried shown to have headroom: ssh itself, and on a path with a
  round trip long enough that the channel window caps one connection (window/RTT near the rate),
  the window.

The block lives in `result.baselines["why"]` (JSON: `baselines.why`, docs/results-json.md; method in
docs/why.md). `verdict_for(why, combination)` is what the conclusion (answer.py) reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from sshbench.model import intervals

SLOWDOWN = 0.5  # each resource is slowed to half: a 50% loss for a resource that is the limit
HIGH = 0.5  # a sensitivity whose whole 95% interval is at or above this is a limit; wholly below: headroom
# ... and one whose interval lies above this but reaches below HIGH limits it partly: a process busy part
# of the time loses only the slack the quota takes (on loopback here the server's CPU read 0.56, 0.35-0.74).
PARTIAL = 0.2
WINDOW_FRACTION = 0.8  # throughput >= 80% of window/RTT: the window caps the connection (as bottleneck.py)

RESOURCES = ("client-cpu", "server-cpu", "link", "disk")
CPUS = "cpus"  # the two CPUs as one, where the run cannot tell them apart (cpus_not_told_apart)
NAMES = {
    "client-cpu": "the client's CPU",
    "server-cpu": "the server's CPU",
    "link": "the link's rate",
    "disk": "the receiver's disk",
    CPUS: "either CPU",
}
TITLES = {CPUS: "the client's CPU and the server's CPU"}  # in a verdict's title, where NAMES reads wrong
HELPS = {
    CPUS: "a cheaper cipher or a faster CPU at both ends would help (both limit it: one alone helps partly)",
    "client-cpu": "a faster client CPU or a cheaper cipher would help",
    "server-cpu": "a faster server CPU or a cheaper cipher would help",
    "link": "a faster network would help; the cipher hardly matters here",
    "disk": "a faster disk at the receiver (or a sink in memory) would help",
}


def sensitivity(
    base_by_round: Mapping[int, float], throttled_by_round: Mapping[int, float], slowdown: float
) -> dict | None:
    """{"sensitivity", "ci95", "loss", "loss_ci95", "n_pairs", "method"} from the rounds' rates (MiB/s);
    None without a valid pair."""
    base = {r: v for r, v in base_by_round.items() if v and v > 0}
    slow = {r: v for r, v in throttled_by_round.items() if v and v > 0}
    if not (base.keys() & slow.keys()):
        return None
    est = intervals.paired_ratio_ci(slow, base)  # throttled / unthrottled, below 1 when the slow-down costs
    if not all(math.isfinite(x) for x in (est.ratio, est.low, est.high)):
        return None
    return {
        "sensitivity": round((1 - est.ratio) / slowdown, 4),
        "ci95": [round((1 - est.high) / slowdown, 4), round((1 - est.low) / slowdown, 4)],
        "loss": round(1 - est.ratio, 4),
        "loss_ci95": [round(1 - est.high, 4), round(1 - est.low, 4)],
        "n_pairs": est.n_pairs,
        "method": est.method,
        "coverage": round(est.coverage, 4),
    }


def cpus_not_told_apart(entries: list[dict], slowdown: float) -> dict | None:
    """Both CPUs as one resource, where the run cannot tell them apart: each round's client and server log ratios
    (throttled / unthrottled, each against its own clock's unthrottled trial) averaged, a paired t over the rounds
    (their shared noise halves); None where either was not measured or their ratios are told apart (the paired
    interval of client ratio / server ratio excludes 1). Why: read one at a time, three consecutive default runs
    here said "undecided", "partial" and "shared" of the same two CPUs, each cost's interval 40-60 points wide."""
    by = {t["resource"]: t for t in entries if t.get("sensitivity") is not None and t.get("rounds")}
    if "client-cpu" not in by or "server-cpu" not in by:
        return None
    ratios = [
        {p["round"]: p["throttled_mib_s"] / p["unthrottled_mib_s"] for p in by[r]["rounds"] if p["unthrottled_mib_s"]}
        for r in ("client-cpu", "server-cpu")
    ]
    rounds = ratios[0].keys() & ratios[1].keys()
    if len(rounds) < intervals.MIN_PAIRS or any(v <= 0 for ratio in ratios for v in ratio.values()):
        return None
    apart = intervals.paired_ratio_ci(ratios[0], ratios[1])
    if apart.low > 1.0 or apart.high < 1.0:
        return None
    both = {r: math.sqrt(ratios[0][r] * ratios[1][r]) for r in rounds}
    entry = sensitivity(dict.fromkeys(rounds, 1.0), both, slowdown)
    return None if entry is None else {"resource": CPUS, "possible": True, **entry}


def _class(entry: dict) -> str:
    """ "high", "partial", "headroom" or "undecided" from an entry's interval."""
    low, high = entry["ci95"]
    if low >= HIGH:
        return "high"
    if low >= PARTIAL:
        return "partial"
    if high < HIGH:
        return "headroom"
    return "undecided"


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def cost_text(entry: dict, slowdown: float) -> str:
    """'slowing the client's CPU by 50% cost 48% (40-55%)'."""
    low, high = entry["loss_ci95"]
    return (
        f"slowing {NAMES[entry['resource']]} by {_pct(slowdown)} cost {_pct(entry['loss'])} "
        f"({low * 100:.0f} to {high * 100:.0f}%)"
    )


def costs_text(entries: list[dict], slowdown: float) -> str:
    """Several throttles in one clause: 'slowing the server's CPU by 50% cost 59% (52 to 64%), the
    client's CPU 45% (33 to 56%)' (one line of the conclusion at 100 columns)."""
    first, *rest = entries
    more = [
        f"{NAMES[t['resource']]} {_pct(t['loss'])} ({t['loss_ci95'][0] * 100:.0f} to {t['loss_ci95'][1] * 100:.0f}%)"
        for t in rest
    ]
    return ", ".join([cost_text(first, slowdown), *more])


def decide(
    throttles: list[dict], slowdown: float, mib_s: float | None = None, window_mib_s: float | None = None
) -> dict:
    """The verdict from one combination's throttle entries (each {"resource", "possible", ...,
    "sensitivity", "ci95"}): {"kind", "limited_by", "line", "help", "headroom", "undecided"}.
    `window_mib_s`: channel window / RTT on a path with a delay (None: no delay known)."""
    measured = [t for t in throttles if t.get("possible") and t.get("sensitivity") is not None]
    for t in measured:
        t["class"] = _class(t)
    cpus = cpus_not_told_apart(measured, slowdown)
    if cpus is not None and _class(cpus) == "high":
        # One resource in the client CPU's place where, as one, they are decided a limit: otherwise each reads on
        # its own (simulated, tests/test_why.py: as one they said "partly" where one by one they said "together").
        cpus["class"] = "high"
        measured = [cpus if t["resource"] == "client-cpu" else t for t in measured if t["resource"] != "server-cpu"]
    else:
        cpus = None
    high = sorted((t for t in measured if t["class"] == "high"), key=lambda t: -t["sensitivity"])
    # Beside a limit, an undecided resource that measured as much (its point at or above HIGH, its interval
    # wide) shares it: read alone, the verdict said "the server's CPU" in 2 of 5 default runs here and "the
    # server's CPU and the client's CPU together" in 3, where ssh and sshd each on a CPU of its own read
    # 0.82-1.09 in every run (the two that named one side: the other's 0.93 (0.23-1.35) and 0.82 (0.29-1.19)).
    # So does a partial one (its interval above PARTIAL, reaching below HIGH) whose point is at HIGH or above: in
    # simulated loopback experiments (client 44%, server 52%, 3-6 rounds) it said "the server's CPU" alone 3-5% of
    # the time (tests/test_why.py).
    uncertain = [t for t in measured if high and t["class"] in ("undecided", "partial") and t["sensitivity"] >= HIGH]
    if uncertain or len(high) > 1:  # a shared limit, named in the throttles' order: the same words every run
        high = [t for t in measured if t in high or t in uncertain]
    partial = sorted(
        (t for t in measured if t["class"] == "partial" and t not in uncertain), key=lambda t: -t["sensitivity"]
    )
    headroom = [t["resource"] for t in measured if t["class"] == "headroom"]
    undecided = [t["resource"] for t in measured if t["class"] == "undecided" and t not in uncertain]
    single = len(headroom) == 1 and headroom != [CPUS]
    room = f"; {_and([_title(r) for r in headroom])} {'has' if single else 'have'} headroom" if headroom else ""
    out: dict = {
        "limited_by": _expand([t["resource"] for t in high]),
        "uncertain": _expand([t["resource"] for t in uncertain]),
        "partly": _expand([t["resource"] for t in partial]),
        "headroom": _expand(headroom),
        "undecided": _expand(undecided),
    }
    if cpus is not None:
        out["cpus"] = cpus
    if not measured:
        out.update(kind="not-measured", title="not measured", line="no throttle could be measured", help=None)
    elif len(high) == 1 and high[0]["resource"] == CPUS:
        out.update(
            kind="shared",
            title=f"{TITLES[CPUS]} together",
            line=f"{cost_text(high[0], slowdown)}, the client's and the server's not told apart{room}",
            help=HELPS[CPUS],
        )
    elif len(high) == 1:
        t = high[0]
        out.update(
            kind=t["resource"],
            title=NAMES[t["resource"]],
            line=cost_text(t, slowdown) + room,
            help=HELPS[t["resource"]],
        )
    elif high:
        names = _and([_title(t["resource"]) for t in high])
        out.update(
            kind="shared",
            title=f"{names} together",
            line=costs_text(high, slowdown) + room,  # an uncertain share shows in its interval
            help=f"{names} limit it together: a faster one alone helps partly",
        )
    elif window_mib_s and mib_s and mib_s >= WINDOW_FRACTION * window_mib_s:
        # At the window / RTT no resource is the limit, even where a throttle cost something: a CPU quota
        # delays each round trip's burst (on lfn1g, halving the server's quota where sshd used ~2% of a core
        # cost 10-13% in every round, with the period at 10 ms or 2 ms alike), which a window-bound
        # connection feels as a longer RTT. Such costs are said, not made the verdict.
        delays = f"; {costs_text(partial, slowdown)}: its time adds to each round trip" if partial else ""
        out.update(
            kind="window",
            title="the SSH channel window over this round-trip time",
            line=(
                f"neither CPU nor the link's rate: {mib_s:.1f} MiB/s is {_pct(mib_s / window_mib_s)} of "
                f"the channel window / RTT ({window_mib_s:.1f} MiB/s){delays}{room}"
            ),
            help="a larger channel window (HPN-SSH) or several connections (-P N) would help; the cipher does not",
        )
        out["window_mib_s"] = round(window_mib_s, 3)
    elif partial:
        names = _and([_title(t["resource"]) for t in partial])
        out.update(
            kind="partial",
            title=f"partly {names}",
            line=costs_text(partial, slowdown)
            + (f"; {_and([_title(r) for r in undecided])} undecided" if undecided else "")
            + room,
            help=f"{HELPS[partial[0]['resource']]}, in part; the rest goes to ssh itself",
        )
    elif undecided:
        t = max((t for t in measured if t["class"] == "undecided"), key=lambda t: t["sensitivity"])
        out.update(
            kind="undecided",
            title="not decided",
            line=f"undecided: {cost_text(t, slowdown)}, too noisy to tell a limit from headroom{room}",
            help="more rounds (--why-rounds) or a quieter machine would tell",
        )
    else:
        out.update(
            kind="ssh-itself",
            title="ssh itself (no resource slowed here was the limit)",
            line=f"no resource slowed here was the limit{room}",
            help="the time goes to ssh itself (buffering, flow control, copies); a cheaper cipher may still help",
        )
    return out


def _title(resource: str) -> str:
    return TITLES.get(resource, NAMES[resource])


def _expand(resources: list[str]) -> list[str]:
    """The JSON's resource lists name the two CPUs where the verdict took them as one."""
    return [r for resource in resources for r in (("client-cpu", "server-cpu") if resource == CPUS else (resource,))]


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def verdict_for(why: object, combination: Mapping[str, object]) -> dict | None:
    """The experiment's verdict for a combination (its JSON fields: cipher, mac, kex, ...), or None."""
    if not isinstance(why, dict):
        return None
    for entry in why.get("combinations") or []:
        combo = entry.get("combination") or {}
        if all(combo.get(k) == combination.get(k) for k in combo) and isinstance(entry.get("verdict"), dict):
            return entry["verdict"]
    return None


def summary_lines(why: object, compact: bool = False) -> list[str]:
    """One line per combination experimented on, for the report's baselines table (`compact`, the default
    report: a throttle that was not possible is named without its reason, which --wide and the JSON give)."""
    if not isinstance(why, dict):
        return []
    out = []
    if why.get("skipped"):
        out.append(f"not run: {why['skipped']}")
    for entry in why.get("combinations") or []:
        parts = []
        for t in entry.get("throttles") or []:
            name = t["resource"]
            if not t.get("possible"):
                parts.append(f"{name}: not throttled" + ("" if compact else f" ({t.get('reason')})"))
            elif t.get("sensitivity") is None:
                parts.append(f"{name}: no valid pair")
            else:
                low, high = t["ci95"]
                parts.append(f"{name} {t['sensitivity']:.2f} ({low:.2f} to {high:.2f})")
        verdict = entry.get("verdict") or {}
        if isinstance(cpus := verdict.get("cpus"), dict) and cpus.get("ci95"):  # the two CPUs as one (decide)
            parts.append(f"both CPUs {cpus['sensitivity']:.2f} ({cpus['ci95'][0]:.2f} to {cpus['ci95'][1]:.2f})")
        out.append(f"{entry.get('label', '?')}: {'; '.join(parts)} -> {verdict.get('kind', '?')}")
    return out

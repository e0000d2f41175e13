"""The policy machinery of `sshbench recommend` and of the run's conclusion: from a measured run, the
Ciphers/MACs/KexAlgorithms a policy allows, fastest first, with why the others were left out, as a Recommendation
(the policies and the lines it writes: recommendation.py). Pure (no I/O): the check by a real connection is
recommend/config.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from sshbench.algorithms import strip_kex_pseudo
from sshbench.compression import NO_COMPRESSION
from sshbench.errors import RunError, UsageError
from sshbench.model import factor_ranking, summary
from sshbench.model.statistics import compare_pair
from sshbench.model.summary import Summary
from sshbench.results import IMPLICIT_MAC, RunResult
from sshbench.security import terrapin
from sshbench.security.config_lines import openssh_version
from sshbench.security.recommendation import FOR_CHOICES, POLICIES, POLICY_ORDER, Choice, LeftOut, Recommendation
from sshbench.security.verdicts import Level, Verdict, algorithm_verdict

# Where the runner records the client's default lists and version (sshbench.measure.plan.default_algorithms).
DEFAULTS_KEY = "client_default_algorithms"


class NothingAllowed(RunError):
    """Every measured algorithm of some kind fails the policy."""


def _best_by(summaries: list[Summary], key) -> dict[str, Summary]:
    """Each name's best row: the first in the ranking's order (summaries come ranked, paired by round),
    so that the lines put first what the conclusion's headline and the table put first; two rows whose
    medians differ by less than their noise keep the ranking's order, not the medians'."""
    best: dict[str, Summary] = {}
    for s in summaries:
        best.setdefault(key(s), s)
    return best


def group_order(
    rows: list[Summary],
    kind: str,
    defaults: dict[str, list[str]] | None,
    levels: dict[str, int] | None = None,
    after_first: frozenset[str] = frozenset(),
) -> Callable[[str, Summary], tuple]:
    """The sort key of the config lines: groups in the ranking's decided order (summary.Summary.group: the
    neighbours a run could not order, or tied, share one), and inside a group your ssh's own default order
    (names it does not offer by default after them, by name), so that two runs that cannot tell aes128-gcm
    from aes256-gcm paste the same line, the order ssh would pick anyway. Runs stored before the defaults were
    recorded: the ranking's order inside a group. `levels`: each name's group by factor (a cipher x MAC run,
    model/factor_ranking.py: a cipher from all its MACs' rows) in place of its best row's group. `after_first`: names
    of the first group placed right after it (only_not_told_apart: your ssh's own choice the run did not show fast)."""
    position = {id(s): i for i, s in enumerate(rows)}
    preference = (defaults or {}).get(kind)

    def key(name: str, s: Summary) -> tuple:
        group: float = s.group if s.group is not None else len(rows)
        if levels is not None:
            group = levels[name] if name in levels else len(levels) + group
        if name in after_first and group == 0:
            group = 0.5  # behind the first group, ahead of the second: where its median puts it
        pair = summary.implementation_order(s.combination)
        if preference is None:
            return (pair, group, position[id(s)], name)
        known = name in preference
        return (pair, group, not known, preference.index(name) if known else 0, name)

    return key


def only_not_told_apart(
    result: RunResult, best: dict[str, Summary], kind: str, defaults: dict[str, list[str]] | None
) -> frozenset[str]:
    """Absence of evidence never changes a recommendation. Your ssh's own first choice of `kind` (chacha20-poly1305
    for ciphers), where its best row is in the first group only because the run could not tell it apart from the
    first row (not ranked first, not decided tied with it, its median beyond the tie margin): a noisy minute put it
    there at 1.64x (0.97-2.77), and the Ciphers line, which every other run wrote, was dropped as "no change needed".
    Such a name is placed after the first group, where its median puts it; the answer marks the line not decided."""
    names = (defaults or {}).get(kind) or []
    s = best.get(names[0]) if names else None
    if s is None or s.group != 0 or s.rank == 1 or s.relative_to_fastest is None:
        return frozenset()
    margin, ci = summary.tie_margin(result), s.relative_to_fastest_ci95
    tied = ci is not None and 1 / (1 + margin) <= ci[0] and ci[1] <= 1 + margin
    return frozenset() if tied or s.relative_to_fastest <= 1 + margin else frozenset({names[0]})


def _ahead_of_default(
    result: RunResult,
    s: Summary,
    best: dict[str, Summary],
    kind: str,
    defaults: dict[str, list[str]] | None,
    in_first_group: bool,
) -> bool:
    """Whether a prefix line moves this name ahead of your ssh's own first choice: its row decided faster than the
    default's (paired by round; summary.pair_estimate), the rest left in your ssh's order. The order among rows the
    run did not decide against your default only picks among fallbacks, and it moved with undecided neighbours: two
    --full runs that named the same factor groups wrote `^aes128-gcm,aes256-gcm` and
    `^aes128-gcm,aes256-gcm,aes128-ctr,aes192-ctr,aes256-ctr`. Without a measured default: the first group."""
    names = (defaults or {}).get(kind) or []
    own = best.get(names[0]) if names else None
    if own is None:
        return in_first_group
    if own is s:
        return False
    estimate = summary.pair_estimate(result, s.combination, own.combination)
    margin = summary.tie_margin(result)
    return estimate is not None and estimate.ratio > 1 and compare_pair(estimate, margin) == "ordered"


def _fastest_when_none_ahead(chosen: list[Choice], best: dict[str, Summary], ranked: list[Summary]) -> None:
    """No row decided faster than your default: the line puts the fastest row's name first, as its median does (and the
    answer marks it not decided), never the first of the group in your ssh's order: a 0.1-core server's run put
    aes128-ctr there, 0.88x (0.47-1.66) your default's speed."""
    if not chosen or any(c.first_group for c in chosen):
        return
    position = {id(s): i for i, s in enumerate(ranked)}
    top = min(chosen, key=lambda c: position.get(id(best.get(c.name)), len(ranked)))
    top.first_group = True


def _rate(s: Summary | None) -> str:
    return f"{s.median_mib_s:.0f} MiB/s" if s is not None and s.median_mib_s is not None else "-"


def build(
    result: RunResult,
    policy: str,
    target: str = "client",
    host_pattern: str | None = None,
    run_label: str = "the run",
    full_list: bool = False,
) -> Recommendation:
    """Pick and order the algorithms; raises NothingAllowed (naming the closest policy that would give a
    set) when every measured algorithm of a kind fails `policy`. Full replacement lists for `--for server`,
    for the Host that was measured (a remote run with its own name as the pattern), or with `full_list`;
    otherwise prefix lines that keep the client's other defaults (security/config_lines.py)."""
    if policy not in POLICIES:
        raise UsageError(f"unknown policy {policy!r}; choose one of: {', '.join(POLICY_ORDER)}")
    if target not in FOR_CHOICES:
        raise UsageError(f"--for must be client or server (got {target!r})")
    measured = [  # the user's rows: a remedy row (-P 4, HPN-SSH, zlib; measure.remedies) is no algorithm choice
        s
        for s in summary.summaries(result)
        if s.valid_trials > 0 and s.median_mib_s is not None and not s.combination.remedy
    ]
    if not measured:
        raise RunError(f"{run_label} has no valid trials; nothing to recommend from (run `sshbench run` again)")
    # An unpinned row (a tool choosing its own algorithms) has no algorithm to put on a line.
    valid = [s for s in measured if not s.combination.unpinned]
    if not valid:
        raise RunError(
            f"{run_label} measured only tools that chose their own algorithms (unpinned); nothing to recommend from"
        )
    # The lines are for one client/server pair, the first (summaries put OpenSSH's own first), as the answer is:
    # `--server openssh,dropbear` put "KexAlgorithms ^curve25519-sha256" on OpenSSH's lines from Dropbear's
    # set-up (its rows negotiate curve25519: Dropbear 2022 has no sntrup), where a run against OpenSSH alone
    # writes no kex line; and a cipher's figure could be another server's.
    pair = summary.implementation_pair(valid[0].combination)
    valid = [s for s in valid if summary.implementation_pair(s.combination) == pair]
    # A build sweep: the lines are for the first pairing (first --ssh -> first --sshd: what you have), which the
    # check connects with. From every pairing's rows, HPN-SSH's fastest kex (mlkem768x25519-sha256) put
    # "KexAlgorithms ^mlkem768x25519-sha256" on OpenSSH 9.2's lines: "bad configuration options", not checked.
    first = ((result.environment or {}).get("builds") or {}).get("pairings") or []
    if first and isinstance(first[0], dict):
        own = (first[0].get("ssh_build", ""), first[0].get("sshd_build", ""))
        valid = [s for s in valid if (s.combination.ssh_build, s.combination.sshd_build) == own] or valid
    try:
        rec = _build(result, valid, policy, target, host_pattern, run_label)
    except NothingAllowed as err:
        raise NothingAllowed(f"{err}; {_closest(result, valid, policy, target, host_pattern, run_label)}") from None
    measured_host = result.settings.host is not None and rec.host_pattern == result.settings.host
    rec.full_list = full_list or target == "server" or measured_host
    rec.client_defaults = client_defaults(result.environment)
    rec.client_version = openssh_version(result.environment.get("client_ssh_version"))
    return rec


def client_defaults(environment: dict) -> dict[str, list[str]] | None:
    """The client's default lists the run recorded (None for runs stored before they were)."""
    found = environment.get(DEFAULTS_KEY)
    if not isinstance(found, dict) or not isinstance(found.get("lists"), dict):
        return None
    lists = found["lists"]
    return {k: [str(n) for n in v] for k, v in lists.items() if isinstance(v, list)} or None


def _closest(
    result: RunResult, valid: list[Summary], policy: str, target: str, host_pattern: str | None, run_label: str
) -> str:
    for looser in POLICY_ORDER[POLICY_ORDER.index(policy) + 1 :]:
        try:
            rec = _build(result, valid, looser, target, host_pattern, run_label)
        except NothingAllowed:
            continue
        lines = "; ".join(f"{k} {v}" for k, v in rec.settings().items() if k != "Compression")
        return f"closest acceptable set (--policy {looser}): {lines}"
    return "no policy allows any measured set: measure safer algorithms (e.g. --ciphers 'aes*-gcm*')"


def _build(
    result: RunResult, valid: list[Summary], policy: str, target: str, host_pattern: str | None, run_label: str
) -> Recommendation:
    strict = terrapin.from_environment(result.environment)
    minimum = POLICIES[policy]
    measured_all = valid
    # Speeds for the Ciphers/MACs/Kex lines come from uncompressed transfers where the run has them:
    # compression is advised separately, from the crossover (_compression).
    valid = [s for s in valid if s.combination.compression == NO_COMPRESSION] or valid
    default_pattern = result.settings.host or "*"
    rec = Recommendation(
        policy=policy, target=target, host_pattern=host_pattern or default_pattern, run_label=run_label, strict=strict
    )

    def allowed(kind: str, verdict: Verdict) -> bool:
        return verdict.level >= minimum[kind]

    def leave_out(kind: str, name: str, verdict: Verdict, measured: str, why: str) -> None:
        rec.left_out.append(LeftOut(kind, name, verdict.label, measured, why))

    # MACs first: a non-AEAD cipher is usable only with an allowed MAC. A MAC's figure comes from the
    # combinations whose cipher the policy allows where there are any (a MAC timed with 3des-cbc says little).
    with_mac = [s for s in valid if s.combination.mac != IMPLICIT_MAC]
    with_allowed_cipher = [
        s for s in with_mac if allowed("cipher", algorithm_verdict("cipher", s.combination.cipher, strict.negotiated))
    ]
    mac_best = _best_by(with_allowed_cipher, lambda s: s.combination.mac)
    mac_best.update({k: v for k, v in _best_by(with_mac, lambda s: s.combination.mac).items() if k not in mac_best})
    defaults = client_defaults(result.environment)
    factors = factor_ranking.factor_answer(result)
    mac_late = only_not_told_apart(result, mac_best, "mac", defaults)
    mac_key = group_order(valid, "mac", defaults, factors.macs.rank if factors else None, mac_late)
    for name, s in sorted(mac_best.items(), key=lambda kv: mac_key(*kv)):
        verdict = algorithm_verdict("mac", name)
        if allowed("mac", verdict):
            ahead = _ahead_of_default(result, s, mac_best, "mac", defaults, mac_key(name, s)[1] == 0)
            rec.macs.append(Choice("mac", name, verdict, s.median_mib_s, s.combination.cipher, first_group=ahead))
        else:
            leave_out(
                "mac",
                name,
                verdict,
                _rate(s),
                f"{verdict.reason}; policy {policy} needs {minimum['mac'].label} or better",
            )
    allowed_macs = {m.name for m in rec.macs}
    etm_allowed = any(m.endswith(terrapin.ETM_SUFFIX) for m in allowed_macs)

    # A cipher's figure, likewise, from its combinations with a MAC the lines allow: `--full` put aes128-ctr first
    # on the line for its row with hmac-sha1-96-etm (weak: left off the MACs line), and the pair the lines then
    # negotiated (aes128-ctr + hmac-sha2-256-etm) sat 16th, 1.6x as long as the fastest row.
    usable = [s for s in valid if s.combination.mac == IMPLICIT_MAC or s.combination.mac in allowed_macs]
    cipher_best = _best_by(usable, lambda s: s.combination.cipher)
    cipher_best.update(
        {k: v for k, v in _best_by(valid, lambda s: s.combination.cipher).items() if k not in cipher_best}
    )
    aead = {s.combination.cipher for s in valid if s.combination.mac == IMPLICIT_MAC}
    cipher_late = only_not_told_apart(result, cipher_best, "cipher", defaults)
    cipher_key = group_order(valid, "cipher", defaults, factors.ciphers.rank if factors else None, cipher_late)
    for name, s in sorted(cipher_best.items(), key=lambda kv: cipher_key(*kv)):  # groups, then ssh's order
        verdict = algorithm_verdict("cipher", name, strict.negotiated)
        cipher_mac = "" if s.combination.mac == IMPLICIT_MAC else s.combination.mac
        if not allowed("cipher", verdict):
            leave_out(
                "cipher",
                name,
                verdict,
                _rate(s),
                f"{verdict.reason}; policy {policy} needs {minimum['cipher'].label} or better",
            )
        elif name not in aead and not allowed_macs:
            leave_out("cipher", name, verdict, _rate(s), f"not AEAD and no measured MAC meets policy {policy}")
        elif name.endswith("-cbc") and etm_allowed and not strict.negotiated:
            leave_out(
                "cipher",
                name,
                verdict,
                _rate(s),
                "CBC with the -etm MACs on the MACs line is Terrapin-affected (CVE-2023-48795) without strict kex",
            )
        else:
            ahead = _ahead_of_default(result, s, cipher_best, "cipher", defaults, cipher_key(name, s)[1] == 0)
            rec.ciphers.append(Choice("cipher", name, verdict, s.median_mib_s, cipher_mac, first_group=ahead))
    _fastest_when_none_ahead(rec.ciphers, cipher_best, valid)
    _fastest_when_none_ahead(rec.macs, mac_best, valid)
    if not rec.ciphers:
        raise NothingAllowed(
            f"none of the measured ciphers meets policy {policy} "
            f"({', '.join(f'{x.name} {x.verdict}' for x in rec.left_out if x.kind == 'cipher')})"
        )
    if all(c.name in aead for c in rec.ciphers):
        # No cipher on the line uses a MAC: the MACs line would be dead text (the dropped MACs stay explained).
        for m in rec.macs:
            leave_out(
                "mac",
                m.name,
                m.verdict,
                f"{m.median_mib_s:.0f} MiB/s" if m.median_mib_s else "-",
                "not needed: every recommended cipher is AEAD",
            )
        rec.macs = []

    pair = summary.implementation_pair(valid[0].combination)  # build() kept one pair's rows
    handshake_ms = {
        h.kex: h.median_ms
        for h in summary.handshakes(result)
        if h.median_ms is not None and (h.client, h.server) == pair
    }
    kex_names = strip_kex_pseudo(list(dict.fromkeys(s.combination.kex for s in valid)))
    for name in sorted(kex_names, key=lambda k: (handshake_ms.get(k) is None, handshake_ms.get(k) or 0.0)):
        verdict = algorithm_verdict("kex", name)
        measured = f"{handshake_ms[name]:.0f} ms" if name in handshake_ms else "-"
        if allowed("kex", verdict):
            rec.kex.append(Choice("kex", name, verdict, handshake_ms=handshake_ms.get(name)))
        else:
            leave_out(
                "kex",
                name,
                verdict,
                measured,
                f"{verdict.reason}; policy {policy} needs {minimum['kex'].label} or better",
            )
    if not rec.kex:
        raise NothingAllowed(
            f"none of the measured key exchanges meets policy {policy} "
            f"({', '.join(f'{x.name} {x.verdict}' for x in rec.left_out if x.kind == 'kex')})"
        )

    for choice in rec.chosen():
        if choice.verdict.level == Level.WEAK:
            rec.warnings.append(
                f"{choice.name} is weak ({choice.verdict.reason}): use it only on a network you trust end to end"
            )
    _compression(rec, measured_all, policy)
    return rec


def _compression(rec: Recommendation, valid: list[Summary], policy: str) -> None:
    """Compression advice from the measured crossover where the run measured both settings."""
    compressed = [s for s in valid if s.combination.compression != NO_COMPRESSION]
    if not compressed:
        rec.compression = "no"
        rec.compression_note = (
            "not measured in this run; off: zlib@openssh.com is weak (length leaks) and costs CPU on fast links"
        )
        return

    def same_but_compression(s: Summary) -> tuple:
        c = s.combination
        return c.cipher, c.mac, c.kex, c.tool, c.direction

    plain = {same_but_compression(s): s for s in valid if s.combination.compression == NO_COMPRESSION}
    pairs = [(s, plain[key]) for s in compressed if (key := same_but_compression(s)) in plain]
    faster = [(c, p) for c, p in pairs if (c.median_mib_s or 0) > (p.median_mib_s or 0)]
    figures = ", ".join(f"{c.combination.cipher}: {_rate(c)} compressed vs {_rate(p)}" for c, p in pairs[:3])
    verdict = algorithm_verdict("compression", "zlib@openssh.com")
    if faster and POLICIES[policy]["cipher"] <= verdict.level:
        rec.compression = "yes"
        rec.compression_note = f"compression was faster here ({figures})"
        rec.warnings.append(f"Compression yes is weak ({verdict.reason})")
    else:
        rec.compression = "no"
        why = "it was not faster here" if not faster else f"policy {policy} does not allow it ({verdict.reason})"
        rec.compression_note = f"off: {why}" + (f" ({figures})" if figures else "")

"""What the report says about rows from implementations other than OpenSSH."""

from __future__ import annotations

from sshbench.model.rate_clock import EARLIER_CLOCK, run_clock
from sshbench.model.summary import summaries
from sshbench.results import STEADY_STATE
from sshbench.units import format_size

ASYNCSSH_NOTE = (
    "AsyncSSH is Python: the absolute rates of asyncssh/* rows are not comparable with OpenSSH's "
    "(or Dropbear's), while its relative ordering of ciphers is informative"
)


def implementation_notes(result) -> list[str]:
    """Lines for the report when a run had rows from more than OpenSSH (a RunResult; never raises)."""
    try:
        pairs = list(dict.fromkeys((c.client, c.server) for c in result.combinations))
        if not any(p != ("openssh", "openssh") for p in pairs):
            return []
        notes = [
            "each client/server pair is ranked on its own (# and 'x fastest' restart per pair): "
            + ", ".join(f"{c}/{s}" for c, s in pairs)
        ]
        target = result.target or {}
        servers = target.get("servers") or {target.get("kind"): target}
        for info in servers.values():
            if isinstance(info, dict) and info.get("kind") == "private-dropbear":
                window = info.get("receive_window")
                how = (
                    "set with --dropbear-window"
                    if info.get("receive_window_set")
                    else "Dropbear's default; set it with --dropbear-window, up to 10M"
                )
                notes.append(
                    f"openssh/dropbear ran with Dropbear's receive window -W {window} ({how}): a small "
                    "window caps uploads on fast links"
                )
        return notes
    except Exception:
        return []


def clock_notes(result) -> list[str]:
    """Lines for the report where rates are not on the steady-state clock (docs/clock.md); never raises."""
    try:
        if run_clock(result.trials) == EARLIER_CLOCK:
            return [
                "measured by the earlier clock (an sshbench before the steady-state clock): each rate includes "
                "the connection's start-up, so it reads lower than a steady-state run's; compare says the clocks differ"
            ]
        rows = [s for s in summaries(result) if s.median_mib_s is not None and s.data_clock != STEADY_STATE]
        if rows and result.settings.server_cpu is not None:
            return [
                "--server-cpu: rates timed by the server's reader, start-up included (under a CPU quota sshd takes "
                "data in bursts that the connection's counters cannot time; docs/clock.md)"
            ]
        notes = rekey_notes(result)
        if rows:
            notes.insert(
                0,
                f"{len(rows)} combination(s) had no trial long enough for a steady part: their rates include the "
                "start-up (earlier clock, 'earlier clock' in --wide); use a bigger --size or the adaptive size",
            )
        return notes
    except Exception:
        return []


def rekey_notes(result) -> list[str]:
    """One line per cipher whose rates count rekeys (sshbench.measure.rekey): how often, what one cost, the share."""
    by_cipher: dict[tuple[str, str], list] = {}
    for s in summaries(result):  # steady rows: an earlier clock's rate has the start-up in it, and its share reads low
        steady = s.data_clock == STEADY_STATE
        if steady and s.rekey_every_bytes and s.rekey_stall_s is not None and s.rekey_share is not None:
            by_cipher.setdefault((s.combination.cipher, s.combination.kex), []).append(s)
    several_kex = len({kex for _, kex in by_cipher}) > 1
    lines = []
    for (cipher, kex), rows in by_cipher.items():
        shares = sorted(s.rekey_share for s in rows)
        share = (
            f"-{shares[0]:.1%}"
            if len(shares) == 1 or shares[0] == shares[-1]
            else f"-{shares[0]:.1%} to -{shares[-1]:.1%}"
        )
        stall = max(s.rekey_stall_s for s in rows)
        name = cipher.removesuffix("@openssh.com")  # as the table names it (its legend says so)
        with_kex = f" with {kex}" if several_kex else ""  # one kex: the set-up line names it
        lines.append(
            f"{name} rekeys every {format_size(rows[0].rekey_every_bytes)}, {stall * 1000:.0f} ms each{with_kex}: "
            f"counted in its MiB/s ({share})"
        )
    return lines

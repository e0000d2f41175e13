"""How one figure of a report row reads, in every format (terminal, --wide, Markdown, HTML): pure functions
of a summary's values, so that `1.69 (1.62-1.75)` is written once and reads the same everywhere."""

from __future__ import annotations

from sshbench.model.summary import WIDE_SPREAD_CV, Summary
from sshbench.results import IMPLICIT_MAC, OPENSSH_SUFFIX, STEADY_STATE
from sshbench.units import format_factor as factor
from sshbench.units import format_rate

# Below this share of trials a median's interval is the min-max range: marked `~` (docs/statistics.md).
CONFIDENCE = 0.95
AEAD_MAC = "(AEAD)"  # the compact MAC cell of an AEAD cipher: its integrity is built in
IMPLICIT_MAC_CELL = "(implicit)"


def number(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def short(name: str) -> str:
    """An OpenSSH algorithm without its `@openssh.com` (the compact table says so once)."""
    return name.removesuffix(OPENSSH_SUFFIX)


def mac(name: str, compact: bool = False) -> str:
    if name == IMPLICIT_MAC:
        return AEAD_MAC if compact else IMPLICIT_MAC_CELL
    return short(name) if compact else name


def build(label: str) -> str:
    """`OpenSSH_10.0p2` -> `10.0p2` (HPN-SSH and others keep their whole label)."""
    return label.removeprefix("OpenSSH_") or "-"


def rate(s: Summary, compact: bool = False) -> str:
    """`median ±half-width` of its 95% CI (`~`: an interval below 95%, fewer than 6 trials). `compact`: the
    median in whole MiB/s from 100 on."""
    if s.median_mib_s is None:
        return "-"
    median = format_rate(s.median_mib_s) if compact else f"{s.median_mib_s:.1f}"
    if not s.ci95_mib_s or s.valid_trials < 2:
        return median
    low, high = s.ci95_mib_s
    half = (high - low) / 2
    mark = "~" if (s.ci_coverage or 0.0) < CONFIDENCE else ""
    return f"{median} ±{half:.0f}{mark}" if half >= 10 else f"{median} ±{half:.1f}{mark}"


def ratio(s: Summary, form: str = "full") -> str:
    """`x fastest` with its paired CI: `1.69 (1.62-1.75)` (full), `1.69 ±4%` (compact: the wider side of the
    interval, in % of the ratio) or `1.69` (bare); the fastest row just `1.00`."""
    r = s.relative_to_fastest
    if r is None:
        return "-"
    ci = s.relative_to_fastest_ci95
    if form == "bare" or not ci or ci == [1.0, 1.0]:
        return factor(r)
    if form == "full":
        return f"{factor(r)} ({factor(ci[0])}-{factor(ci[1])})"
    spread = max(ci[1] / r - 1, 1 - ci[0] / r)
    return f"{factor(r)} ±{spread:.0%}"


def startup(s: Summary) -> str:
    """The median start-up cost in ms; `earlier clock` where the rate itself includes the start-up."""
    if s.median_startup_s is not None:
        return f"{s.median_startup_s * 1000:.0f}"
    return "-" if s.data_clock in (None, STEADY_STATE) else "earlier clock"


def cv(s: Summary, mark: bool = False) -> str:
    """The coefficient of variation in %; `mark`: ` !` above WIDE_SPREAD_CV (the warning says why)."""
    if s.cv is None:
        return "-"
    return f"{s.cv * 100:.0f}%" + (" !" if mark and s.cv > WIDE_SPREAD_CV else "")


def cpu_total(s: Summary) -> str:
    """ssh + sshd CPU s/GiB."""
    if s.client_cpu_s_per_gib is None or s.server_cpu_s_per_gib is None:
        return "-"
    return f"{s.client_cpu_s_per_gib + s.server_cpu_s_per_gib:.2f}"


def valid(s: Summary) -> str:
    return f"{s.valid_trials}/{s.valid_trials + s.invalid_trials}"

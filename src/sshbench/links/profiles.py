"""Emulated link profiles (`--link`): the path between client and server.

`loopback` is the plain private sshd on 127.0.0.1 (inside a run that also sweeps emulated links it
is the same namespace pair with its veth left unshaped; see docs/architecture.md "Links"). Every
other profile is a rate, a one-way delay, jitter and loss applied with tc between two network
namespaces (sshbench.links); each documents where its numbers come from.

`--link` syntax: a comma list of profile names and custom profiles. A custom profile is a group of
`key=value` tokens (keys rate, delay, jitter, loss): consecutive `key=value` tokens form one profile;
a new profile starts after `+` or `;`, or when a key repeats. So
`--link lan1g,rate=200mbit,delay=20ms,loss=0.1%,jitter=2ms` is two profiles and
`--link rate=50mbit,delay=40ms+rate=10mbit` is two custom ones. A custom profile's stable name is
its canonical short form, e.g. `200mbit/20ms/j2ms/loss0.1%`, which parses back to the same profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sshbench.errors import UsageError


@dataclass(frozen=True)
class LinkProfile:
    name: str
    rate_bit_s: int | None = None  # None: unshaped
    delay_ms: float = 0.0  # one-way (the RTT it adds is twice this)
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    source: str = ""  # where the numbers come from

    @property
    def emulated(self) -> bool:
        """Needs the namespace pair (anything but plain loopback)."""
        return self.name != LOOPBACK.name

    @property
    def rate_mbit_s(self) -> float | None:
        return None if self.rate_bit_s is None else self.rate_bit_s / 1e6

    @property
    def rtt_ms(self) -> float:
        """The round-trip time the profile adds (delay on each direction)."""
        return 2 * self.delay_ms

    def bdp_bytes(self) -> int | None:
        """Bandwidth-delay product: what must be in flight to fill the link (None: unshaped or no delay)."""
        if self.rate_bit_s is None or self.delay_ms <= 0:
            return None
        return int(self.rate_bit_s / 8 * self.rtt_ms / 1000)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "rate_bit_s": self.rate_bit_s,
            "delay_ms": self.delay_ms,
            "jitter_ms": self.jitter_ms,
            "loss_pct": self.loss_pct,
            "rtt_ms": self.rtt_ms,
            "bdp_bytes": self.bdp_bytes(),
            "source": self.source,
        }


LOOPBACK = LinkProfile("loopback", source="127.0.0.1 on this machine: no network, no shaping")

# Rates are line rates (what tc shapes); LAN delays are left at 0: a switched LAN's 0.1-0.3 ms RTT
# is far below anything that limits one SSH channel (its bandwidth-delay product is a few KiB).
_PROFILES = (
    LOOPBACK,
    LinkProfile(
        "lan10g",
        rate_bit_s=10_000_000_000,
        source="10 Gbit/s Ethernet (10GBASE-T/SFP+) on one switch; LAN RTT not emulated",
    ),
    LinkProfile(
        "lan1g",
        rate_bit_s=1_000_000_000,
        source="seed 000's 1 Gbit/s LAN (it measured 109.5 MiB/s uncompressed); LAN RTT not emulated",
    ),
    LinkProfile(
        "lan100m",
        rate_bit_s=100_000_000,
        source="100 Mbit/s Fast Ethernet, or a typical Wi-Fi link's real throughput; LAN RTT not emulated",
    ),
    LinkProfile(
        "wan24m",
        rate_bit_s=24_000_000,
        delay_ms=10.0,
        source="seed 000's WAN: uplink shaped to 24 Mbit/s at the client; the seed gives no RTT, "
        "20 ms (10 ms each way) assumed for a domestic path",
    ),
    LinkProfile(
        "wan100m",
        rate_bit_s=100_000_000,
        delay_ms=20.0,
        source="a 100 Mbit/s fibre/cable line to a server in another region: 40 ms RTT",
    ),
    LinkProfile(
        "lfn1g",
        rate_bit_s=1_000_000_000,
        delay_ms=83.5,
        source="long fat network from HPN-SSH's example: 1 Gbit/s at 167 ms RTT, where OpenSSH's "
        "channel window caps one channel near window/RTT (11.8 MiB/s)",
    ),
)

LINKS: dict[str, LinkProfile] = {p.name: p for p in _PROFILES}

CUSTOM_KEYS = ("rate", "delay", "jitter", "loss")
_RATE_UNITS = {"bit": 1, "kbit": 1_000, "mbit": 1_000_000, "gbit": 1_000_000_000}
_TIME_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def parse_rate(text: str) -> int:
    """`200mbit`, `1.5gbit`, `800kbit` -> bit/s (tc's units; `mbps` would mean megabytes in tc, so
    only the unambiguous `*bit` forms are accepted)."""
    m = re.fullmatch(_NUMBER + r"\s*(bit|kbit|mbit|gbit)", text.strip().lower())
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"malformed rate {text!r}: use a positive number with kbit, mbit or gbit (e.g. 200mbit)")
    bits = int(float(m.group(1)) * _RATE_UNITS[m.group(2)])
    if not 8_000 <= bits <= 100_000_000_000:
        raise UsageError(f"rate {text!r} is out of range: between 8kbit and 100gbit")
    return bits


def parse_time_ms(text: str, what: str) -> float:
    m = re.fullmatch(_NUMBER + r"\s*(us|ms|s)", text.strip().lower())
    if not m:
        raise UsageError(f"malformed {what} {text!r}: use a number with ms, us or s (e.g. 20ms)")
    value = float(m.group(1)) * _TIME_UNITS[m.group(2)]
    if value > 10_000:
        raise UsageError(f"{what} {text!r} is out of range: at most 10s")
    return value


def parse_loss(text: str) -> float:
    m = re.fullmatch(_NUMBER + r"\s*%?", text.strip())
    if not m or float(m.group(1)) >= 100:
        raise UsageError(f"malformed loss {text!r}: use a percentage below 100 (e.g. 0.1%)")
    return float(m.group(1))


def _fmt_number(value: float) -> str:
    return f"{value:g}"


def _rate_name(bits: int) -> str:
    for unit, scale in (("gbit", 1_000_000_000), ("mbit", 1_000_000), ("kbit", 1_000)):
        if bits >= scale:
            return f"{_fmt_number(bits / scale)}{unit}"
    return f"{bits}bit"


def custom_profile(values: dict[str, str]) -> LinkProfile:
    """A profile from `key=value` pairs, named by its canonical short form."""
    rate = parse_rate(values["rate"]) if "rate" in values else None
    delay = parse_time_ms(values["delay"], "delay") if "delay" in values else 0.0
    jitter = parse_time_ms(values["jitter"], "jitter") if "jitter" in values else 0.0
    loss = parse_loss(values["loss"]) if "loss" in values else 0.0
    if jitter > 0 and delay <= 0:
        raise UsageError("jitter needs a delay (e.g. delay=20ms,jitter=2ms)")
    if jitter > delay > 0:
        raise UsageError(f"jitter {jitter:g} ms is larger than the delay {delay:g} ms")
    parts = [_rate_name(rate) if rate else "unshaped", f"{_fmt_number(delay)}ms"]
    if jitter:
        parts.append(f"j{_fmt_number(jitter)}ms")
    if loss:
        parts.append(f"loss{_fmt_number(loss)}%")
    spec = ",".join(f"{k}={values[k]}" for k in CUSTOM_KEYS if k in values)
    return LinkProfile(
        "/".join(parts), rate_bit_s=rate, delay_ms=delay, jitter_ms=jitter, loss_pct=loss, source=f"custom: {spec}"
    )


_CANONICAL = re.compile(
    r"(?P<rate>[0-9.]+(?:bit|kbit|mbit|gbit)|unshaped)/(?P<delay>[0-9.]+ms)"
    r"(?:/j(?P<jitter>[0-9.]+ms))?(?:/loss(?P<loss>[0-9.]+%))?"
)


def profile_named(name: str) -> LinkProfile | None:
    """A registered profile, or a custom profile from its canonical name (as stored in results)."""
    if name in LINKS:
        return LINKS[name]
    m = _CANONICAL.fullmatch(name)
    if not m:
        return None
    values = {k: v for k, v in m.groupdict().items() if v is not None and v != "unshaped"}
    try:
        return custom_profile(values)
    except UsageError:
        return None


def rate_mbit_s(name: str) -> float | None:
    """The profile's rate in Mbit/s for charts (None: loopback, unshaped or unknown)."""
    profile = profile_named(name)
    return profile.rate_mbit_s if profile else None


def parse_links(spec: str) -> list[LinkProfile]:
    """`--link`: profile names and custom `key=value` groups (see the module docstring)."""
    out: list[LinkProfile] = []
    for chunk in re.split(r"[+;]", spec or ""):
        pending: dict[str, str] = {}

        def flush(pending: dict[str, str] = pending) -> None:
            if pending:
                out.append(custom_profile(dict(pending)))
                pending.clear()

        for token in (t.strip() for t in chunk.split(",")):
            if not token:
                continue
            if "=" in token:
                key, _, value = token.partition("=")
                key = key.strip().lower()
                if key not in CUSTOM_KEYS:
                    raise UsageError(f"unknown link setting {key!r} in {token!r}; known: {', '.join(CUSTOM_KEYS)}")
                if key in pending:
                    flush()
                pending[key] = value.strip()
                continue
            flush()
            profile = profile_named(token)
            if profile is None:
                raise UsageError(f"unknown link {token!r}; known: {', '.join(LINKS)}, or rate=...,delay=...")
            out.append(profile)
        flush()
    unique = list({p.name: p for p in out}.values())
    return unique or [LOOPBACK]

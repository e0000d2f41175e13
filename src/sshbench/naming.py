"""How the short lines name a combination (the conclusion's, those under the table): its label without `@openssh.com`,
with its setup where the run swept one, and its kex where two would read the same."""

from __future__ import annotations

from collections.abc import Iterable

from sshbench.results import AXES, Combination, short_name


def swept_setup(combinations: Iterable[Combination]) -> list[str]:
    """The setup axes (AXES) whose values differ between these combinations, in AXES order: where each row's
    setup must be named (the table's setup column, the conclusion's picks)."""
    combos = list(combinations)
    return [a.name for a in AXES if a.setup and len({getattr(c, a.name) for c in combos}) > 1]


def shown_name(combo: Combination, setup: list[str], kex: bool = False) -> str:
    """A combination as the short lines (the conclusion's, those under the table) name it: its label without
    `@openssh.com`, and its setup where the run swept one (`swept_setup`): a run over two tools has two rows
    called "aes128-gcm". With `kex`, its kex too (`shown_apart`)."""
    named = [label] if setup and (label := combo.setup_label(setup)) else []
    if kex:
        named.append(f"kex {short_name(combo.kex)}")
    return short_name(combo.label_beside(setup)) + (f" ({', '.join(named)})" if named else "")


def shown_apart(combos: list[Combination], setup: list[str]) -> list[str]:
    """`shown_name` of each, with the kex named where two would read the same: a run with `--kex curve25519-sha256`
    also measures your ssh's default kex, and named "chacha20-poly1305 (lan1g) vs chacha20-poly1305 (lan1g)"."""
    names = [shown_name(c, setup) for c in combos]
    return [shown_name(c, setup, kex=names.count(name) > 1) for c, name in zip(combos, names, strict=True)]

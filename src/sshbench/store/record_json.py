"""The records (results.py's dataclasses, RunSettings) to and from plain JSON values, as the store's columns and the
JSON document hold them: `from_plain` rebuilds one (each value checked against its field's type for an imported
document: BadField names the first that is wrong), `jsonable` writes what json cannot, `with_extras` fills the
RunResult fields the store keeps in extra_json.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing
from dataclasses import asdict

from sshbench.results import Combination, Negotiated, RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store.schema import NOT_STORED


def nested_dataclass(hint: object) -> type | None:
    """The dataclass in a field's type (`Negotiated`, `Combination | None`), if any."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return hint
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        for arg in typing.get_args(hint):
            if dataclasses.is_dataclass(arg) and isinstance(arg, type):
                return arg
    return None


class BadField(ValueError):
    """A field of an imported document whose value does not have its documented type."""

    def __init__(self, where: str, expected: str, value: object) -> None:
        shown = json.dumps(value)[:40] if isinstance(value, (str, int, float, bool, type(None))) else ""
        got = type(value).__name__ if value is not None else "null"
        super().__init__(f"'{where}' must be {expected}, not {got}{' ' + shown if shown else ''}")
        self.where = where


_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", dict: "an object"}


def describe(hint: object) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " or ".join(describe(a) for a in args) + " or null"
    if typing.get_origin(hint) is list:
        return "a list"
    if typing.get_origin(hint) is dict:
        return "an object"
    if dataclasses.is_dataclass(hint):
        return "an object"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(repr(member.value) for member in hint)
    return _NAMES.get(hint, str(hint))  # type: ignore[call-overload]


def matches(value: object, hint: object) -> bool:
    """Whether a JSON value has a field's declared type (ints are numbers; numbers are finite)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(matches(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if hint is str:
        return isinstance(value, str)
    if typing.get_origin(hint) is list or hint is list:
        return isinstance(value, list)
    if typing.get_origin(hint) is dict or hint is dict:
        return isinstance(value, dict)
    if dataclasses.is_dataclass(hint):
        return isinstance(value, (dict, hint))  # type: ignore[arg-type]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return value in {member.value for member in hint}
    return True  # a type this check does not know: taken as it is


def from_plain(cls: type, data: dict, where: str | None = None) -> typing.Any:
    """Rebuild a dataclass from `asdict` output; unknown keys (from a newer sshbench) are ignored and
    missing ones take their defaults. With `where` (an imported document: the path of `data` in it), every
    value is checked against its field's type first (BadField names the first that is wrong)."""
    hints = typing.get_type_hints(cls, localns={"RunSettings": RunSettings})
    kwargs = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name not in data:
            continue
        value = data[f.name]
        hint = hints.get(f.name)
        if where is not None and not matches(value, hint):
            raise BadField(f"{where}{f.name}", describe(hint), value)
        nested = nested_dataclass(hint)
        if nested is not None and isinstance(value, dict):
            value = from_plain(nested, value, None if where is None else f"{where}{f.name}.")
        if isinstance(hint, type) and issubclass(hint, enum.Enum) and matches(value, hint):
            value = hint(value)  # the JSON's string as the record's enum (Trial.kind)
        kwargs[f.name] = value
    return cls(**kwargs)


def trial_from_json(data: dict, where: str | None = None) -> Trial:
    """A Trial from its `Trial.to_json()` form (flat combination fields), as in `run --json` files."""
    combo = from_plain(Combination, data, where)
    negotiated_data = data.get("negotiated") or {}
    if where is not None and not isinstance(negotiated_data, dict):
        raise BadField(f"{where}negotiated", "an object", negotiated_data)
    negotiated = from_plain(Negotiated, negotiated_data, None if where is None else f"{where}negotiated.")
    # Already-built objects are passed through as they are (only dicts are converted).
    return from_plain(Trial, {**data, "combination": combo, "negotiated": negotiated}, where)


def settings_from(data: dict, where: str | None = None) -> RunSettings:
    return from_plain(RunSettings, data, where)


def jsonable(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def with_extras(result: RunResult, extras: dict) -> RunResult:
    """Fill fields added to RunResult after the columns were designed (dicts/lists/scalars as stored)."""
    hints = typing.get_type_hints(RunResult, localns={"RunSettings": RunSettings})
    for f in dataclasses.fields(RunResult):
        if f.name in extras and f.name not in NOT_STORED:
            value = extras[f.name]
            nested = nested_dataclass(hints.get(f.name))
            if nested is not None and isinstance(value, dict):
                value = from_plain(nested, value)
            setattr(result, f.name, value)
    return result

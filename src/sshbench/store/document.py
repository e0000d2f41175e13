"""The JSON document of a run, both ways: `to_document()` (what `run --json`, `report --format json` and
`export` write; fields documented in docs/results-json.md, top-level keys stable) and the records rebuilt
from one (`result_from_document()`, for `import`), and the dataclass (de)serialisation the store shares."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import types
import typing
from dataclasses import asdict
from pathlib import Path

from sshbench import __version__, answer, build_answer, condition_answer, summary
from sshbench.baselines import analysis as baseline_analysis
from sshbench.clock import clock_agreement
from sshbench.errors import RunError, UsageError
from sshbench.osfiles import atomic_write
from sshbench.results import Combination, Negotiated, RunResult, Trial, TrialKind
from sshbench.security import report_hooks as security_hooks
from sshbench.settings import RunSettings

# Of the JSON document (the SQLite schema has its own). 2 (docs/results-json.md, "Schema versions"): the
# steady-state clock (`mib_s` / `data_s` of a trial with `data_clock` "steady-state" leave the start-up out) and
# `relative_to_fastest` as the paired ratio to the row ranked first.
SCHEMA_VERSION = 2


def to_document(result: RunResult) -> dict:
    comparisons = baseline_analysis.compare(result)  # vs_raw_tcp, vs_crypto_ceiling, bound_by per summary
    conclusion = answer.compute(result)  # the conclusion block (sshbench/answer.py)
    return {
        "schema_version": SCHEMA_VERSION,
        "sshbench_version": __version__,
        "status": result.status,
        "error": result.error,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "settings": result.settings_json(),
        "environment": result.environment,
        "target": result.target,
        "answer": None if conclusion is None else conclusion.to_json(),
        # a build sweep (--ssh A,B / --sshd A,B): what changing builds changes (sshbench/build_answer.py)
        "builds_answer": None if (builds_found := build_answer.compute(result)) is None else builds_found.to_json(),
        # a run over several links, directions, payloads or sinks: each one's own answer (condition_answer.py)
        "conditions_answer": None
        if (conditions_found := condition_answer.compute(result)) is None
        else conditions_found.to_json(),
        "summaries": [summary_entry(result, s, comparisons) for s in summary.summaries(result)],
        "baselines": baseline_analysis.document(result),
        "strict_kex": security_hooks.strict_kex_json(result.environment),
        "stats": summary.stats_json(result),
        "handshakes": [h.to_json() for h in summary.handshakes(result)],
        "clock_agreement": clock_agreement(result.trials),
        "trials": [t.to_json() for t in result.trials],
    }


def summary_entry(result: RunResult, found: summary.Summary, comparisons: dict) -> dict:
    """One summary in the document: its figures, its security verdict and its baseline comparison."""
    return {
        **found.to_json(),
        **security_hooks.summary_json(found, result.environment),
        **baseline_analysis.summary_json(comparisons, found),
    }


def write(result: RunResult, path: str | os.PathLike[str]) -> None:
    """Write atomically (a temp file renamed into place): a full disk never leaves half a file."""
    target = Path(path)
    if target.exists() and not target.is_file():  # a device or a pipe (/dev/stdout): written, never replaced
        try:
            with open(target, "w") as stream:
                stream.write(json.dumps(to_document(result), indent=2) + "\n")
        except OSError as err:
            raise RunError(f"cannot write {target}: {err.strerror}") from None
        return
    try:
        atomic_write(target, json.dumps(to_document(result), indent=2) + "\n")
    except OSError as err:
        raise RunError(f"cannot write {target}: {err.strerror}") from None


# --- (de)serialising dataclasses ------------------------------------------------------------------


def _nested_dataclass(hint: object) -> type | None:
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


def _describe(hint: object) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " or ".join(_describe(a) for a in args) + " or null"
    if typing.get_origin(hint) is list:
        return "a list"
    if typing.get_origin(hint) is dict:
        return "an object"
    if dataclasses.is_dataclass(hint):
        return "an object"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(repr(member.value) for member in hint)
    return _NAMES.get(hint, str(hint))  # type: ignore[call-overload]


def _matches(value: object, hint: object) -> bool:
    """Whether a JSON value has a field's declared type (ints are numbers; numbers are finite)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(_matches(value, a) for a in typing.get_args(hint))
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


# The `environment` keys docs/results-json.md documents, with their types (others are kept as they are).
ENVIRONMENT_TYPES: dict[str, object] = {
    **{k: str | None for k in ("hostname", "cpu_model", "machine", "kernel", "os", "python", "client_ssh_version")},
    **{k: str | None for k in ("client_crypto_library", "openssl_version", "server_ssh_version", "target")},
    **{k: str | None for k in ("payload_kind", "payload_size")},
    "cores": int | None,
    "aes_ni": bool | None,
    "server_strict_kex": bool | None,
    "client_strict_kex": bool | None,
    "crypto_flags": dict[str, bool] | None,
    "payload_zlib_ratio": dict[str, float] | None,
    "servers": dict | None,
    "steady_omit_s": float | None,
    "steady_window_capped": bool | None,
    "rekeys_counted": bool | None,
    "conclusion_config_checked": str | None,
    "conclusion_config_checked_lines": list[str] | None,
    "builds": dict | None,
}

# A build sweep's `environment.builds`: its lists' entries and the keys the reports read from each.
BUILD_LISTS: dict[str, dict[str, object]] = {
    "ssh": {"label": str, "path": str},
    "sshd": {"label": str, "path": str},
    "pairings": {"ssh_build": str | None, "sshd_build": str | None, "negotiated": dict | None},
}


# The `target` keys the reports read (a server's kind decides which verdicts apply), with their types.
TARGET_TYPES: dict[str, object] = {
    "kind": str | None,
    "label": str | None,
    "servers": dict | None,
    "machine": dict | None,
}


def check_target(target: dict) -> None:
    """BadField for the first `target` key the reports read whose value has the wrong type (each of
    several `--server`s' entries included)."""
    entries = [("target", target)] + [
        (f"target.servers.{name}", entry) for name, entry in (target.get("servers") or {}).items()
    ]
    for where, entry in entries:
        if not isinstance(entry, dict):
            raise BadField(where, "an object", entry)
        for key, hint in TARGET_TYPES.items():
            if key in entry and not _matches(entry[key], hint):
                raise BadField(f"{where}.{key}", _describe(hint), entry[key])


def _check_builds(builds: dict) -> None:
    for name, fields in BUILD_LISTS.items():
        entries = builds.get(name)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise BadField(f"environment.builds.{name}", "a list", entries)
        for index, entry in enumerate(entries):
            where = f"environment.builds.{name}[{index}]"
            if not isinstance(entry, dict):
                raise BadField(where, "an object", entry)
            for key, hint in fields.items():
                if not _matches(entry.get(key), hint):
                    raise BadField(f"{where}.{key}", _describe(hint), entry.get(key))


def check_environment(env: dict) -> None:
    """BadField for the first documented environment key whose value has the wrong type."""
    if isinstance(env.get("builds"), dict):
        _check_builds(env["builds"])
    for key, hint in ENVIRONMENT_TYPES.items():
        if key not in env:
            continue
        value = env[key]
        if not _matches(value, hint):
            raise BadField(f"environment.{key}", _describe(hint), value)
        args = typing.get_args(next((a for a in typing.get_args(hint) if typing.get_origin(a) is dict), dict))
        if args and isinstance(value, dict):
            for name, item in value.items():
                if not _matches(item, args[1]):
                    raise BadField(f"environment.{key}.{name}", _describe(args[1]), item)
        item_args = typing.get_args(next((a for a in typing.get_args(hint) if typing.get_origin(a) is list), list))
        if item_args and isinstance(value, list):
            for index, item in enumerate(value):
                if not _matches(item, item_args[0]):
                    raise BadField(f"environment.{key}[{index}]", _describe(item_args[0]), item)


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
        if where is not None and not _matches(value, hint):
            raise BadField(f"{where}{f.name}", _describe(hint), value)
        nested = _nested_dataclass(hint)
        if nested is not None and isinstance(value, dict):
            value = from_plain(nested, value, None if where is None else f"{where}{f.name}.")
        if isinstance(hint, type) and issubclass(hint, enum.Enum) and _matches(value, hint):
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


# RunResult fields with a column (or JSON column) of their own; the rest go to extra_json.
RUN_COLUMNS = {
    "settings",
    "environment",
    "target",
    "combinations",
    "trials",
    "status",
    "error",
    "exit_code",
    "started_at",
    "finished_at",
    "notices",
    "run_id",
}
# Derived in memory, never stored (RunResult.cache: summaries computed once per state of the trials).
NOT_STORED = {"cache"}


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
            nested = _nested_dataclass(hints.get(f.name))
            if nested is not None and isinstance(value, dict):
                value = from_plain(nested, value)
            setattr(result, f.name, value)
    return result


def result_from_document(doc: object, source: str) -> RunResult:
    """A RunResult from the JSON export document; UsageError (one line) when it is not one."""

    def bad(reason: str) -> UsageError:
        return UsageError(f"{source} is not an sshbench run export: {reason}")

    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise bad("no schema_version")
    if version > SCHEMA_VERSION:
        raise UsageError(f"{source} was written by a newer sshbench (JSON schema {version}); upgrade sshbench")
    try:
        for key, kind in (
            ("settings", dict),
            ("environment", dict),
            ("trials", list),
            ("started_at", (int, float)),
            ("status", str),
        ):
            if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
                raise bad(f"'{key}' is missing or has the wrong type")
        for key, hint in (("finished_at", float | None), ("error", str | None), ("target", dict | None)):
            if not _matches(doc.get(key), hint):
                raise BadField(key, _describe(hint), doc.get(key))
        check_environment(doc["environment"])
        if isinstance(doc.get("target"), dict):
            check_target(doc["target"])
        if not math.isfinite(doc["started_at"]):
            raise bad("'started_at' must be a finite number")
        trials = []
        for index, data in enumerate(doc["trials"]):
            if not isinstance(data, dict):
                raise bad(f"trial {index} is not an object")
            missing = [
                k
                for k in (
                    "kind",
                    "cipher",
                    "mac",
                    "kex",
                    "repetition",
                    "warmup",
                    "payload_bytes",
                    "started_at",
                    "valid",
                )
                if k not in data
            ]
            if missing:
                raise bad(f"trial {index} lacks {', '.join(missing)}")
            trials.append(trial_from_json(data, f"trials[{index}]."))
        combos_data = doc.get("combinations")
        if isinstance(combos_data, list):
            for index, c in enumerate(combos_data):
                if not isinstance(c, dict):
                    raise bad(f"'combinations[{index}]' must be an object")
            combos = [from_plain(Combination, c, f"combinations[{i}].") for i, c in enumerate(combos_data)]
        else:  # a `run --json` file: the combinations that were measured, in order
            combos = list(dict.fromkeys(t.combination for t in trials if t.kind == TrialKind.TRANSFER))
        status = doc["status"] if doc["status"] in ("complete", "interrupted", "failed") else "interrupted"
        return RunResult(
            settings=settings_from(doc["settings"], "settings."),
            environment=doc["environment"],
            target=doc["target"] if isinstance(doc.get("target"), dict) else {},
            combinations=combos,
            trials=trials,
            status=status,
            error=doc.get("error"),
            exit_code=0,
            started_at=float(doc["started_at"]),
            finished_at=doc.get("finished_at"),
        )
    except UsageError:
        raise
    except BadField as err:
        raise bad(str(err)) from None
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise bad(str(err)) from None


def read_document(path: str) -> tuple[dict, str]:
    """Read an export file: (document, its name for messages)."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not an sshbench run export: not text") from None
    try:
        return json.loads(text), path
    except json.JSONDecodeError as err:
        raise UsageError(f"{path} is not an sshbench run export: invalid JSON at line {err.lineno}") from None

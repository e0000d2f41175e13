"""The JSON document of a run, both ways: `to_document()` (what `run --json`, `report --format json` and
`export` write; fields documented in docs/results-json.md, top-level keys stable) and the records rebuilt
from one (`result_from_document()`, for `import`; each record's fields: record_json.py, the environment's and
target's keys: document_checks.py)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from sshbench import __version__
from sshbench.answers import answer, build_answer, condition_answer, remedies
from sshbench.baselines import analysis as baseline_analysis
from sshbench.errors import RunError, UsageError
from sshbench.host.osfiles import atomic_write
from sshbench.measure.clock import clock_agreement
from sshbench.model import run_stats, summary
from sshbench.results import Combination, RunResult, TrialKind
from sshbench.security import report_hooks as security_hooks
from sshbench.store.document_checks import check_environment, check_target
from sshbench.store.record_json import BadField, describe, from_plain, matches, settings_from, trial_from_json

# Of the JSON document (the SQLite schema has its own). 2 (docs/results-json.md, "Schema versions"): the
# steady-state clock (`mib_s` / `data_s` of a trial with `data_clock` "steady-state" leave the start-up out) and
# `relative_to_fastest` as the paired ratio to the row ranked first.
SCHEMA_VERSION = 3  # 3 (issue 64): `answer.equivalent` only for decided ties; `not_told_apart`, `config_status`


def record_fields(result: RunResult) -> dict:
    """The run as recorded (no figure derived from its trials): the head of every document, and all of the light one
    a run rewrites into its unsaved file after each trial (store/unsaved.py)."""
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
    }


def to_document(result: RunResult) -> dict:
    comparisons = baseline_analysis.compare(result)  # vs_raw_tcp, vs_crypto_ceiling, bound_by per summary
    conclusion = answer.compute(result)  # the conclusion block (sshbench/answers/answer.py)
    return {
        **record_fields(result),
        "answer": None if conclusion is None else conclusion.to_json(),
        # a build sweep (--ssh A,B / --sshd A,B): what changing builds changes (sshbench/answers/build_answer.py)
        "builds_answer": None if (builds_found := build_answer.compute(result)) is None else builds_found.to_json(),
        # a run over several links, directions, payloads or sinks: each one's own answer (condition_answer.py)
        "conditions_answer": None
        if (conditions_found := condition_answer.compute(result)) is None
        else conditions_found.to_json(),
        # --remedies: what would help, each remedy row against the user's setup (sshbench/answers/remedies.py)
        "remedies": None if (helps := remedies.compute(result)) is None else helps.to_json(),
        "summaries": [summary_entry(result, s, comparisons) for s in summary.summaries(result)],
        "baselines": baseline_analysis.document(result),
        "strict_kex": security_hooks.strict_kex_json(result.environment),
        "stats": run_stats.stats_json(result),
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


LATEST_TIME = 4_102_444_800  # 2100-01-01: a run's times beyond it are junk, and beyond 9999 they break every date


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
            if not matches(doc.get(key), hint):
                raise BadField(key, describe(hint), doc.get(key))
        check_environment(doc["environment"])
        if isinstance(doc.get("target"), dict):
            check_target(doc["target"])
        for key in ("started_at", "finished_at"):  # shown as dates: Python's dates end at year 9999
            when = doc.get(key)
            if when is not None and not (math.isfinite(when) and 0 <= when < LATEST_TIME):
                raise bad(f"'{key}' must be a time between 1970 and 2100 (seconds since the epoch)")
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
        settings = settings_from(doc["settings"], "settings.")
        try:
            settings.axes  # noqa: B018  # the axes every report reads: refused here, not as a traceback there
        except UsageError as err:
            raise bad(f"settings: {err}") from None
        return RunResult(
            settings=settings,
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

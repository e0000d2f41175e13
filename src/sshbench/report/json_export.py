"""The JSON document of a run (fields documented in docs/results-json.md; top-level keys stable)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sshbench import __version__, summary
from sshbench.baselines import analysis as baseline_analysis
from sshbench.clock import clock_agreement
from sshbench.errors import RunError
from sshbench.results import RunResult
from sshbench.security import report_hooks as security_hooks

SCHEMA_VERSION = 1


def to_document(result: RunResult) -> dict:
    comparisons = baseline_analysis.compare(result)  # vs_raw_tcp, vs_crypto_ceiling, bound_by per summary
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
        "summaries": [{**s.to_json(), **security_hooks.summary_json(s, result.environment),
                       **baseline_analysis.summary_json(comparisons, s)}
                      for s in summary.summaries(result)],
        "baselines": baseline_analysis.document(result),
        "strict_kex": security_hooks.strict_kex_json(result.environment),
        "handshakes": [h.to_json() for h in summary.handshakes(result)],
        "clock_agreement": clock_agreement(result.trials),
        "trials": [t.to_json() for t in result.trials],
    }


def write(result: RunResult, path: str | os.PathLike[str]) -> None:
    """Write atomically (a temp file renamed into place): a full disk never leaves half a file."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(to_document(result), indent=2) + "\n")
        tmp.replace(target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise RunError(f"cannot write {target}: {err.strerror}") from None

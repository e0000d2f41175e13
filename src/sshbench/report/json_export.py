"""`--format json` / `run --json`: the run's JSON document (built in sshbench.store.document)."""

from __future__ import annotations

from sshbench.store.document import SCHEMA_VERSION, to_document, write

__all__ = ["SCHEMA_VERSION", "to_document", "write"]

"""Results that last: the SQLite store (`sqlite`), the JSON document both ways (`document`), recording a
run as it happens (`recorder`) and carrying on an interrupted one (`resume`)."""

from __future__ import annotations

from sshbench.store.document import (
    read_document,
    result_from_document,
    to_document,
    trial_from_json,
)
from sshbench.store.sqlite import (
    DEFAULT_TIMEOUT_S,
    Store,
    StoredRun,
    default_path,
    open_store,
    swept,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "Store",
    "StoredRun",
    "default_path",
    "open_store",
    "read_document",
    "result_from_document",
    "swept",
    "to_document",
    "trial_from_json",
]

"""Results that last: the SQLite store (`sqlite`; the file and its schema: `database`, `schema`; what `runs` lists:
`listing`), the JSON document both ways (`document`), recording a run as it happens (`recorder`) and carrying on an
interrupted one (`resume`)."""

from __future__ import annotations

from sshbench.store.database import DEFAULT_TIMEOUT_S
from sshbench.store.document import read_document, result_from_document, to_document
from sshbench.store.listing import StoredRun, swept
from sshbench.store.record_json import trial_from_json
from sshbench.store.sqlite import Store, default_path, open_store

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

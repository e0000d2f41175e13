"""Everything a run killed with `kill -9` (or a power loss) can leave behind, removed by the next run:
processes and temp dirs from its run record (`cleanup`), and network namespaces found by name (`links`)."""

from __future__ import annotations

from sshbench.host.cleanup import remove_dead_run_records
from sshbench.links.namespaces import remove_stale_namespaces
from sshbench.links.nshost import sweep_stale_hosts


def clean_leftovers() -> list[str]:
    """Remove the leftovers of dead runs; a description of each, for a one-line notice."""
    removed = remove_dead_run_records()
    try:
        # Namespaces are found by name in `ip netns list`, not in a run record: a record written per
        # namespace would be lost with the runtime dir; the name cannot be.
        removed += remove_stale_namespaces()
    except Exception:  # a leftover sweep never stops a run; the next run tries again
        pass
    try:
        removed += sweep_stale_hosts()  # namespace hosts (scripts/nshost, the tests' second machine)
    except Exception:
        pass
    return removed

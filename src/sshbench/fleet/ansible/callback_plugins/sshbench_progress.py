"""Ansible stdout callback for `sshbench fleet`: one JSON object per line for each task start and each
host's result, so sshbench shows per-host progress and tells unreachable hosts from failed stages.

Lines: {"event": "task", "task": NAME}; {"event": "ok" | "failed" | "unreachable" | "skipped", "host": H,
"task": NAME, "msg": TEXT, "item": LABEL (a loop's item: one line per item as it ends, then one for the
task), "work": PATH (the role's working directory, from its set_fact)}; {"event": "done"}. Anything else
Ansible prints (warnings) is not JSON and is shown as it is.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: sshbench_progress
    type: stdout
    short_description: one JSON line per task and host result, for sshbench fleet
    description: one JSON line per task and host result, for sshbench fleet
"""


def _message(result: dict[str, Any]) -> str:
    """The line that says why: a stage's own message (our check prints one), else Ansible's."""
    for key in ("stdout_lines", "stderr_lines"):
        lines = [line for line in result.get(key) or [] if line.strip()]
        if lines and result.get("rc"):
            return str(lines[-1])
    return str(result.get("msg") or "").strip().splitlines()[0] if result.get("msg") else ""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "sshbench_progress"

    def _emit(self, **fields: Any) -> None:
        sys.stdout.write(json.dumps({**fields, "t": round(time.time(), 3)}) + "\n")
        sys.stdout.flush()

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        self._emit(event="task", task=task.get_name())

    def _result(self, event: str, result: Any, item: bool = False) -> None:
        fields: dict[str, Any] = {}
        if item:
            fields["item"] = str(result._result.get("_ansible_item_label", result._result.get("item", "")))
        facts = result._result.get("ansible_facts") or {}
        if isinstance(facts, dict) and facts.get("sshbench_work"):
            fields["work"] = str(facts["sshbench_work"])
        self._emit(
            event=event,
            host=result._host.get_name(),
            task=result._task.get_name(),
            msg=_message(result._result),
            stdout=str(result._result.get("stdout") or "")[-500:],
            stderr=str(result._result.get("stderr") or "")[-500:],
            rc=result._result.get("rc"),
            **fields,
        )

    def v2_runner_on_ok(self, result: Any) -> None:
        self._result("ok", result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._result("ignored" if ignore_errors else "failed", result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._result("unreachable", result)

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._result("skipped", result)

    def v2_runner_item_on_ok(self, result: Any) -> None:
        self._result("ok", result, item=True)

    def v2_runner_item_on_failed(self, result: Any) -> None:
        self._result("failed", result, item=True)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        self._emit(event="done")

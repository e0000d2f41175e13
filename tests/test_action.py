"""The GitHub Action (action.yml, issue 65): its metadata against the syntax GitHub documents
(tests/data/action-metadata.schema.json), every input it reads declared and every one declared read, every step output
it names written, its scripts valid bash; and its check step's script run here for real, as a runner would."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import DATA, ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = json.loads((DATA / "action-metadata.schema.json").read_text())
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _expressions(node: object) -> list[str]:
    if isinstance(node, dict):
        return [e for value in node.values() for e in _expressions(value)]
    if isinstance(node, list):
        return [e for value in node for e in _expressions(value)]
    return EXPRESSION.findall(node) if isinstance(node, str) else []


def test_the_metadata_has_the_documented_shape() -> None:
    jsonschema.validate(ACTION, SCHEMA)
    assert ACTION["runs"]["using"] == "composite"


def test_every_input_it_reads_is_declared_and_every_declared_one_is_read() -> None:
    read = {m.group(1) for e in _expressions(ACTION["runs"]) if (m := re.fullmatch(r"inputs\.([\w-]+)", e))}
    assert read == set(ACTION["inputs"]), (read, set(ACTION["inputs"]))


def test_inputs_reach_the_shell_only_through_env() -> None:
    # an input spliced into a script is code (a `$(...)` in a value would run); through env it is one argument
    for step in STEPS:
        assert not EXPRESSION.search(step.get("run", "")), step.get("name")


def test_every_step_output_named_is_written_by_an_earlier_step() -> None:
    written: dict[str, set[str]] = {}
    for step in STEPS:
        for expression in _expressions(step):
            if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
                assert m.group(2) in written.get(m.group(1), set()), expression
        if "id" in step:
            written[step["id"]] = set(re.findall(r'echo "([\w-]+)=', step.get("run", "")))
    for name, output in ACTION["outputs"].items():
        m = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", output["value"])
        assert m and m.group(2) in written[m.group(1)], name


def test_its_scripts_are_valid_bash_and_its_files_exist() -> None:
    for step in STEPS:
        if "run" in step:
            assert step["shell"] == "bash"
            done = subprocess.run(["bash", "-n"], input=step["run"], text=True, capture_output=True, timeout=10)
            assert done.returncode == 0, (step["name"], done.stderr)
        for path in re.findall(r"\$GITHUB_ACTION_PATH/([\w./-]+)", step.get("run", "")):
            assert (ROOT / path).is_file(), path
    uses = [step["uses"] for step in STEPS if "uses" in step]
    assert any(u.startswith("actions/setup-python@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)


def _step(step_id_or_name: str) -> dict:
    return next(s for s in STEPS if step_id_or_name in (s.get("id"), s.get("name")))


@pytest.mark.parametrize(("code", "exit_code"), [("0", 0), ("1", 1), ("2", 2), ("3", 3), ("", 1)])
def test_the_last_step_fails_the_job_as_the_check_exits(code: str, exit_code: int) -> None:
    step = _step("The check's decision")
    env = {**os.environ, "CODE": code}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=10)
    assert done.returncode == exit_code, done.stdout


@pytest.mark.e2e  # runs a real side-by-side check through the step's own script
def test_the_check_step_runs_as_a_runner_would_run_it(tmp_path: Path) -> None:
    copy = tmp_path / "sshd"
    shutil.copy2("/usr/sbin/sshd", copy)  # the same sshd twice: an A/A check
    summary, outputs, temp = tmp_path / "summary.md", tmp_path / "outputs", tmp_path / "runner-temp"
    temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # this checkout's sshbench
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "AGAINST": "",
        "SSHD": f"/usr/sbin/sshd,{copy}",
        "SSH": "",
        "THRESHOLD": "5%",
        "INCONCLUSIVE": "pass",
        "OPTIONS": "--ciphers aes128-gcm@openssh.com --kex curve25519-sha256 --runs 3 --size 16M",
        "DB": str(tmp_path / "runs.db"),
    }
    assert shutil.which("sshbench", path=env["PATH"]), "the venv's sshbench"
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step("check")["run"]],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # the step itself never fails: the last step decides
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["exit-code"] in {"0", "1"}, done.stdout + done.stderr  # pass: "could not tell" exits 0
    assert summary.read_text().startswith("### sshbench check:")
    assert json.loads(Path(written["bmf"]).read_text())["all rows"]["new-old-ratio"]["value"] > 0
    assert Path(written["junit"]).read_text().startswith("<?xml")

"""`import` + `report` never raise an internal error: arbitrary JSON and mutated real documents are either
imported and reported, or refused with one UsageError naming the first bad field (hypothesis)."""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from conftest import with_shared_ceilings
from sshbench.errors import SshbenchError
from sshbench.report import formats, table
from sshbench.store import open_store, result_from_document

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="session")
def real_document(tmp_path_factory) -> dict:
    """A real `run --json` document of a small run (2M, one cipher, two repetitions), made once."""
    state = tmp_path_factory.mktemp("fuzzdoc")
    env = {
        **os.environ,
        "SSHBENCH_DB": str(state / "r.db"),
        "SSHBENCH_RUNTIME_DIR": str(state / "runtime"),
        "XDG_CACHE_HOME": with_shared_ceilings(state / "cache", tmp_path_factory),
        "TMPDIR": str(state),
    }
    out = state / "doc.json"
    argv = ["run", "--ciphers", "aes128-ctr", "--size", "2M", "--runs", "2", "--warmup", "0", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "sshbench", *argv], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _import_and_report(doc: object, tmp_path) -> None:
    """What `import` then `report` do, in-process: only a user error (SshbenchError) may come out."""
    try:
        result_from_document(doc, "doc.json")
    except SshbenchError as err:
        assert "\n" not in str(err)
        return
    path = tmp_path / "fuzz.db"
    path.unlink(missing_ok=True)
    with open_store(path) as store:
        try:
            run_id = store.import_document(doc, "doc.json")
        except SshbenchError:
            return
        result = store.load_result(run_id)
    table.print_report(result, Console(file=io.StringIO(), width=200))
    for name in ("markdown", "csv", "json"):
        formats.render(result, name)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@FAST
@given(doc=json_values)
def test_arbitrary_json_never_an_internal_error(doc, tmp_path_factory):
    _import_and_report(doc, tmp_path_factory.mktemp("fuzz"))


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value in the document (keys and list indexes)."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):  # a few elements of each list: enough, and fast
            out += _paths(v, (*prefix, i))
    return out


replacements = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6)
replacements |= st.lists(st.integers(), max_size=2) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)


@FAST
@given(data=st.data())
def test_mutated_real_documents_never_an_internal_error(real_document, data, tmp_path_factory):
    doc = copy.deepcopy(real_document)
    paths = _paths(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(replacements)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation changed the shape on this path
    _import_and_report(doc, tmp_path_factory.mktemp("fuzz"))


def test_a_wrong_type_is_named(real_document):
    doc = copy.deepcopy(real_document)
    doc["trials"][1]["payload_bytes"] = "2M"
    with pytest.raises(SshbenchError, match=r"'trials\[1\]\.payload_bytes' must be an integer, not str"):
        result_from_document(doc, "doc.json")
    assert result_from_document(real_document, "doc.json").trials


def test_a_wrong_target_kind_is_named(real_document):
    """Found by the fuzz test above: a list as the target's kind reached the bottleneck verdict (which
    reads the kind to know whether client and server shared the machine) as an internal error."""
    doc = copy.deepcopy(real_document)
    doc["target"]["kind"] = []
    with pytest.raises(SshbenchError, match=r"'target\.kind' must be a string"):
        result_from_document(doc, "doc.json")
    doc["target"] = {"kind": "private-openssh", "servers": {"dropbear": {"kind": 3}}}
    with pytest.raises(SshbenchError, match=r"'target\.servers\.dropbear\.kind' must be a string"):
        result_from_document(doc, "doc.json")


def test_an_unknown_trial_kind_is_named_and_a_known_one_loads_as_its_type(real_document):
    from sshbench.results import TrialKind

    loaded = result_from_document(real_document, "doc.json").trials
    assert {type(t.kind) for t in loaded} == {TrialKind}
    assert {t.kind for t in loaded} >= {TrialKind.TRANSFER, TrialKind.HANDSHAKE}
    doc = copy.deepcopy(real_document)
    doc["trials"][1]["kind"] = "upload"
    with pytest.raises(SshbenchError, match=r"'trials\[1\]\.kind' must be one of 'transfer', 'handshake', 'raw-tcp'"):
        result_from_document(doc, "doc.json")


def test_checked_lines_that_are_not_strings_are_named(real_document):
    """Found by the mutation test in CI: a null among the checked lines reached the answer's join."""
    doc = copy.deepcopy(real_document)
    doc["environment"]["conclusion_config_checked"] = "connected"
    doc["environment"]["conclusion_config_checked_lines"] = [None]
    with pytest.raises(SshbenchError, match=r"'environment\.conclusion_config_checked_lines\[0\]' must be a string"):
        result_from_document(doc, "doc.json")
    doc["environment"]["steady_omit_s"] = "0.3"
    doc["environment"]["conclusion_config_checked_lines"] = ["Ciphers aes128-gcm@openssh.com"]
    with pytest.raises(SshbenchError, match=r"'environment\.steady_omit_s' must be a number or null"):
        result_from_document(doc, "doc.json")


def test_a_build_sweep_list_of_the_wrong_shape_is_named(real_document):
    doc = copy.deepcopy(real_document)
    doc["environment"]["builds"] = {"ssh": [], "sshd": [], "pairings": [1]}
    with pytest.raises(SshbenchError, match=r"'environment\.builds\.pairings\[0\]' must be an object, not int"):
        result_from_document(doc, "doc.json")
    doc["environment"]["builds"] = {"sshd": [{"label": "10.0", "path": None}]}
    with pytest.raises(SshbenchError, match=r"'environment\.builds\.sshd\[0\]\.path' must be a string, not null"):
        result_from_document(doc, "doc.json")

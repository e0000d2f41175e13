"""The property tests cannot flake CI (issue 65): `make test` runs them under the derandomized `ci` profile
(tests/conftest.py), and `make fuzz` (scripts/fuzz.py) searches every file that uses hypothesis."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT


def _fuzz_script():
    spec = importlib.util.spec_from_file_location("fuzz_script", ROOT / "scripts" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_default_profile_draws_the_same_cases_every_run_and_keeps_no_database() -> None:
    assert settings.default.derandomize and settings.default.database is None and settings.default.deadline is None


drawn: list[int] = []


@given(st.integers())
def _draws(value: int) -> None:
    drawn.append(value)


def test_two_runs_of_a_property_test_draw_the_same_cases() -> None:
    _draws()
    first = list(drawn)
    drawn.clear()
    _draws()
    assert drawn == first and len(first) > 1


def test_the_fuzz_search_covers_every_property_test_file() -> None:
    found = _fuzz_script().property_test_files()
    assert "tests/test_sshlog.py" in found and "tests/store/test_import_fuzz.py" in found
    assert "tests/report/test_html_fuzz.py" in found and "tests/test_fuzz_profile.py" in found


def test_the_fuzz_help_says_how_a_found_case_becomes_a_fixed_example() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz.py"), "--help"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and "@example" in done.stdout and "--seconds" in done.stdout

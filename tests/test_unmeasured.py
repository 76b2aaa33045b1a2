"""The environment of the processes coverage does not measure again (tests/unmeasured.py)."""

from __future__ import annotations

import os

import pytest

from tests.unmeasured import unmeasured_env


def test_only_pytest_covs_variables_are_left_out() -> None:
    env = {"COV_CORE_SOURCE": "casework", "COV_CORE_DATAFILE": "/x/.coverage", "PATH": "/bin"}
    env |= {"COVERAGE_RCFILE": "/x/pyproject.toml", "MY_COV_CORE_NOTE": "kept"}
    assert unmeasured_env(env) == {
        "PATH": "/bin",
        "COVERAGE_RCFILE": "/x/pyproject.toml",
        "MY_COV_CORE_NOTE": "kept",
    }


def test_by_default_it_copies_this_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COV_CORE_SOURCE", "casework")
    monkeypatch.setenv("CASEWORK_SOME_SETTING", "1")
    env = unmeasured_env()
    assert "COV_CORE_SOURCE" not in env and env["CASEWORK_SOME_SETTING"] == "1"
    env["CASEWORK_SOME_SETTING"] = "2"  # a copy: the test's own environment is unchanged

    assert os.environ["CASEWORK_SOME_SETTING"] == "1"

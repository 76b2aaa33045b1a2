"""Hostile paths in cases and in the config: located errors, never a traceback, nothing written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from casework.cli import cli
from casework.dataset.catalogue import CatalogueError, CatalogueFiles
from casework.schema import Situation, StateRef
from tests.runner.builders import make_project
from tests.runner.test_env import ENV, SHOP, shop_case, write_state

SHA = "0" * 64


@pytest.fixture(autouse=True)
def _no_db(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)


def _project(tmp_path: Path, case: dict[str, Any], config: str = "") -> Path:
    root = tmp_path / "proj"
    make_project(root, [case], f"{config}[run]\n{ENV}\n")
    return root


def _invoke(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.chdir(root)
    return CliRunner().invoke(cli, list(args))


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if ".git" not in p.parts}


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_nul_byte_in_state_ref_path_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    case = shop_case("s-1", write_state(root, SHOP))
    case["situation"]["state_ref"]["path"] = "states/sh\x00op.json"
    _project(tmp_path, case)
    before = _files(root)
    args = ["dataset", "check", "refunds"]
    if command == "run":
        args = ["run", "refunds", "--agent", "python:tests.runner.env_samples:buy_direct"]
    result = _invoke(root, monkeypatch, *args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (
        "datasets/refunds/cases.jsonl:1: situation.state_ref.path: "
        "must not contain control characters ('\\x00')"
    ) in result.output
    assert "Traceback" not in result.output
    assert "\x00" not in result.output  # the NUL is shown escaped, never written to the terminal
    assert {p for p in _files(root) - before if ".casework" not in p.parts} == set()


@pytest.mark.parametrize(
    "path", ["states/a\x00b.json", "states/a\nb.json", "/etc/passwd", "a/../../x.json", ""]
)
def test_every_project_path_of_a_case_is_checked_by_the_model(path: str) -> None:
    with pytest.raises(ValidationError) as ref_error:
        StateRef(path=path, sha256=SHA)
    with pytest.raises(ValidationError) as tools_error:
        Situation.model_validate(
            {
                "goal": "g",
                "turns": [{"role": "user", "content": "hi"}],
                "tools_file": path,
                "tools_sha256": SHA,
            }
        )
    assert ref_error.value.errors()[0]["loc"] == ("path",)
    assert tools_error.value.errors()[0]["loc"] == ("tools_file",)


def test_a_nul_byte_in_tools_file_is_a_located_error_in_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    case = shop_case("s-1", write_state(root, SHOP))
    case["situation"]["tools_file"] = "agent/to\x00ols.json"
    case["situation"]["tools_sha256"] = SHA
    _project(tmp_path, case)
    result = _invoke(root, monkeypatch, "check", "refunds")
    assert result.exit_code == 1, result.output
    assert "datasets/refunds/cases.jsonl:1: situation.tools_file: must not contain" in result.output


def test_a_tools_file_linked_from_outside_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "agent").mkdir(parents=True)
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps([{"name": "t", "description": "d"}]), encoding="utf-8")
    (root / "agent" / "linked.json").symlink_to(outside)
    sha = hashlib.sha256(outside.read_bytes()).hexdigest()
    with pytest.raises(CatalogueError, match="leaves the project"):
        CatalogueFiles(root).load("agent/linked.json", sha)


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ("paths", "datasets"),
        ("paths", "runs"),
        ("agent", "tools"),
        ("privacy", "key_file"),
        ("models.judge", "script"),
    ],
)
def test_a_nul_byte_in_a_configured_path_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, key: str
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    case = shop_case("s-1", write_state(root, SHOP))
    _project(tmp_path, case, f'[{table}]\n{key} = "a\\u0000b"\n')
    result = _invoke(root, monkeypatch, "check", "refunds")
    assert result.exit_code == 1, result.output
    assert f"casework.toml:3: {table}.{key}:" in result.output
    assert "a path must not contain control characters" in result.output
    assert "Traceback" not in result.output

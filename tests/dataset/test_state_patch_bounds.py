"""A case's `state_patch` is bounded: ops counted, values added counted before each op applies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.dataset.state import PatchLimits, StateRefError, initial_state, load_state_ref
from casework.errors import UsageError
from casework.schema import Case, StateRef
from tests.runner.builders import make_project
from tests.runner.test_env import ENV, SHOP, shop_case, write_state

#: Each op copies the whole state into itself: the state doubles with every op.
SELF_COPY = [{"op": "copy", "from": "", "path": f"/copy{i}"} for i in range(25)]


@pytest.fixture(autouse=True)
def _no_db(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)


def _root(tmp_path: Path, patch: list[dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "proj"
    root.mkdir()
    case = shop_case("s-1", write_state(root, SHOP), patch=patch)
    make_project(root, [case], f"[run]\n{ENV}\n")
    return root, case


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_self_copying_patch_is_a_located_error_in_check_and_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    root, _ = _root(tmp_path, SELF_COPY)
    monkeypatch.chdir(root)
    args = ["dataset", "check", "refunds"]
    if command == "run":
        args = ["run", "refunds", "--agent", "python:tests.runner.env_samples:buy_direct"]
    started = time.monotonic()
    result = CliRunner().invoke(cli, args)
    assert time.monotonic() - started < 30
    assert result.exit_code == 1, result.output
    where = "s-1:" if command == "check" else "datasets/refunds/cases.jsonl: "
    assert f"{where}situation.state_patch[16]: the patch adds more than 1,000,000 values" in (
        result.output
    )
    assert "(raise the bound with CASEWORK_MAX_PATCH_VALUES)" in result.output
    assert not (root / "runs").exists()


def test_the_values_added_are_counted_before_the_op_applies(tmp_path: Path) -> None:
    root, case = _root(tmp_path, SELF_COPY[:6])
    loaded = Case.model_validate(case)
    limits = PatchLimits(max_values=12 * 63)  # SHOP holds 12 values: six copies add 12*63
    assert len(initial_state(root, loaded, limits=limits)) == 3 + 6
    with pytest.raises(StateRefError) as caught:
        initial_state(root, loaded, limits=PatchLimits(max_values=12 * 63 - 1))
    assert caught.value.problem.field == "situation.state_patch[5]"


def test_the_number_of_ops_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    patch = [{"op": "test", "path": "/next_order", "value": 1}] * 11
    root, case = _root(tmp_path, patch)
    loaded = Case.model_validate(case)
    assert initial_state(root, loaded)["next_order"] == 1
    monkeypatch.setenv("CASEWORK_MAX_PATCH_OPS", "10")
    with pytest.raises(StateRefError, match="holds 11 operations; at most 10 are applied") as e:
        initial_state(root, loaded)
    assert e.value.problem.field == "situation.state_patch"
    monkeypatch.setenv("CASEWORK_MAX_PATCH_OPS", "ten")
    with pytest.raises(UsageError, match="CASEWORK_MAX_PATCH_OPS: expected a whole number"):
        initial_state(root, loaded)


def test_a_move_leaves_the_shared_base_state_as_it_was(tmp_path: Path) -> None:
    root, case = _root(tmp_path, [{"op": "move", "from": "/items/A1", "path": "/moved"}])
    patched = initial_state(root, Case.model_validate(case))
    assert "A1" not in patched["items"] and patched["moved"]["name"] == "Mug"
    sha = case["situation"]["state_ref"]["sha256"]
    assert "A1" in load_state_ref(root, StateRef(path="states/shop.json", sha256=sha))["items"]

"""Tool environments in runs: isolation, golden replay, shared states and their diffs."""

from __future__ import annotations

import hashlib
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import load_dataset
from casework.dataset.state import StateRefError, initial_state, load_state_ref
from casework.errors import InputError
from casework.gate import check_project
from casework.project import Project, load_project
from casework.runner import RunRequest, run_agent
from casework.runner.environment import (
    FixtureEnvironment,
    GoldenActionError,
    final_state_of,
    replay_golden,
)
from casework.runner.fixtures import ToolSession
from casework.runner.records import read_log
from casework.runner.toolserver import ToolServer
from casework.schema import Case, GoldenAction, StateRef
from tests.runner import env_samples
from tests.runner.builders import make_project, refund_case

ENV = 'environments = { shop = "tests.runner.env_samples:Shop" }'
SHOP: dict[str, Any] = {
    "items": {
        "A1": {"name": "Mug", "price": 4.5, "stock": 10},
        "B2": {"name": "Plate", "price": 3.0, "stock": 5},
    },
    "next_order": 1,
    "orders": {},
}
BUY_2_MUGS: list[dict[str, Any]] = [
    {"name": "search_items", "arguments": {"query": "mug"}, "optional": True},
    {"name": "create_order", "arguments": {"sku": "A1", "qty": 2}},
]


def write_state(root: Path, state: dict[str, Any], name: str = "states/shop.json") -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(state).encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def shop_case(
    case_id: str,
    sha: str,
    *,
    text: str = "please buy 2 mug",
    golden: list[dict[str, Any]] | None = None,
    patch: list[dict[str, Any]] | None = None,
    compare: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "id": case_id,
        "slice": "shop",
        "split": "dev",
        "source": "hand",
        "situation": {
            "goal": "buy mugs",
            "turns": [{"role": "user", "content": text}],
            "state_ref": {"path": "states/shop.json", "sha256": sha},
            "state_patch": patch or [],
        },
        "label": {
            "outcome": "resolve",
            "required_tools": ["create_order"],
            "guideline_version": "g1",
        },
        "oracle": {
            "class": "state_assertion" if golden != [] else "human",
            "golden_actions": BUY_2_MUGS if golden is None else golden,
            "state_compare": compare or [],
        },
    }


def shop_project(
    tmp_path: Path, cases: list[dict[str, Any]] | None = None, state: dict[str, Any] = SHOP
) -> Project:
    root = tmp_path / "proj"
    root.mkdir(parents=True, exist_ok=True)
    sha = write_state(root, state)
    make_project(root, cases if cases is not None else [shop_case("s-1", sha)], f"[run]\n{ENV}\n")
    return load_project(root)


def sha_of(project: Project) -> str:
    return hashlib.sha256((project.root / "states/shop.json").read_bytes()).hexdigest()


def run(project: Project, agent: str, k: int = 2, concurrency: int = 4) -> Any:
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent=f"python:tests.runner.env_samples:{agent}",
            k=k,
            concurrency=concurrency,
            use_judge=False,
            store=False,
        ),
    )
    return read_log(summary.log)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path / "proj")


def golden_check(trial: Any) -> Any:
    return next(c for c in trial.verdict.checks if c.name == "golden_state")


def test_two_tool_paths_to_the_same_state_both_pass(tmp_path: Path) -> None:
    project = shop_project(tmp_path)
    long_path, short_path = run(project, "buy_search"), run(project, "buy_direct")
    assert [c.name for c in long_path.trials[0].trajectory.tool_calls] == [
        "search_items",
        "price",
        "create_order",
    ]
    assert [c.name for c in short_path.trials[0].trajectory.tool_calls] == ["create_order"]
    for log in (long_path, short_path):
        assert len(log.trials) == 2
        assert all(t.verdict.passed is True for t in log.trials)
        assert all(golden_check(t).status == "pass" for t in log.trials)


def test_right_reply_with_a_wrong_write_fails_naming_the_keys(tmp_path: Path) -> None:
    log = run(shop_project(tmp_path), "buy_wrong")
    for trial in log.trials:
        assert "Ordered O-1 for 2" in trial.trajectory.final_reply
        check = golden_check(trial)
        assert check.status == "fail" and trial.verdict.passed is False
        assert "/items/A1/stock" in check.evidence and "/orders/O-1/qty" in check.evidence


def test_optional_reads_may_fail_on_replay_and_be_skipped_by_the_agent(tmp_path: Path) -> None:
    golden = [
        {"name": "get_stock", "arguments": {"sku": "ZZ"}, "optional": True},  # fails: skipped
        *BUY_2_MUGS,
    ]
    project = shop_project(
        tmp_path, [shop_case("s-1", write_state(tmp_path / "proj", SHOP), golden=golden)]
    )
    state = load_state_ref(project.root, StateRef(path="states/shop.json", sha256=sha_of(project)))
    replay = replay_golden(
        env_samples.Shop, state, [GoldenAction.model_validate(a) for a in golden]
    )
    assert replay.skipped == (0,) and replay.state["orders"]["O-1"]["qty"] == 2
    assert all(t.verdict.passed for t in run(project, "buy_direct").trials)  # no read at all


def test_a_failing_required_golden_action_is_recorded_and_skipped_never_a_stopped_run(
    tmp_path: Path,
) -> None:
    bad = [{"name": "create_order", "arguments": {"sku": "A1", "qty": 99}}]
    project = shop_project(
        tmp_path, [shop_case("s-1", write_state(tmp_path / "proj", SHOP), golden=bad)]
    )
    log = run(project, "buy_direct")
    (failure,) = log.header.golden_failures
    assert (failure.case_id, failure.index, failure.tool) == ("s-1", 0, "create_order")
    assert "only 10" in failure.warning()
    # Scored by casework's checks, the case's golden-state check fails closed: never a pass.
    for trial in log.trials:
        checks = {c.name: c.status for c in trial.verdict.checks}
        assert checks["golden_state"] == "undetermined" and trial.verdict.passed is not True


def test_replaying_golden_actions_outside_a_run_still_names_the_failing_one(
    tmp_path: Path,
) -> None:
    bad = [
        GoldenAction.model_validate({"name": "create_order", "arguments": {"sku": "A1", "qty": 99}})
    ]
    with pytest.raises(GoldenActionError, match=r"golden_actions\[0\] \(create_order\).*only 10"):
        replay_golden(env_samples.Shop, SHOP, bad, case_id="s-1")


def test_malformed_golden_actions_are_located_errors(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    case = shop_case("s-1", write_state(root, SHOP), golden=[{"name": "create order!", "args": {}}])
    project = shop_project(tmp_path, [case])
    with pytest.raises(InputError) as caught:
        load_dataset(project, "refunds")
    text = str(caught.value)
    assert "cases.jsonl:1: oracle.golden_actions.0.name" in text
    assert "oracle.golden_actions.0.args" in text


def test_trials_are_isolated_also_when_concurrent(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    sha = write_state(root, SHOP)
    project = shop_project(tmp_path, [shop_case(f"s-{i}", sha, golden=[]) for i in range(3)])
    log = run(project, "racer", k=4, concurrency=8)
    assert len(log.trials) == 12
    # Every trial saw the shared stock untouched, got the first order id, and its own write.
    assert {t.trajectory.final_reply for t in log.trials} == {"10 O-1 9"}
    state = load_state_ref(project.root, StateRef(path="states/shop.json", sha256=sha))
    assert state["items"]["A1"]["stock"] == 10 and state["orders"] == {}


def test_the_log_keeps_the_diff_and_the_final_state_is_rebuilt_from_it(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    sha = write_state(root, SHOP)
    patch = [{"op": "replace", "path": "/items/A1/price", "value": 5.0}]
    project = shop_project(tmp_path, [shop_case("s-1", sha, patch=patch)])
    log = run(project, "buy_search", k=1)
    trajectory = log.trials[0].trajectory
    assert trajectory.final_state is None
    assert trajectory.state_diff == [
        {"op": "replace", "path": "/items/A1/stock", "value": 8},
        {"op": "replace", "path": "/next_order", "value": 2},
        {"op": "add", "path": "/orders/O-1", "value": {"qty": 2, "sku": "A1", "total": 10.0}},
    ]
    case = Case.model_validate(shop_case("s-1", sha, patch=patch))
    rebuilt = final_state_of(project.root, case, trajectory)
    expected = json.loads(json.dumps(SHOP))
    expected["items"]["A1"].update(price=5.0, stock=8)
    expected.update(next_order=2, orders={"O-1": {"sku": "A1", "qty": 2, "total": 10.0}})
    assert rebuilt == expected


def test_run_log_size_follows_the_diff_not_a_large_shared_state(tmp_path: Path) -> None:
    big = {**SHOP, "catalogue": {f"sku-{i:06d}": {"text": "x" * 90} for i in range(12_000)}}
    root = tmp_path / "proj"
    sha = write_state(root, big)
    state_bytes = (root / "states/shop.json").stat().st_size
    assert state_bytes > 1_000_000
    project = shop_project(tmp_path, [shop_case(f"s-{i}", sha) for i in range(4)], state=big)
    log_file = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.env_samples:buy_search",
            k=3,
            use_judge=False,
            store=False,
        ),
    ).log
    trials = read_log(log_file).trials
    assert len(trials) == 12 and all(t.verdict.passed for t in trials)
    per_trial = log_file.stat().st_size / len(trials)
    assert per_trial < 5_000, per_trial  # a whole state per trial would be > 1 MB each
    assert log_file.stat().st_size < state_bytes / 50


def test_state_file_hash_is_part_of_the_version(tmp_path: Path) -> None:
    project = shop_project(tmp_path)
    before = load_dataset(project, "refunds").hash
    changed = {**SHOP, "next_order": 7}
    new_sha = write_state(project.root, changed)
    # The file changed under its pin: check names the new hash, the run refuses to start.
    report = check_project(project, "refunds")
    (finding,) = [f for f in report.findings if f.check == "state_ref"]
    assert finding.subject == "situation.state_ref.sha256" and new_sha in finding.message
    with pytest.raises(StateRefError, match="changed since the case pinned it"):
        run(project, "buy_direct")
    # Updating the pin is a change of the case line, hence a new dataset version.
    make_project(project.root, [shop_case("s-1", new_sha)], f"[run]\n{ENV}\n")
    after = load_dataset(project, "refunds").hash
    assert after != before
    assert check_project(project, "refunds").ok


def test_check_reports_a_patch_that_does_not_apply(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    patch = [{"op": "replace", "path": "/items/ZZ/price", "value": 1}]
    project = shop_project(tmp_path, [shop_case("s-1", write_state(root, SHOP), patch=patch)])
    (finding,) = [f for f in check_project(project, "refunds").findings if f.check == "state_ref"]
    assert finding.case_id == "s-1" and finding.subject == "situation.state_patch[0]"
    assert "does not apply" in finding.message


def test_a_state_ref_leaving_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(SHOP), encoding="utf-8")
    sha = hashlib.sha256(outside.read_bytes()).hexdigest()
    with pytest.raises(ValueError, match=r"must not contain '\.\.'"):
        StateRef(path="../outside.json", sha256=sha)
    with pytest.raises(ValueError, match="relative to the project root"):
        StateRef(path=str(outside), sha256=sha)
    (root / "states").mkdir(parents=True)
    (root / "states" / "link.json").symlink_to(outside)
    with pytest.raises(StateRefError, match="leaves the project"):
        load_state_ref(root, StateRef(path="states/link.json", sha256=sha))


def test_declared_tools_check_reads_the_environments_declarations(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    sha = write_state(root, SHOP)
    golden = [*BUY_2_MUGS, {"name": "refund_everything", "arguments": {}}]
    unknown_arg = [{"name": "create_order", "arguments": {"sku": "A1", "colour": "red"}}]
    project = shop_project(
        tmp_path,
        [
            shop_case("s-1", sha),
            shop_case("s-2", sha, golden=golden),
            shop_case("s-3", sha, golden=unknown_arg),
        ],
    )
    findings = {(f.case_id, f.check, f.subject) for f in check_project(project, "refunds").findings}
    # create_order is not in agent/tools.json, but the slice's environment declares it.
    assert findings == {
        ("s-2", "undeclared_tool", "refund_everything"),
        ("s-3", "unknown_argument", "create_order.colour"),
    }


def test_the_agent_gets_the_environments_tools_and_never_the_golden_actions(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    golden = [
        {"name": "search_items", "arguments": {"query": "SECRET-GOLDEN"}, "optional": True},
        *BUY_2_MUGS,
    ]
    project = shop_project(tmp_path, [shop_case("s-1", write_state(root, SHOP), golden=golden)])
    env_samples.RECEIVED.clear()
    run(project, "spy", k=1)
    (received,) = env_samples.RECEIVED
    assert {t["name"] for t in received["tools"]} == {
        "create_order",
        "get_stock",
        "price",
        "search_items",
    }
    text = json.dumps(received)
    assert "SECRET-GOLDEN" not in text and "golden" not in text and "state_ref" not in text


def test_the_tool_server_serves_an_environment_and_records_every_call() -> None:
    env = env_samples.Shop()
    session = ToolSession([], json.loads(json.dumps(SHOP)), environment=env)
    with ToolServer() as server:
        _, url = server.register(session)
        body = json.dumps({"sku": "B2", "qty": 2}).encode()
        req = urllib.request.Request(f"{url}/tools/create_order", data=body, method="POST")
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.loads(resp.read()) == {"result": {"order_id": "O-1"}}
        req = urllib.request.Request(
            f"{url}/tools/create_order",
            data=json.dumps({"sku": "B2", "qty": 9}).encode(),
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.loads(resp.read()) == {"error": "only 3 of B2 in stock"}
    calls, state = session.snapshot()
    assert [(c.name, c.arguments, c.error) for c in calls] == [
        ("create_order", {"sku": "B2", "qty": 2}, None),
        ("create_order", {"sku": "B2", "qty": 9}, "only 3 of B2 in stock"),
    ]
    assert calls[0].result == {"order_id": "O-1"} and state["items"]["B2"]["stock"] == 3
    assert SHOP["items"]["B2"]["stock"] == 5  # the session worked on its own copy


def test_static_fixtures_are_the_simplest_environment_for_golden_replay(tmp_path: Path) -> None:
    case = refund_case("r-1", "o1", 12.0)
    case["oracle"]["golden_actions"] = [
        {"name": "get_order", "arguments": {"order_id": "o1"}, "optional": True},
        {"name": "issue_refund", "arguments": {"order_id": "o1", "amount": 12.0}},
    ]
    parsed = Case.model_validate(case)
    replay = replay_golden(
        lambda: FixtureEnvironment(parsed.situation.fixtures),
        parsed.situation.state,
        parsed.oracle.golden_actions,
    )
    assert replay.state["orders"]["o1"]["refunded"] == 12.0
    root = tmp_path / "proj"
    make_project(root, [case])
    summary = run_agent(
        load_project(root),
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:good",
            k=2,
            use_judge=False,
            store=False,
        ),
    )
    trials = read_log(summary.log).trials
    assert all(golden_check(t).status == "pass" for t in trials)
    assert all(t.trajectory.final_state is not None for t in trials)  # no env, no ref: as before


def test_a_sqlite_state_ref_reads_as_tables_of_rows_and_takes_a_patch(tmp_path: Path) -> None:
    import sqlite3

    root = tmp_path / "proj"
    (root / "states").mkdir(parents=True)
    db = root / "states" / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE items (sku TEXT PRIMARY KEY, price REAL, stock INTEGER)")
        conn.executemany("INSERT INTO items VALUES (?, ?, ?)", [("A1", 4.5, 10), ("B2", 3.0, 5)])
    conn.close()
    sha = hashlib.sha256(db.read_bytes()).hexdigest()
    case = shop_case(
        "s-1", sha, golden=[], patch=[{"op": "replace", "path": "/items/1/stock", "value": 0}]
    )
    case["situation"]["state_ref"]["path"] = "states/shop.sqlite"
    state = initial_state(root, Case.model_validate(case))
    assert state == {
        "items": [
            {"sku": "A1", "price": 4.5, "stock": 10},
            {"sku": "B2", "price": 3.0, "stock": 0},
        ]
    }
    # The cached file content is untouched by the case's patch.
    ref = StateRef(path="states/shop.sqlite", sha256=sha)
    assert load_state_ref(root, ref)["items"][1]["stock"] == 5


def test_casework_check_fails_on_a_changed_state_file(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from casework.cli import cli

    project = shop_project(tmp_path)
    assert CliRunner().invoke(cli, ["dataset", "check", "refunds"]).exit_code == 0
    write_state(project.root, {**SHOP, "next_order": 2})
    result = CliRunner().invoke(cli, ["dataset", "check", "refunds"])
    assert result.exit_code == 1
    assert (
        "s-1:situation.state_ref.sha256: states/shop.json changed since the case pinned it"
        in result.output
    )

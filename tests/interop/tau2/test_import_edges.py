"""τ²-bench import at its edges, on a small hand-made airline domain (`tests/interop/data/tau2`).

What the published data proves (every task of the installed wheel imports and checks, the
scenario, golden actions and facts as published, τ²'s own tool declarations) is tested on the
published data (`test_import_published.py`, `test_tools_static.py`); these are the mapping rules
the published tasks do not exercise (refuse/escalate readings, conversation prefixes, state
patches, tools.json, two revisions, located errors).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import diff_versions
from casework.errors import InputError
from casework.interop.tau2 import Tau2Options, cases_from_tau2, import_tau2, read_tau2_domain
from casework.project import load_project
from casework.schema import Case

DOMAIN = Path(__file__).parents[1] / "data" / "tau2" / "airline"


def _cases(folder: Path = DOMAIN) -> dict[str, Case]:
    domain = read_tau2_domain(folder, "airline")
    db = json.loads((folder / "db.json").read_text(encoding="utf-8"))
    ref = {"path": "states/x.json", "sha256": "0" * 64}
    cases, _ = cases_from_tau2(domain, Tau2Options(), db, ref)
    return {c.id: c for c in cases}


def test_no_write_and_a_policy_reason_refuses_or_escalates_with_writes_forbidden() -> None:
    case = _cases()["airline-1"]
    assert case.label is not None
    assert (case.label.outcome, case.label.acceptable_outcomes) == ("refuse", ["escalate"])
    assert sorted(t.name for t in case.label.forbidden_tools) == [
        "book_reservation",
        "cancel_reservation",
    ]
    # agent_data is τ²'s deep update of the database: a JSON Patch on the shared state
    patch = [op.model_dump(by_alias=True, exclude_none=True) for op in case.situation.state_patch]
    assert patch == [{"op": "add", "path": "/users/u-rita/balance", "value": 0}]
    assert case.situation.user_scenario is not None
    assert case.situation.user_scenario.persona == ""  # null persona


def test_a_transfer_action_escalates_and_a_string_instruction_is_the_goal() -> None:
    case = _cases()["airline-2"]
    assert case.split == "holdout"  # test -> holdout
    assert case.label is not None and case.label.outcome == "escalate"
    assert case.label.acceptable_outcomes == []  # no policy reason: refusing is not right
    assert case.situation.user_scenario is not None
    assert case.situation.goal.startswith("You demand 500 in compensation")
    assert case.label.matched_facts == [] and case.label.nl_assertions == []


def test_message_history_becomes_the_conversation_prefix() -> None:
    case = _cases()["airline-3"]
    assert [(t.role, t.content) for t in case.situation.turns] == [
        ("user", "Hello, I need to cancel a trip."),
        ("assistant", "Sure, which reservation?"),
    ]
    assert case.label is not None and case.label.outcome == "resolve"


def _project(root: Path, tools: str = "agent/tools.json") -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(f'name = "t"\n[agent]\ntools = "{tools}"\n', "utf-8")
    return root


def _revise(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tasks = json.loads(json.dumps(tasks))
    tasks[0]["evaluation_criteria"]["actions"][1]["arguments"]["passengers"] = 2
    tasks[2]["user_scenario"]["persona"] = "Calm now."
    return tasks


def test_two_revisions_release_two_versions_whose_diff_is_the_changed_tasks(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p")
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    project = load_project(root)
    first = import_tau2(project, folder, "air", Tau2Options())
    tasks = json.loads((folder / "tasks.json").read_text("utf-8"))
    (folder / "tasks.json").write_text(json.dumps(_revise(tasks)), "utf-8")
    second = import_tau2(project, folder, "air", Tau2Options())
    assert first.version is not None and second.version is not None
    assert (first.version.number, second.version.number) == (1, 2)
    diff = diff_versions(project, "air", "1", "2").diff
    assert diff.added == [] and diff.removed == []
    assert sorted(c.id for c in diff.changed) == ["airline-0", "airline-2"]
    again = import_tau2(project, folder, "air", Tau2Options())
    assert again.version is None  # the same revision again changes nothing
    # a task dropped from the file is a removed case
    (folder / "tasks.json").write_text(json.dumps(_revise(tasks)[:3]), "utf-8")
    third = import_tau2(project, folder, "air", Tau2Options())
    assert third.version is not None
    assert diff_versions(project, "air", "2", "3").diff.removed == ["airline-3"]


def test_bad_tasks_are_located_by_json_pointer_and_nothing_is_written(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    tasks = json.loads((folder / "tasks.json").read_text("utf-8"))
    del tasks[0]["user_scenario"]["instructions"]["reason_for_call"]
    tasks[1]["evaluation_criteria"]["actions"][0] = {"arguments": {}}
    tasks[2]["evaluation_criteria"]["communicate_info"] = [3]
    tasks[3]["id"] = True
    (folder / "tasks.json").write_text(json.dumps(tasks), "utf-8")
    with pytest.raises(InputError) as info:
        import_tau2(load_project(root), folder, "air", Tau2Options())
    text = str(info.value)
    shown = f"{folder}/tasks.json"
    assert f"{shown}: /0/user_scenario/instructions/reason_for_call: every task's user" in text
    assert f"{shown}: /1/evaluation_criteria/actions/0: an action needs a name" in text
    assert f"{shown}: /2/evaluation_criteria/communicate_info: must be a list of strings" in text
    assert f"{shown}: /3/id: every task needs an id" in text
    assert not (root / "datasets").exists() and not (root / "states").exists()


def test_a_reward_basis_part_that_is_not_a_name_is_located(tmp_path: Path) -> None:
    # Found by the reader fuzz: a list among the parts ended in TypeError (unhashable), a traceback.
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    tasks = json.loads((folder / "tasks.json").read_text("utf-8"))
    tasks[1]["evaluation_criteria"]["reward_basis"] = ["DB", []]
    (folder / "tasks.json").write_text(json.dumps(tasks), "utf-8")
    with pytest.raises(InputError, match=r"/1/evaluation_criteria/reward_basis/1: must be one of"):
        _cases(folder)


def test_a_task_in_two_splits_and_a_missing_tasks_file_are_errors(tmp_path: Path) -> None:
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    (folder / "split_tasks.json").write_text('{"train": ["0"], "test": ["0"]}', "utf-8")
    with pytest.raises(InputError, match=r"/test/0: task is in two splits"):
        read_tau2_domain(folder, "airline")
    (folder / "tasks.json").unlink()
    with pytest.raises(InputError, match=r"airline/tasks.json: file not found"):
        read_tau2_domain(folder, "airline")


def test_a_tools_json_wins_and_carries_tool_types(tmp_path: Path) -> None:
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    decls = [
        {"name": "lookup_plan", "description": "Read a plan.", "parameters": {}},
        {"type": "function", "function": {"name": "refund", "parameters": {}}, "tool_type": "x"},
        {"name": "apply_credit", "parameters": {}, "tool_type": "read"},
    ]
    (folder / "tools.json").write_text(json.dumps(decls), "utf-8")
    domain = read_tau2_domain(folder, "airline")
    assert domain.tools_source == "tools.json"
    kinds = {n: t.kind for n, t in domain.tools.items()}
    assert kinds == {"lookup_plan": "read", "refund": "write", "apply_credit": "read"}


def test_split_file_option_overrides_the_domain_split_file(tmp_path: Path) -> None:
    split = tmp_path / "s.json"
    split.write_text('{"test": ["0", "1"]}', "utf-8")
    domain = read_tau2_domain(DOMAIN, "airline", split, "s.json")
    assert domain.splits == {"0": "holdout", "1": "holdout"}


def test_a_transfer_with_a_policy_reason_and_no_write_accepts_refuse_too(tmp_path: Path) -> None:
    folder = tmp_path / "airline"
    shutil.copytree(DOMAIN, folder)
    tasks = json.loads((folder / "tasks.json").read_text("utf-8"))
    tasks[2]["description"]["relevant_policies"] = "Compensation is not allowed for delays."
    tasks[0]["evaluation_criteria"]["actions"].append(
        {"name": "transfer_to_human_agents", "arguments": {"summary": "x"}}
    )
    (folder / "tasks.json").write_text(json.dumps(tasks), "utf-8")
    cases = _cases(folder)
    both = cases["airline-2"].label
    assert both is not None
    assert (both.outcome, both.acceptable_outcomes) == ("escalate", ["refuse"])
    assert sorted(t.name for t in both.forbidden_tools) == [
        "book_reservation",
        "cancel_reservation",
    ]
    wrote = cases["airline-0"].label  # a write, then a transfer: escalate only, nothing forbidden
    assert wrote is not None
    assert (wrote.outcome, wrote.acceptable_outcomes, wrote.forbidden_tools) == ("escalate", [], [])


def test_ids_shared_with_another_slice_are_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p")
    project = load_project(root)
    import_tau2(project, DOMAIN, "air", Tau2Options(slice="first"))
    before = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    with pytest.raises(InputError, match=r"id: case id is in another slice"):
        import_tau2(project, DOMAIN, "air", Tau2Options(slice="second"))
    after = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    assert after == before  # no second state or catalogue copy, no release

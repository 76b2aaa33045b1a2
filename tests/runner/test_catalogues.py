"""Per-case tool catalogues: the agent is offered the case's set; `casework dataset check` uses it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from casework.errors import InputErrors, UsageError
from casework.gate import check_project
from casework.project import Project, load_project
from casework.runner import RunRequest, Tools, load_run, run_agent
from casework.schema import AgentInput, Trajectory
from tests.runner.builders import escalate_case, make_project, refund_case

#: (tool names in the input, names the facade lists), one per trial.
OFFERED: list[tuple[list[str], list[str]]] = []
SPY = "python:tests.runner.test_catalogues:lists_its_tools"

CATALOGUE = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def lists_its_tools(request: AgentInput, tools: Tools) -> Trajectory:
    """Records the tools it was offered, then asks a question."""
    OFFERED.append(([t.name for t in request.tools], tools.names()))
    return Trajectory(final_reply="Which city do you mean?", outcome="clarify")


def clarify_case(case_id: str, **situation: Any) -> dict[str, Any]:
    data = escalate_case(case_id)
    data["slice"] = "when2call"
    data["situation"] = {"goal": "weather", "turns": [{"role": "user", "content": "weather?"}]}
    data["situation"].update(situation)
    data["label"] = {"outcome": "clarify", "guideline_version": "g1"}
    return data


def write_catalogue(root: Path, name: str = "catalogues/weather.json") -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(CATALOGUE).encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def setup(tmp_path: Path, cases: list[dict[str, Any]]) -> Project:
    return load_project(make_project(tmp_path / "proj", cases))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    OFFERED.clear()


def findings(project: Project) -> list[tuple[str, str | None, str, str]]:
    report = check_project(project, "refunds")
    return [(f.check, f.case_id, f.subject, f.message) for f in report.findings]


def test_the_agent_is_offered_only_the_case_s_tools(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    digest = write_catalogue(root)
    project = setup(
        tmp_path,
        [
            clarify_case("w-1", tools=["get_order"]),
            clarify_case("w-2", tools=[]),
            clarify_case("w-3", tools_file="catalogues/weather.json", tools_sha256=digest),
            clarify_case("w-4"),
        ],
    )
    assert findings(project) == []
    summary = run_agent(
        project,
        RunRequest(dataset="refunds", agent=SPY, k=1, concurrency=1, use_judge=False, store=False),
    )
    ALL = ["escalate_to_human", "get_order", "issue_refund"]
    assert OFFERED == [
        (["get_order"], ["get_order"]),
        ([], []),
        (["get_weather"], ["get_weather"]),
        (ALL, ALL),
    ]
    run = load_run(project, summary.header.run_id)
    assert all(t.verdict.passed for t in run.trials)


def test_a_required_tool_outside_the_case_s_catalogue_is_a_check_error(tmp_path: Path) -> None:
    case = refund_case("r-1", "o1", 12.0)
    case["situation"]["tools"] = ["get_order"]
    project = setup(tmp_path, [case])
    found = findings(project)
    assert (
        "undeclared_tool",
        "r-1",
        "issue_refund",
        "required tool is not in the case's tool catalogue (situation.tools / tools_file)",
    ) in found
    assert any(f[0] == "undeclared_tool" and "fixture answers" in f[3] for f in found)


def test_an_unknown_offered_tool_fails_check_and_run(tmp_path: Path) -> None:
    project = setup(tmp_path, [clarify_case("w-1", tools=["get_order", "book_flight"])])
    assert findings(project) == [
        (
            "undeclared_tool",
            "w-1",
            "book_flight",
            "situation.tools offers book_flight, not declared by the agent",
        )
    ]
    with pytest.raises(UsageError, match=r"case w-1: situation\.tools offers book_flight"):
        run_agent(project, RunRequest(dataset="refunds", agent=SPY, k=1, store=False))
    assert OFFERED == []


def test_a_tools_file_is_pinned_by_its_hash_and_must_stay_inside_the_project(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    digest = write_catalogue(root)
    project = setup(
        tmp_path,
        [
            clarify_case("w-1", tools_file="catalogues/weather.json", tools_sha256="0" * 64),
            clarify_case("w-2", tools_file="catalogues/none.json", tools_sha256=digest),
        ],
    )
    found = {(f[0], f[1]): f[3] for f in findings(project)}
    assert found[("tools_file_changed", "w-1")].endswith(f"update tools_sha256 to {digest}")
    assert found[("tools_file", "w-2")] == "tools_file catalogues/none.json not found"
    with pytest.raises(UsageError, match="tools_file changed"):
        run_agent(project, RunRequest(dataset="refunds", agent=SPY, k=1, store=False))
    # A path out of the project is refused when the case is read: located, before any check.
    outside = setup(
        tmp_path / "again",
        [clarify_case("w-3", tools_file="../outside.json", tools_sha256=digest)],
    )
    with pytest.raises(InputErrors) as refused:
        findings(outside)
    assert "cases.jsonl:1: situation.tools_file: must not contain '..'" in str(refused.value)


def test_tools_file_and_its_hash_go_together() -> None:
    from pydantic import ValidationError

    from casework.schema import Situation

    with pytest.raises(ValidationError, match="tools_file and tools_sha256 go together"):
        Situation.model_validate(
            {"goal": "g", "turns": [{"role": "user", "content": "x"}], "tools_file": "a.json"}
        )


def test_an_empty_offered_set_survives_the_canonical_form() -> None:
    from casework.dataset.jsonl import canonical_line
    from casework.schema import Case

    case = Case.model_validate(clarify_case("w-1", tools=[]))
    line = canonical_line(case)
    assert '"tools": []' in line
    assert Case.model_validate_json(line).situation.tools == []
    assert '"tools"' not in canonical_line(Case.model_validate(clarify_case("w-2")))


def test_a_fixture_of_a_tool_the_case_does_not_offer_stops_the_run(tmp_path: Path) -> None:
    case = refund_case("r-1", "o1", 12.0)
    case["situation"]["tools"] = ["get_order"]
    case["label"]["required_tools"] = ["get_order"]
    project = setup(tmp_path, [case])
    assert [f[:3] for f in findings(project)] == [("undeclared_tool", "r-1", "issue_refund")]
    with pytest.raises(UsageError, match="a fixture answers issue_refund, which the case does not"):
        run_agent(project, RunRequest(dataset="refunds", agent=SPY, k=1, store=False))
    assert OFFERED == []

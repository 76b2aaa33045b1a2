"""Trajectory reviews (step-level, double review, adjudication) and the simulated user's audit,
on the bundled bookings example (`examples/bookings`: a τ²-style case with a simulated user)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from casework.agreement.kappa import cohen_kappa
from casework.cli import cli
from casework.dataset import load_dataset
from casework.errors import DecisionConflict, InputError, UsageError
from casework.gate import gate_run
from casework.project import Project, load_project
from casework.review import add_items, decide_task, list_tasks
from casework.review._taxonomy import TAXONOMY_FILE, load_taxonomy
from casework.review._trajectory import trajectory_items
from casework.review._trajectory_agreement import step_ratings, trajectory_agreement
from casework.runner import RunRequest, run_agent
from casework.runner.records import LoadedRun, read_log
from casework.runner.sim_audit import (
    SettledReview,
    audit_cases,
    scenario_digest,
    settled_reviews,
    simulator_findings,
)
from casework.schema import Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bookings"
CASES = Path("datasets/bookings/cases.jsonl")


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "bookings"
    shutil.copytree(
        EXAMPLE, root, ignore=shutil.ignore_patterns("runs", ".casework", "__pycache__")
    )
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    monkeypatch.chdir(root)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    monkeypatch.setattr(sys, "path", list(sys.path))
    # Other examples have `agents` and `llm` packages too: set theirs aside, and drop ours after.
    ours = ("env", "agents", "llm")
    for name in [n for n in sys.modules if n.split(".")[0] in ours]:
        monkeypatch.delitem(sys.modules, name)
    yield root
    for name in [n for n in sys.modules if n.split(".")[0] in ours]:
        del sys.modules[name]


def _run(project: Project, k: int = 2) -> LoadedRun:
    summary = run_agent(
        project,
        RunRequest(dataset="bookings", agent="python:agents.bookings_agent:good", k=k),
    )
    return read_log(summary.log)


def _set_known_info(root: Path, text: str) -> None:
    lines = []
    for raw in (root / CASES).read_text(encoding="utf-8").splitlines():
        row = json.loads(raw)
        if row["id"] == "bk-conversation":
            row["situation"]["user_scenario"]["known_info"] = text
        lines.append(json.dumps(row))
    (root / CASES).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _release(message: str) -> None:
    result = CliRunner().invoke(cli, ["dataset", "release", "bookings", "-m", message])
    assert result.exit_code == 0, result.output


FAIL = {"step": 1, "category": "no-verification", "severity": "major", "fault": "agent"}


def test_reviewers_mark_steps_blind_and_a_disagreement_goes_to_an_adjudicator(copy: Path) -> None:
    project = load_project(copy)
    run = _run(project)
    items = trajectory_items(project, run.header.run_id, 6, ["ana", "ben"], overlap=0.5, seed=3)
    trials = {i.subject.rpartition("#")[0] for i in items}
    assert len(trials) == 6 and len(items) == 9  # half the trials doubled
    # stratified by slice and verdict, and the page never carries the verdict
    for item in items:
        text = json.dumps(item.payload)
        assert "verdict" not in text and '"passed"' not in text and "golden" not in text
        assert item.payload["steps"] and item.payload["taxonomy"] == "mast-1"
    conv = next(i for i in items if i.payload["case_id"] == "bk-conversation")
    roles = [s["role"] for s in conv.payload["steps"]]
    assert roles[0] == "user" and "tool_call" in roles and conv.payload["simulator"]["seed"]
    call = next(s for s in conv.payload["steps"] if s["role"] == "tool_call")
    assert call["arguments"] and "result" in call
    add_items(project, items)
    tasks = list_tasks(project, kind="trajectory")
    doubled: dict[str, list[int]] = {}
    for t in tasks:
        doubled.setdefault(t.subject.rpartition("#")[0], []).append(t.id)
    pairs = [ids for ids in doubled.values() if len(ids) == 2]
    first, second = pairs[0], pairs[1]
    by_id = {t.id: t for t in tasks}
    who = {i: by_id[i].payload["reviewer"] for i in first + second}
    # each reviewer decides their own item only
    with pytest.raises(UsageError, match="each reviewer answers their own"):
        decide_task(project, first[0], "none", reviewer=who[first[1]])
    with pytest.raises(UsageError, match="category: one of the taxonomy"):
        decide_task(
            project, first[0], "fail", reviewer=who[first[0]], data={**FAIL, "category": "x"}
        )
    # agree within tolerance 1 (steps 1 and 2): no adjudication
    decide_task(project, first[0], "fail", reviewer=who[first[0]], data=FAIL)
    decide_task(project, first[1], "fail", reviewer=who[first[1]], data={**FAIL, "step": 2})
    # disagree: none against a failing step → an adjudication item for a third person
    decide_task(project, second[0], "none", reviewer=who[second[0]])
    decide_task(project, second[1], "fail", reviewer=who[second[1]], data=FAIL)
    adjudications = [
        t for t in list_tasks(project, kind="trajectory") if t.payload["role"] == "adjudicate"
    ]
    assert len(adjudications) == 1
    adj = adjudications[0]
    assert [r["decision"] for r in adj.payload["reviews"]] == ["none", "fail"]
    with pytest.raises(UsageError, match="another person adjudicates"):
        decide_task(project, adj.id, "none", reviewer=who[second[0]])
    decide_task(project, adj.id, "fail", reviewer="cleo", data={**FAIL, "fault": "simulated_user"})
    with pytest.raises(DecisionConflict):
        decide_task(project, adj.id, "none", reviewer="dan")
    settled = {s.trial: s for s in settled_reviews(list_tasks(project, kind="trajectory"))}
    assert settled[by_id[second[0]].subject.rpartition("#")[0]].blames_simulator
    assert settled[by_id[first[0]].subject.rpartition("#")[0]].data["step"] == 1
    # step-level agreement: steps 1~2 agree at tolerance 1, not at 0; none vs 1 never
    found = trajectory_agreement(list_tasks(project, kind="trajectory"), tolerance=1)
    assert found.pairs == 2
    assert sorted(zip(*found.step_ratings, strict=True)) == [("1", "1"), ("none", "1")]
    assert found.step.p_o == 0.5


def test_frozen_cases_are_drawn_only_when_asked(copy: Path) -> None:
    lines = []
    for raw in (copy / CASES).read_text(encoding="utf-8").splitlines():
        row = json.loads(raw)
        row["frozen"] = row["id"] == "bk-cancel"
        lines.append(json.dumps(row))
    (copy / CASES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = load_project(copy)
    run = _run(project, k=1)
    drawn = trajectory_items(project, run.header.run_id, 10, ["ana"], overlap=0)
    assert "bk-cancel" not in {i.payload["case_id"] for i in drawn} and len(drawn) == 4
    with_frozen = trajectory_items(
        project, run.header.run_id, 10, ["ana"], overlap=0, include_frozen=True
    )
    assert {i.payload["frozen"] for i in with_frozen if i.payload["case_id"] == "bk-cancel"} == {
        True
    }


@pytest.mark.parametrize(
    ("a", "b", "tolerance"),
    [
        (
            ["1", "none", "3", "5", "none", "2", "7", "none"],
            ["2", "none", "3", "none", "4", "2", "9", "none"],
            1,
        ),
        (["0", "1", "2", "none", "none", "4"], ["0", "2", "2", "none", "1", "6"], 0),
        (["0", "1", "2", "none", "none", "4"], ["0", "2", "2", "none", "1", "6"], 2),
    ],
)
def test_step_kappa_is_cohens_on_tolerant_step_ratings(
    a: list[str], b: list[str], tolerance: int
) -> None:
    def marked(v: str) -> dict[str, Any]:
        return {} if v == "none" else {"step": int(v)}

    sa, sb = step_ratings([(marked(x), marked(y)) for x, y in zip(a, b, strict=True)], tolerance)
    ours = cohen_kappa(sa, sb).kappa
    assert ours == pytest.approx(cohen_kappa_score(sa, sb), abs=1e-12)
    if tolerance == 1 and a[0] == "1":
        # by hand: after tolerance, b reads 1,none,3,none,4,2,9,none → 5 of 8 agree;
        # categories 1,2,3,4,5,7,9,none: p_e = sum of products of the raters' shares
        assert sb == ["1", "none", "3", "none", "4", "2", "9", "none"]
        p_o = 5 / 8
        share_a = {"1": 1, "none": 3, "3": 1, "5": 1, "2": 1, "7": 1}
        share_b = {"1": 1, "none": 3, "3": 1, "4": 1, "2": 1, "9": 1}
        p_e = sum(share_a[c] * share_b.get(c, 0) for c in share_a) / 64
        assert ours == pytest.approx((p_o - p_e) / (1 - p_e))


def test_a_flawed_scenario_is_quarantined_from_the_gate_until_fixed_and_re_released(
    copy: Path,
) -> None:
    good = json.loads((copy / CASES).read_text().splitlines()[2])
    assert good["id"] == "bk-conversation"
    _set_known_info(copy, "Please book 1 seat from JFK to LAX on 2026-12-12 (user u-ben).")
    project = load_project(copy)
    _release("a scenario whose known_info contradicts its goal")
    run = _run(project)
    report = gate_run(project, run.header.run_id)
    quarantine = [w for w in report.warnings if w.code == "simulator_quarantine"]
    assert len(quarantine) == 1
    assert "bk-conversation" in quarantine[0].message
    assert "known_info says LAX where the goal says SFO (2 of 2)" in quarantine[0].message
    assert report.cases == 4  # the quarantined case counts in no gating figure
    # fixed and re-released: the new run clears it
    _set_known_info(copy, good["situation"]["user_scenario"]["known_info"])
    project = load_project(copy)
    _release("fix the scenario")
    run = _run(project)
    report = gate_run(project, run.header.run_id)
    assert not [w for w in report.warnings if w.code == "simulator_quarantine"]
    assert report.cases == 5


def test_a_frozen_quarantined_case_is_counted_never_named(copy: Path) -> None:
    _set_known_info(copy, "Please book 1 seat from JFK to LAX on 2026-12-12 (user u-ben).")
    rows = [json.loads(r) for r in (copy / CASES).read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["id"] == "bk-conversation":
            row["frozen"] = True
    (copy / CASES).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    project = load_project(copy)
    _release("a frozen case whose known_info contradicts its goal")
    run = _run(project)
    report = gate_run(project, run.header.run_id)
    [quarantine] = [w for w in report.warnings if w.code == "simulator_quarantine"]
    assert quarantine.message.startswith("1 frozen case(s) whose simulated user errs too often")
    assert "bk-conversation" not in quarantine.message and "LAX" not in quarantine.message


def test_mechanical_checks_and_reviews_make_the_rate_and_a_changed_simulator_goes_stale(
    copy: Path,
) -> None:
    project = load_project(copy)
    run = _run(project, k=2)
    case = next(
        c
        for c in __import__("casework.dataset", fromlist=["x"])
        .load_dataset(project, "bookings")
        .cases
        if c.id == "bk-conversation"
    )
    trials = [t for t in run.trials if t.case_id == "bk-conversation"]
    assert all(simulator_findings(case, t) == [] for t in trials)  # the example's user is sound
    t = trials[0]
    assert t.user_sim is not None
    said = t.trajectory.model_copy(
        update={
            "messages": [
                Message(role="user", content="Book JFK to SFO on 2026-12-12 for u-ben, FL-999."),
                Message(role="assistant", content="Which date?"),
            ]
        }
    )
    bad = t.model_copy(
        update={
            "trajectory": said,
            "user_sim": t.user_sim.model_copy(update={"stop": "user_stop"}),
        }
    )
    checks = {f.check for f in simulator_findings(case, bad)}
    # FL-999 is in neither the scenario nor the conversation: the user made it up.
    assert checks == {"ignored_instructions", "stopped_early", "invented"}
    unknown = case.model_copy(
        update={
            "situation": case.situation.model_copy(
                update={
                    "user_scenario": case.situation.user_scenario.model_copy(
                        update={"unknown_info": "the flight id FL-999"}
                    )
                }
            )
        }
    )
    assert "revealed_unknown" in {f.check for f in simulator_findings(unknown, bad)}
    long = t.model_copy(update={"user_sim": t.user_sim.model_copy(update={"stop": "max_turns"})})
    assert [f.check for f in simulator_findings(case, long)] == ["max_turns"]
    # a review blaming the simulator counts while it was made on this scenario and simulator
    sim = (t.user_sim.model, t.user_sim.prompt_version)
    review = SettledReview(
        trial=f"{run.header.run_id}/bk-conversation/{t.trial}",
        case_id="bk-conversation",
        slice="bookings",
        decision="fail",
        data={"step": 0, "fault": "simulated_user", "category": "task-derailment"},
        scenario_digest=scenario_digest(case.situation.user_scenario),
        simulator=sim,
    )
    cases = load_dataset(project, "bookings").cases
    audit = audit_cases(run, cases, [review], threshold=0.2)
    assert audit.cases["bk-conversation"].flagged == 1 and audit.quarantined == ("bk-conversation",)
    rate = audit.slices["bookings"]
    assert (rate.successes, rate.n) == (1, 2) and rate.low is not None and rate.low < 0.5
    changed = SettledReview(**{**review.__dict__, "simulator": ("another-model", sim[1])})
    stale = audit_cases(run, cases, [changed], threshold=0.2)
    assert stale.quarantined == () and stale.stale_reviews == 1


def test_the_project_taxonomy_replaces_the_preset_and_a_bad_one_is_located(copy: Path) -> None:
    project = load_project(copy)
    assert load_taxonomy(project).version == "mast-1"
    groups = {c.group for c in load_taxonomy(project).categories}
    assert groups == {"specification issues", "inter-agent misalignment", "task verification"}
    path = copy / TAXONOMY_FILE
    path.parent.mkdir()
    path.write_text('version = "ours-2"\n[[category]]\nid = "wrong-refund"\n', encoding="utf-8")
    assert load_taxonomy(project).ids() == ("wrong-refund",)
    path.write_text('version = "ours-3"\n[[category]]\nid = "Bad Id"\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_taxonomy(project)
    assert str(err.value).startswith(f"{TAXONOMY_FILE}:3: category[0].id:")
    assert "Got 'Bad Id'" in str(err.value)

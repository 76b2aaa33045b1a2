"""A rubric the judge applied as one finding is sampled for review like any judged fact."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from casework.dataset import load_dataset
from casework.project import load_project
from casework.review._items import run_items
from casework.runner import load_run
from tests.review import builders
from tests.runner.builders import make_project


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    cases = copy.deepcopy(builders.cases())
    rubric_only = copy.deepcopy(cases[0])
    rubric_only["id"] = "r-rubric"
    rubric_only["label"]["answer_facts"] = []  # the judge reads the reply by the rubric alone
    folder = make_project(tmp_path / "proj", [*cases, rubric_only])
    monkeypatch.chdir(folder)
    builders.run(folder, seed=0)
    return folder


def test_a_rubric_finding_is_a_review_item(root: Path) -> None:
    project = load_project(root)
    run = load_run(project, "run-judge-1-0")
    trials = [t for t in run.trials if t.case_id == "r-rubric"]
    assert trials and all(
        any(c.name == "rubric" and c.judged for c in t.verdict.checks) for t in trials
    )
    items = [
        i
        for i in run_items(run, load_dataset(project, "refunds").cases, private=False)
        if i.case_id == "r-rubric" and i.kind == "answer_fact"
    ]
    assert [(i.kind, i.fact_index, i.fact) for i in items] == [
        ("answer_fact", 0, builders.RUBRIC)
    ] * len(trials)
    assert {i.trial for i in items} == {t.trial for t in trials}

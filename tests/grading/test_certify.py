"""`judge certify`: counts, intervals, admissibility, more-needed, staleness, the run header."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from casework.dataset import load_dataset
from casework.grading import PROMPT_VERSION, Judge, certify_judge, rubric_digests
from casework.grading.calibration import stored_certifications
from casework.grading.certify import Pin, Settings, certify_counts, compare
from casework.grading.judge import Certification
from casework.project import load_project
from casework.review import import_verdicts, sample_verdicts
from casework.runner import load_run
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from tests.grading.fakes import FakeLLM
from tests.review import builders

PIN = Pin("refunds", "answer_fact", "judge-1", PROMPT_VERSION, "r-1")
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_rates_intervals_and_kappa_of_hand_built_counts() -> None:
    r = certify_counts(PIN, tp=45, fn=5, tn=18, fp=2, settings=Settings(), current=True)
    low, high = proportion_confint(45, 50, alpha=0.05, method="wilson")
    assert (r.tpr.estimate, r.tpr.n) == (0.9, 50)
    assert r.tpr.low == pytest.approx(low, abs=1e-12) and r.tpr.high == pytest.approx(
        high, abs=1e-12
    )
    tnr_low, _ = proportion_confint(18, 20, alpha=0.05, method="wilson")
    assert r.tnr.low == pytest.approx(tnr_low, abs=1e-12)
    human = [1] * 50 + [0] * 20
    judge = [1] * 45 + [0] * 5 + [0] * 18 + [1] * 2
    assert r.kappa[0] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    # Both point estimates clear 0.80, neither lower bound does (0.786 and 0.699): not admissible.
    assert round(low, 3) == 0.786 and round(tnr_low, 3) == 0.699
    assert r.admissible is False
    assert certify_counts(PIN, 45, 5, 18, 2, Settings(tpr=0.7, tnr=0.6), current=True).admissible
    data = r.as_json()
    assert (data["n_pass"], data["n_fail"]) == (50, 20)


def _brute_more(successes: int, n: int, threshold: float) -> int:
    """The fewest further verdicts all agreeing at the observed rate (here: all agree)."""
    assert successes == n
    m = 0
    while proportion_confint(n + m, n + m, alpha=0.05, method="wilson")[0] < threshold:
        m += 1
    return m


def test_more_needed_per_class_against_statsmodels() -> None:
    r = certify_counts(PIN, tp=30, fn=0, tn=10, fp=0, settings=Settings(), current=True)
    assert r.admissible is False  # 10 / (10 + 1.96^2) = 0.72 < 0.80
    assert (
        r.more_needed() == {"pass": 0, "fail": _brute_more(10, 10, 0.8)} == {"pass": 0, "fail": 6}
    )
    never = certify_counts(PIN, tp=30, fn=0, tn=7, fp=3, settings=Settings(), current=True)
    assert never.more_needed()["fail"] is None  # 0.7 observed: more of the same never clears 0.8
    enough = certify_counts(PIN, tp=16, fn=0, tn=16, fp=0, settings=Settings(), current=True)
    assert enough.admissible and enough.more_needed() == {"pass": 0, "fail": 0}
    exact = certify_counts(
        PIN, tp=16, fn=0, tn=16, fp=0, settings=Settings(method="clopper-pearson"), current=True
    )
    assert exact.tpr.method == "clopper-pearson" and not exact.admissible  # 0.794 < 0.80


def _item(key: str, judge_pass: bool, prompt: str | None = PROMPT_VERSION) -> ReviewItemRow:
    return ReviewItemRow(
        key=key, slice="refunds", kind="answer_fact", judge_model="judge-1",
        prompt_version=prompt, rubric_digest="r-1", judge_pass=judge_pass,
    )  # fmt: skip


def _verdict(key: str, reviewer: str, human_pass: bool) -> ReviewVerdictRow:
    return ReviewVerdictRow(item_key=key, reviewer=reviewer, human_pass=human_pass)


def test_contested_items_wait_for_adjudication_and_agreeing_pairs_count_once() -> None:
    items = [_item("a", True), _item("b", True), _item("c", False), _item("d", True, None)]
    verdicts = [
        _verdict("a", "ann", True),
        _verdict("a", "bo", True),  # agreeing pair: once
        _verdict("b", "ann", True),
        _verdict("b", "bo", False),  # contested
        _verdict("c", "ann", True),
        _verdict("d", "ann", True),  # a run from before prompt versions
    ]
    compared, contested, unpinned = compare(items, verdicts)
    assert (contested, unpinned) == (1, 1)
    assert [(c.judge_pass, c.human_pass) for c in compared] == [(True, True), (False, True)]


def _cert(
    model: str = "judge-1", prompt: str = PROMPT_VERSION, rubric: str = "r-1"
) -> Certification:
    return Certification("refunds", "answer_fact", model, prompt, rubric, 20, 0, 20, 0, True)


def test_a_certification_applies_only_to_its_model_prompt_and_rubric(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge = Judge(
        FakeLLM(builders.judge_answer), certifications=[_cert()], rubric_digests={"refunds": "r-1"}
    )
    assert judge.admissible("refunds", "answer_fact")
    assert not judge.admissible("refunds", "outcome")  # per check kind
    assert not judge.admissible("billing", "answer_fact")
    other_model = Judge(
        FakeLLM(builders.judge_answer, model="judge-2"),
        certifications=[_cert()],
        rubric_digests={"refunds": "r-1"},
    )
    assert not other_model.admissible("refunds", "answer_fact")
    new_rubric = Judge(judge.client, certifications=[_cert()], rubric_digests={"refunds": "r-2"})
    assert not new_rubric.admissible("refunds", "answer_fact")
    monkeypatch.setattr("casework.grading.judge.PROMPT_VERSION", "p-changed")
    assert not judge.admissible("refunds", "answer_fact")
    assert judge.certification("refunds", "answer_fact") is None


def test_the_newest_current_certification_decides() -> None:
    older = _cert()
    newer = Certification(
        "refunds", "answer_fact", "judge-1", PROMPT_VERSION, "r-1", 5, 5, 5, 5, False
    )
    judge = Judge(
        FakeLLM(builders.judge_answer),
        certifications=[older, newer],
        rubric_digests={"refunds": "r-1"},
    )
    assert not judge.admissible("refunds", "answer_fact")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = builders.make(
        tmp_path / "proj", config="[thresholds]\njudge_tpr = 0.3\njudge_tnr = 0.3\n"
    )
    monkeypatch.chdir(folder)
    builders.run(folder, seed=0, k=4)
    return folder


def _certify_all(root: Path) -> None:
    project = load_project(root)
    report = sample_verdicts(
        project, ["run-judge-1-0"], n=500, reviewers=["ann"], out=root / "s", overlap=0
    )
    lines = [json.loads(line) for line in report.sheets["ann"].read_text().splitlines()]
    for line in lines:  # people who read replies the way the literal judge does
        if line["kind"] == "outcome":
            line["answer"] = "refuse" if "can't" in line["reply"] else "resolve"
        else:
            fact = str(line["fact"])
            line["answer"] = (
                "yes"
                if ("5 days" in line["reply"] if "days" in fact else "refund" in line["reply"])
                else "no"
            )
    report.sheets["ann"].write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_verdicts(project, [report.sheets["ann"]])


def test_certify_stores_pinned_certifications_that_admit_the_next_run(root: Path) -> None:
    _certify_all(root)
    project = load_project(root)
    digests = rubric_digests(load_dataset(project, "refunds").cases)
    report = certify_judge(
        project,
        judge_model="judge-1",
        prompt_version=PROMPT_VERSION,
        rubric_digests=digests,
        now=NOW,
    )
    found = {(r.pin.slice, r.pin.kind): r for r in report.results}
    assert set(found) == {
        ("refunds", "outcome"),
        ("refunds", "answer_fact"),
        ("billing", "outcome"),
        ("billing", "answer_fact"),
    }
    facts = found[("refunds", "answer_fact")]
    assert facts.current and facts.fn == facts.fp == 0 and facts.tn > 0
    assert facts.pin.rubric_digest == digests["refunds"]
    outcome = found[("refunds", "outcome")]
    assert outcome.tn == 0 and not outcome.admissible  # no judge failure to measure TNR on
    stored = stored_certifications(project, "judge-1")
    assert len(stored) == 4 and all(c.certified_at == NOW for c in stored)
    judge = Judge(FakeLLM(builders.judge_answer), certifications=stored)
    run = load_run(project, _run_with(root, judge))
    info = run.header.judge
    assert info is not None and info.prompt_version == PROMPT_VERSION
    recorded = info.certification["refunds"]["answer_fact"]
    assert (recorded.tp, recorded.fn, recorded.tn, recorded.fp) == (facts.tp, 0, facts.tn, 0)
    assert recorded.admissible is facts.admissible is True
    trial_checks = [c for t in run.trials if t.slice == "refunds" for c in t.verdict.checks]
    fact_checks = [c for c in trial_checks if c.name == "answer_facts"]
    assert fact_checks and all(c.admissible for c in fact_checks)
    assert all(not c.admissible for c in trial_checks if c.name == "outcome" and c.judged)
    stale = certify_judge(
        project,
        judge_model="judge-2",
        prompt_version=PROMPT_VERSION,
        rubric_digests=digests,
        save=False,
    )
    assert not any(r.current for r in stale.results)


def _run_with(root: Path, judge: Judge) -> str:
    from casework.runner import RunRequest, run_agent

    summary = run_agent(
        load_project(root),
        RunRequest(
            dataset="refunds", agent="python:tests.review.builders:talker", k=1, run_id="after"
        ),
        judge=judge,
    )
    return summary.header.run_id

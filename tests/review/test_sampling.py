"""`judge sample`: which judge verdicts become review items, and how they are drawn."""

from __future__ import annotations

import collections
import csv
import io
import json
from pathlib import Path

import pytest

from casework.dataset import load_dataset
from casework.dataset.copies import read_copies
from casework.errors import InputErrors, UsageError
from casework.project import load_project
from casework.review import add_tuning, sample_verdicts
from casework.review._items import ReviewItem, assign_reviewers, draw, excluded_by, run_items
from casework.review._sample import read_tuning
from casework.runner import load_run
from tests.review import builders


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = builders.make(tmp_path / "proj")
    monkeypatch.chdir(folder)
    builders.run(folder, seed=0)
    return folder


def _items(root: Path, run_id: str = "run-judge-1-0") -> list[ReviewItem]:
    project = load_project(root)
    run = load_run(project, run_id)
    return list(run_items(run, load_dataset(project, "refunds").cases, private=False))


def test_items_are_the_judge_decided_findings_of_the_run(root: Path) -> None:
    items = _items(root)
    kinds = collections.Counter((i.slice, i.kind) for i in items)
    # 6 rubric cases x 2 trials: one outcome reading and two facts each; the refusal (x 2
    # trials): one reading and one fact.
    assert kinds == {
        ("refunds", "outcome"): 10,
        ("refunds", "answer_fact"): 18,
        ("billing", "outcome"): 4,
        ("billing", "answer_fact"): 8,
    }
    refusal = [i for i in items if i.case_id == "u-1" and i.kind == "outcome"]
    assert {i.accepted for i in refusal} == {("refuse",)}
    facts = [i for i in items if i.kind == "answer_fact"]
    assert {i.judge_pass for i in facts} == {True, False}
    key = facts[0].key
    assert key.startswith("run-judge-1-0/") and key.split("/")[3:] in (
        ["answer_fact", "0"],
        ["answer_fact", "1"],
    )


def test_the_draw_is_deterministic_by_seed_and_stratified(root: Path) -> None:
    items = _items(root)
    first = draw(items, 12, seed=3)
    assert [i.key for i in first] == [i.key for i in draw(items, 12, seed=3)]
    assert [i.key for i in first] != [i.key for i in draw(items, 12, seed=4)]
    strata = collections.Counter(i.stratum for i in first)
    available = collections.Counter(i.stratum for i in items)
    # Round robin over the strata: each gets n / strata, or all it has when it has fewer.
    share = 12 // len(available)
    for name, count in available.items():
        assert strata[name] >= min(share, count), name
    assert len(first) == 12 and len({i.key for i in first}) == 12


def test_overlap_gives_a_share_to_two_different_reviewers() -> None:
    who = assign_reviewers(10, ["ann", "bo", "cy"], 0.2, seed=1)
    assert sum(len(w) == 2 for w in who) == 2
    assert all(len(set(w)) == len(w) for w in who)
    load = collections.Counter(name for w in who for name in w)
    assert max(load.values()) - min(load.values()) <= 1
    assert who == assign_reviewers(10, ["ann", "bo", "cy"], 0.2, seed=1)


def test_tuning_records_and_earlier_samples_are_never_drawn(root: Path) -> None:
    project = load_project(root)
    items = _items(root)
    tuned = "/".join(items[0].key.split("/")[:3])  # a whole trial
    add_tuning(project, [tuned])
    assert read_tuning(project) == [tuned]
    assert (root / "judge" / "tuning.jsonl").read_text() == json.dumps(tuned) + "\n"
    first = sample_verdicts(
        project, ["run-judge-1-0"], n=20, reviewers=["ann", "bo"], out=root / "s1"
    )
    assert first.excluded == sum(excluded_by(i.key, [tuned]) for i in items)
    assert first.excluded >= 3
    drawn = {i.key for i in first.items}
    assert not any(excluded_by(k, [tuned]) for k in drawn)
    second = sample_verdicts(
        project, ["run-judge-1-0"], n=100, reviewers=["ann", "bo"], out=root / "s2"
    )
    again = {i.key for i in second.items}
    assert not drawn & again and not any(excluded_by(k, [tuned]) for k in again)
    assert len(drawn) + len(again) + first.excluded == len(items)
    with pytest.raises(UsageError) as none:
        sample_verdicts(project, ["run-judge-1-0"], n=5, reviewers=["ann"], out=root / "s4",
                        overlap=0, slices=["nowhere"])  # fmt: skip
    assert none.value.args[0] == (
        "the 1 run(s) hold no judge-decided verdict of slice(s) nowhere to sample."
    )
    with pytest.raises(UsageError, match="no judge verdict left to sample"):
        sample_verdicts(
            project, ["run-judge-1-0"], n=5, reviewers=["ann"], out=root / "s3", overlap=0
        )


def test_bad_tuning_lines_are_located(root: Path) -> None:
    path = root / "judge" / "tuning.jsonl"
    path.parent.mkdir()
    path.write_text('"run/case/0"\n{"key": 1}\n"run/case/x"\nnot json\n')
    with pytest.raises(InputErrors) as err:
        read_tuning(load_project(root))
    text = str(err.value)
    assert 'judge/tuning.jsonl:2: must be a JSON string. Got {"key": 1}' in text
    assert "judge/tuning.jsonl:3: the trial must be a number. Got 'run/case/x'" in text
    assert "judge/tuning.jsonl:4: not JSON" in text
    with pytest.raises(UsageError, match="the kind must be outcome or answer_fact"):
        add_tuning(load_project(root), ["run/case/0/labels"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "must be at least 1. Got 0."),
        ({"overlap": 1.5}, "must be between 0 and 1. Got 1.5."),
        ({"reviewers": ["ann"]}, "an overlap needs at least two reviewers."),
        ({"reviewers": ["ann", "ann"]}, "a reviewer is named twice."),
        ({"reviewers": ["a/b", "c"]}, "a reviewer name starts with a letter or digit"),
    ],
)
def test_bad_requests_name_the_parameter(
    root: Path, kwargs: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"n": 5, "reviewers": ["ann", "bo"], "out": root / "s", **kwargs}
    with pytest.raises(UsageError) as err:
        sample_verdicts(load_project(root), ["run-judge-1-0"], **args)  # type: ignore[arg-type]
    assert str(err.value.args[0]).startswith(message)
    assert not (root / "s").exists()
    assert err.value.param in ("n", "overlap", "reviewers")


def test_frozen_cases_reach_sheets_only_with_a_private_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = builders.make(tmp_path / "proj")
    monkeypatch.chdir(folder)
    text = (folder / "datasets" / "refunds" / "cases.jsonl").read_text().splitlines()
    frozen = [json.loads(line) for line in text]
    for case in frozen:
        if case["id"] == "r-1":
            case["frozen"] = True
    (folder / "datasets" / "refunds" / "cases.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in frozen)
    )
    builders.run(folder)
    project = load_project(folder)
    run = load_run(project, "run-judge-1-0")
    cases = load_dataset(project, "refunds").cases
    public = {i.case_id for i in run_items(run, cases, private=False)}
    private = {i.case_id for i in run_items(run, cases, private=True)}
    assert "r-1" not in public and "r-1" in private


def test_csv_sheets_hold_the_same_lines(root: Path) -> None:
    project = load_project(root)
    report = sample_verdicts(
        project, ["run-judge-1-0"], n=6, reviewers=["ann", "bo"], out=root / "c", sheet_format="csv"
    )
    rows = list(csv.DictReader(io.StringIO(report.sheets["ann"].read_text())))
    assert rows and {r["reviewer"] for r in rows} == {"ann"}
    assert all(r["answer"] == "" and r["item"].startswith("v-") for r in rows)


def test_each_verdict_sheet_is_recorded_as_a_copy_with_the_cases_it_shows(root: Path) -> None:
    project = load_project(root)
    report = sample_verdicts(
        project, ["run-judge-1-0"], n=12, reviewers=["ann", "bo"], out=root / "sheets"
    )
    copies = read_copies(project)
    assert {c.kind for c in copies} == {"judge verdict sheet"}
    assert {c.dataset for c in copies} == {"refunds"}
    by_path = {Path(c.path): set(c.case_ids) for c in copies}
    assert set(by_path) == {p.resolve() for p in report.sheets.values()}
    for name, path in report.sheets.items():
        shown = {
            i.case_id for i, w in zip(report.items, report.reviewers, strict=True) if name in w
        }
        assert by_path[path.resolve()] == shown

"""Labels validated in chunks on several workers, keeping compact keys (issue 13, `check` at scale).

The oracle is the sequential scan (:func:`casework.dataset.scan_dataset`), which parses every
raw label into a record: the chunked scan must report the same problems in the same order, cut
at the same point, and hash the same content, while keeping no label record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.dataset.parallel import scan_dataset_chunks
from casework.dataset.stream import (
    dangling_key_problems,
    dangling_label_problems,
    duplicate_key_problems,
    duplicate_label_problems,
    label_key_of,
    scan_dataset,
)
from casework.dataset.versions import CASES_FILE
from casework.errors import MAX_REPORTED, InputError
from casework.project import load_project
from casework.schema import Case, LabelRecord
from tests.factories import case_dict, write_lines

LABELS = "labels.jsonl"


class _Ids:
    """A picklable job keeping the ids it saw."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def add(self, case: Case) -> None:
        self.ids.append(case.id)


def _label(case_id: str, labeller: str = "lab-a", guideline: str = "refunds-g7") -> dict[str, Any]:
    return {
        "case_id": case_id,
        "labeller": labeller,
        "role": "first",
        "outcome": "resolve",
        "guideline_version": guideline,
        "labelled_at": "2026-11-01T10:00:00Z",
    }


def _write(root: Path, cases: list[Any], labels: list[Any] | None) -> None:
    folder = root / "datasets" / "refunds"
    write_lines(folder / CASES_FILE, cases)
    if labels is None:
        (folder / LABELS).unlink(missing_ok=True)
    else:
        write_lines(folder / LABELS, labels)


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What a scan gives: its hash and case count, or the text of every problem it raised."""
    try:
        result = fn(*args, **kwargs)
    except InputError as exc:
        return "errors", [str(p) for p in exc.problems]
    scan = result[0] if isinstance(result, tuple) else result
    return "ok", (scan.hash, scan.cases, scan.version)


def _both(root: Path, workers: int) -> tuple[tuple[str, Any], tuple[str, Any]]:
    project = load_project(root)
    want = _outcome(scan_dataset, project, "refunds", lambda case: None)
    got = _outcome(
        scan_dataset_chunks, project, "refunds", _Ids, workers=workers, keep_labels=False
    )
    return want, got


_CASES = [case_dict(f"c-{i:02d}") for i in range(24)]


def _bad_labels() -> list[Any]:
    labels: list[Any] = [_label(f"c-{i:02d}") for i in range(24)]
    labels[2] = '{"case_id": NaN}'
    labels[9] = ""
    labels[15] = _label("c-01", labeller="NOT A NAME")
    return labels


@pytest.mark.parametrize(
    "labels",
    [
        [_label(f"c-{i:02d}") for i in range(24)],  # valid
        [_label("c-00"), _label("ghost"), *[_label(f"c-{i:02d}", "lab-b") for i in range(20)]],
        [*[_label(f"c-{i:02d}") for i in range(20)], _label("c-03"), _label("c-03")],  # duplicate
        _bad_labels(),
        ["\ufeff" + json.dumps(_label("c-00")), *[_label(f"c-{i:02d}", "lab-b") for i in range(9)]],
        ['{"case_id": NaN}'] * (MAX_REPORTED * 6),  # cut where a sequential scan stops
        [_label("c-00"), *(['{"bad": 1}'] * (MAX_REPORTED * 3)), *(["[]"] * (MAX_REPORTED * 3))],
        [],  # an empty labels file
        None,  # no labels file
    ],
)
def test_label_chunks_report_what_one_process_reports(
    project_dir: Path, labels: list[Any] | None
) -> None:
    _write(project_dir, _CASES, labels)
    for workers in (2, 3, 5):
        want, got = _both(project_dir, workers)
        assert got == want
    assert _streamed(project_dir) == want


def _streamed(root: Path) -> tuple[str, Any]:
    """One process, the labels checked as they stream past and not kept (`cases`, `show`)."""
    project = load_project(root)
    return _outcome(scan_dataset, project, "refunds", lambda case: None, keep_labels=False)


def test_label_chunks_after_bad_cases_report_what_one_process_reports(project_dir: Path) -> None:
    cases: list[Any] = list(_CASES)
    cases[4] = '{"id": NaN}'
    cases[7] = case_dict("c-01")  # duplicate id: the dangling-label check is skipped
    _write(project_dir, cases, [_label("ghost"), *_bad_labels()])
    want, got = _both(project_dir, 3)
    assert want[0] == "errors" and got == want
    assert _streamed(project_dir) == want


def test_chunks_keep_no_label_record_only_when_asked(project_dir: Path) -> None:
    _write(project_dir, _CASES, [_label("c-00"), _label("c-01")])
    project = load_project(project_dir)
    kept, _ = scan_dataset_chunks(project, "refunds", _Ids, workers=2)
    compact, _ = scan_dataset_chunks(project, "refunds", _Ids, workers=2, keep_labels=False)
    assert [r.case_id for r in kept.labels] == ["c-00", "c-01"]
    assert compact.labels == [] and compact.hash == kept.hash and compact.cases == 24
    streamed = scan_dataset(project, "refunds", lambda case: None, keep_labels=False)
    assert streamed.labels == [] and streamed.hash == kept.hash and streamed.cases == 24


_ids = st.sampled_from(["c-00", "c-01", "c-02", "ghost"])
_who = st.sampled_from(["lab-a", "lab-b"])
_guideline = st.sampled_from(["g1", "g2"])


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_ids, _who, _guideline), max_size=12))
def test_key_checks_equal_the_record_checks(keys: list[tuple[str, str, str]]) -> None:
    records = [LabelRecord.model_validate(_label(c, w, g)) for c, w, g in keys]
    compact = [label_key_of(r) for r in records]
    known = {"c-00", "c-01", "c-02"}
    assert dangling_key_problems(known, compact, "d") == dangling_label_problems(
        known, records, "d"
    )
    got = duplicate_key_problems(compact, "d")
    assert got == duplicate_label_problems(records, "d")
    # the second label of a key is reported once, at its line, however many follow
    seconds = [i + 1 for i, k in enumerate(compact) if compact[:i].count(k) == 1]
    assert [p.line for p in got] == seconds

"""The report's label reader and its parallel scan give what validating every record gives."""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from casework.agreement.grouping import CompactLabel, LabelGroups, compact_label
from casework.dataset.jsonl import canonical_line, parse_records
from casework.labelling._fastread import file_stamp, read_checked_labels
from casework.project import load_project
from casework.schema import LabelRecord
from tests.agreement.builders import seed_dataset
from tests.factories import TOOLS

reading_module = importlib.import_module("casework.labelling.dataset_agreement")
report_module = importlib.import_module("casework.agreement.report")


class _Recorded(LabelGroups):
    """Groups that also keep every label added, in order."""

    def __init__(self, grouped: bool) -> None:
        super().__init__({}, grouped=grouped)
        self.seen: list[CompactLabel] = []

    def add(self, label: CompactLabel) -> None:
        self.seen.append(label)
        super().add(label)


def _read(path: Path, stamp: tuple[int, int, int, int] | None) -> list[CompactLabel] | None:
    got = read_checked_labels(path, stamp, _Recorded)
    assert got is None or isinstance(got, _Recorded)
    return None if got is None else got.seen


def write_labels(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_checked_labels_equal_the_validated_records(tmp_path: Path) -> None:
    _, labels = seed_dataset()
    lines = [canonical_line(r) for r in labels]
    # Other spellings a valid file may hold: a requirement as an object with arguments, no
    # optional fields, a "Z" timestamp, another offset, fractional seconds.
    extra = {
        "case_id": "r-000",
        "labeller": "lab-x",
        "role": "second",
        "outcome": "refuse",
        "required_tools": [
            {"name": "get_order", "arguments": {"order_id": {"match": "exact", "value": "1"}}},
            "issue_refund",
        ],
        "guideline_version": "refunds-g9",
    }
    for i, stamp in enumerate(["2025-03-01T09:00:00Z", "2025-03-01T11:00:00.250+02:00"]):
        lines.append(json.dumps({**extra, "labeller": f"lab-{i}", "labelled_at": stamp}))
    path = tmp_path / "labels.jsonl"
    write_labels(path, lines)
    records = parse_records(path.read_bytes(), LabelRecord, shown="labels.jsonl").records
    got = _read(path, file_stamp(path))
    assert got == [compact_label(r) for r in records]
    assert got is not None and got[-1].labelled_at == "2025-03-01T11:00:00.250000+02:00"
    assert got[-2].required == frozenset({"get_order", "issue_refund"})


def test_a_changed_or_odd_file_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    assert _read(path, None) == []
    _, labels = seed_dataset()
    write_labels(path, [canonical_line(r) for r in labels[:3]])
    stamp = file_stamp(path)
    write_labels(path, [canonical_line(r) for r in labels[:4]])
    assert _read(path, stamp) is None
    write_labels(path, ["{}"])
    assert _read(path, file_stamp(path)) is None
    assert _read(path, None) is None


def _project(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "casework.toml").write_text('name = "seed"\n', encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    cases, labels = seed_dataset()
    labels.append(
        labels[0].model_copy(
            update={
                "labeller": "lab-z",
                "labelled_at": datetime(2025, 3, 2, tzinfo=timezone(timedelta(hours=-5))),
            }
        )
    )
    folder = root / "datasets" / "refunds"
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text("".join(canonical_line(c) + "\n" for c in cases))
    (folder / "labels.jsonl").write_text("".join(canonical_line(r) + "\n" for r in labels))
    return root


@pytest.mark.forks
def test_the_parallel_scan_gives_the_sequential_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = load_project(_project(tmp_path / "p"))
    sequential = reading_module.dataset_agreement(project, "refunds", bootstrap=200, seed=4)
    used: list[bool] = []
    real = reading_module.read_checked_labels

    def spy(
        path: Path, stamp: tuple[int, int, int, int] | None, groups: Callable[[bool], LabelGroups]
    ) -> object:
        got = real(path, stamp, groups)
        used.append(got is not None)
        return got

    if reading_module.parallel_workers() < 2:
        pytest.skip(f"one core, or threads alive ({_threads()}): the scan would not fork")
    monkeypatch.setattr(reading_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reading_module, "read_checked_labels", spy)
    parallel = reading_module.dataset_agreement(project, "refunds", bootstrap=200, seed=4)
    assert used == [True]
    assert parallel == sequential
    assert json.dumps(parallel.as_json()) == json.dumps(sequential.as_json())


@pytest.mark.forks
def test_labels_changing_under_the_scan_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = load_project(_project(tmp_path / "p"))
    sequential = reading_module.dataset_agreement(project, "refunds", bootstrap=0)
    if reading_module.parallel_workers() < 2:
        pytest.skip(f"one core, or threads alive ({_threads()}): the scan would not fork")
    monkeypatch.setattr(reading_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reading_module, "read_checked_labels", lambda path, stamp, groups: None)
    assert reading_module.dataset_agreement(project, "refunds", bootstrap=0) == sequential


def test_label_of_keeps_the_timestamp_text_labels_sort_by() -> None:
    _, labels = seed_dataset()
    record = labels[0].model_copy(update={"labelled_at": datetime(2025, 1, 2, 3, 4, tzinfo=UTC)})
    assert compact_label(record).labelled_at == "2025-01-02T03:04:00+00:00"


@pytest.mark.forks
def test_groups_measured_on_every_core_give_the_one_process_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = load_project(_project(tmp_path / "p"))
    one = reading_module.dataset_agreement(project, "refunds", bootstrap=300, seed=7)
    if reading_module.parallel_workers() < 2:
        pytest.skip(f"one core, or threads alive ({_threads()}): the report would not fork")
    pools: list[object] = []
    real = report_module.ProcessPoolExecutor

    def counted(*args: object, **kwargs: object) -> object:
        pools.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(report_module, "PARALLEL_MIN_ROWS", 0)
    monkeypatch.setattr(report_module, "ProcessPoolExecutor", counted)
    many = reading_module.dataset_agreement(project, "refunds", bootstrap=300, seed=7)
    assert len(pools) == 1  # the groups (slices, guideline versions) went to workers
    assert len(many.slices) >= 2
    assert many == one
    assert json.dumps(many.as_json()) == json.dumps(one.as_json())


def _threads() -> str:
    return ", ".join(t.name for t in threading.enumerate()) or "none"

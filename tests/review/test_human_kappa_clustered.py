"""Human–human kappa of doubly-reviewed judge verdicts: its interval is clustered by case."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from casework.agreement.clustered_kappa import clustered_kappa_interval
from casework.project import load_project
from casework.review._verdicts import import_verdicts
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from tests.review.test_sheets import _answer_all, _sample, _write, root

__all__ = ["root"]  # the fixture, shared with test_sheets


def test_import_reports_kappa_with_an_interval_clustered_by_case(root: Path) -> None:
    sheets = _sample(root)
    ann, bo = _answer_all(sheets["ann"]), _answer_all(sheets["bo"])
    shared = sorted({str(a["item"]) for a in ann} & {str(b["item"]) for b in bo})
    # bo fails two shared items ann passed and passes one ann failed: kappa is defined
    flips = [b for b in bo if b["item"] in shared and b["kind"] == "answer_fact"][:3]
    for b in flips:
        b["answer"] = "no" if b["answer"] == "yes" else "yes"
    _write(sheets["bo"], bo)
    agreement = import_verdicts(load_project(root), list(sheets.values())).agreement
    assert agreement.kappa is not None
    with open_workbench(load_project(root)) as wb, wb.session() as s:
        case_of = {r.key: r.case_id for r in s.scalars(select(ReviewItemRow))}
        stored = list(s.scalars(select(ReviewVerdictRow).order_by(ReviewVerdictRow.reviewer)))
    by_item: dict[str, list[bool]] = {}
    for v in stored:
        by_item.setdefault(v.item_key, []).append(v.human_pass)
    tables: dict[str, list[list[int]]] = {}
    for key, (first, second, *_) in ((k, v) for k, v in by_item.items() if len(v) >= 2):
        cell = tables.setdefault(case_of[key], [[0, 0], [0, 0]])
        cell[0 if first else 1][0 if second else 1] += 1
    assert sum(sum(map(sum, t)) for t in tables.values()) == len(shared) == agreement.items
    assert len(tables) < len(shared)  # several reviewed trials or findings of one case
    expected = clustered_kappa_interval(list(tables.values()))
    assert (agreement.low, agreement.high) == (expected.low, expected.high)
    assert agreement.method.startswith(f"clustered by case ({len(tables)} cases)")
    assert agreement.as_json()["kappa_interval"] == expected.method

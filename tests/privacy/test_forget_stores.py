"""forget and expire reach every store that can hold a customer's data; the registry names them all."""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import func, select

from casework.cli import cli
from casework.dataset import load_dataset
from casework.dataset.copies import read_copies
from casework.erasure import forget_everywhere
from casework.erasure._registry import FILES, TABLES
from casework.interop.adk import export_adk
from casework.privacy.retention import subject_pseudonyms
from casework.project import Project
from casework.review._sample import tuning_path
from casework.shapes import Shape, load_shapes
from casework.shapes._model import ShapeExample, ShapeVersion
from casework.shapes._store import save_shapes, shapes_content, shapes_file
from casework.workbench import WebLabelViewRow, WebSkipRow, open_workbench
from casework.workbench import models as _all_tables
from casework.workbench.base import Base
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from casework.workbench.models_review import GuidelineGapRow, ReviewTaskRow
from tests.privacy.test_privacy_erasure import MINED, project

__all__ = ["project"]  # the fixture, shared with the other erasure tests

SRC = Path(__file__).resolve().parents[2] / "src" / "casework"
LOST = "sess-lost-1234"
"""A production session mined into a shape set only (its conversation is in no dataset)."""
FOUR = ("sess-7f1c2a", "sess-93b0de", "sess-c4d811", "sess-0e7a55")
"""Four customers' sessions of the example traces (each is one row of `refunds`)."""
SECRET_TEXT = "my kettle arrived cracked, flat 4B"


def _pseudonym(project: Project, session: str) -> str:
    [p] = subject_pseudonyms(project, sessions=[session])
    return p


def _example(session: str, text: str) -> ShapeExample:
    return ShapeExample(
        case_id="mined-" + session.removeprefix("session_"), session=session, text=text,
        distance=0.1,
    )  # fmt: skip


def _shape(n: int, central: ShapeExample, other: ShapeExample) -> Shape:
    return Shape(
        id=f"shape-0{n}", name=f"refund refused {n}", named_by="offline", terms=["refund"],
        size=2, share=0.5, signals={"tool_error": 2}, radius=0.2,
        members=sorted([central.case_id, other.case_id]), representatives=[central, other],
        exemplars=[central, other], situation={"conversation": [{"text": central.text}]},
    )  # fmt: skip


def _shape_set(project: Project, lost: str, kept: str) -> None:
    """Two shapes: one where the lost session is a member, one where it is the central member."""
    gone = _example(lost, SECRET_TEXT)
    stay = _example(kept, "the blender never arrived")
    shapes = [_shape(1, stay, gone), _shape(2, gone, stay)]
    version = ShapeVersion(
        number=1, hash="", created_at=MINED, as_of=MINED.date(), message="build", files=["t"],
        key_fingerprint="k", embedder="tfidf", method={"threshold": 0.5}, conversations=2,
        failing=2, shaped=2, singletons=0, unseen_share=0.0, shapes=2,
    )  # fmt: skip
    digest = hashlib.sha256(shapes_content(shapes).encode()).hexdigest()
    save_shapes(project, "refunds", shapes, version.model_copy(update={"hash": digest}))


def test_forget_a_session_only_a_shape_set_and_a_review_item_hold(project: Project) -> None:
    lost = _pseudonym(project, LOST)
    kept = _pseudonym(project, "sess-someone-else")
    _shape_set(project, lost, kept)
    lost_id = "mined-" + lost.removeprefix("session_")
    wb = open_workbench(project)
    with wb.session() as s:
        s.add(
            ReviewTaskRow(
                kind="generated-case", dataset="refunds", subject="authored-1",
                open_subject="authored-1", payload={"note": f"from {lost_id}: {SECRET_TEXT}"},
                status="open", created_at=MINED,
            )
        )  # fmt: skip
    wb.close()
    result = CliRunner().invoke(
        cli,
        ["--project", str(project.root), "dataset", "forget", "--session", LOST],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refunds: removed 0 row(s)")
    assert "table review_items: removed 1 row(s)" in lines
    assert "file shape sets: removed 3 item(s)" in lines  # member of shape 1, shape 2 whole
    text = shapes_file(project, "refunds").read_text(encoding="utf-8")
    assert lost not in text and SECRET_TEXT not in text and lost_id not in text
    found = load_shapes(project, "refunds")  # still a valid set, one version later
    assert [s.id for s in found.shapes] == ["shape-01"]
    assert found.shapes[0].members == ["mined-" + kept.removeprefix("session_")]
    assert found.version.number == 2 and found.version.message == "forget: removed 3 member(s)"
    wb = open_workbench(project)
    with wb.session() as s:
        assert s.scalar(select(func.count()).select_from(ReviewTaskRow)) == 0
    wb.close()
    assert LOST not in result.stdout and lost not in result.stdout


def test_forget_four_customers_reaches_web_views_skips_judge_tables(project: Project) -> None:
    rows = {c.provenance.source_session: c.id for c in load_dataset(project, "refunds").cases}
    four = [rows[_pseudonym(project, s)] for s in FOUR]
    other = next(i for i in rows.values() if i not in four)
    wb = open_workbench(project)
    with wb.session() as s:
        views = [(four[i % 4], f"l{i // 4 + 1}") for i in range(7)] + [(other, "l1")]
        for n, (cid, who) in enumerate(views):
            s.add(
                WebLabelViewRow(
                    dataset="refunds", case_id=cid, labeller=who, guideline_version="g1",
                    fields_shown=["turns"], server_seconds=3.0, updated_at=MINED,
                    note="customer said she lives at flat 4B" if n == 0 else "",
                )
            )  # fmt: skip
        for cid in (four[0], other):
            s.add(
                WebSkipRow(
                    dataset="refunds", case_id=cid, labeller="l1", guideline_version="g1",
                    reason="her address is in the text", skipped_at=MINED,
                )
            )  # fmt: skip
            key = f"run-1/{cid}/1/outcome"
            s.add(
                ReviewItemRow(
                    key=key, sheet_id=f"s-{cid}", run_id="run-1", case_id=cid, trial=1,
                    kind="outcome", slice="refunds", judge_model="m", rubric_digest="r",
                    judge_pass=True, accepted=["resolve"], reviewers=["rita"], sampled_at=MINED,
                )
            )  # fmt: skip
            s.add(
                ReviewVerdictRow(
                    item_key=key, reviewer="rita", answer="resolve", human_pass=True,
                    source="sheet.jsonl", imported_at=MINED,
                )
            )  # fmt: skip
            s.add(
                GuidelineGapRow(
                    slice="refunds", guideline_version="g1", note="kettle case", author="adj",
                    dataset="refunds", case_id=cid, created_at=MINED,
                )
            )  # fmt: skip
    wb.close()
    tuning = tuning_path(project)
    tuning.parent.mkdir()
    tuning.write_text(
        "".join(json.dumps(f"run-1/{c}/1") + "\n" for c in (four[1], other)), encoding="utf-8"
    )
    erasure = forget_everywhere(project, sessions=FOUR, now=MINED)
    assert erasure.count("web_label_views") == 7
    assert erasure.count("web_skips") == 1
    assert erasure.count("judge_review_items") == 1
    assert erasure.count("judge_review_verdicts") == 1
    assert erasure.count("guideline_gaps") == 1
    assert erasure.count("judge tuning keys") == 1
    assert erasure.judge_sheets == ("rita",)
    wb = open_workbench(project)
    with wb.session() as s:
        for model in (WebLabelViewRow, WebSkipRow, ReviewItemRow, GuidelineGapRow):
            assert set(s.scalars(select(model.case_id)).all()) == {other}, model
        keys = s.scalars(select(ReviewVerdictRow.item_key)).all()
        assert keys == [f"run-1/{other}/1/outcome"]
        notes = s.scalars(select(WebLabelViewRow.note)).all()
        assert notes == [""]
    wb.close()
    assert tuning.read_text(encoding="utf-8") == json.dumps(f"run-1/{other}/1") + "\n"


def test_an_exported_copy_out_of_the_project_is_listed_by_path(
    project: Project, tmp_path: Path
) -> None:
    ada = {c.id for c in load_dataset(project, "refunds").cases}
    out = tmp_path / "sent" / "refunds.evalset.json"
    export_adk(project, "refunds", out)
    [record] = read_copies(project)
    assert record.kind == "ADK eval set" and set(record.case_ids) == ada
    result = CliRunner().invoke(
        cli,
        [
            "--project",
            str(project.root),
            "dataset",
            "forget",
            "--email",
            "ada.fakename@example.com",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    shown = [ln for ln in result.stdout.splitlines() if str(out) in ln]
    assert shown == [
        f"  {out} (ADK eval set of refunds, written {datetime.now(UTC):%Y-%m-%d}: held 2 "
        "removed row(s))"
    ]
    [after] = read_copies(project)
    assert len(after.case_ids) == len(ada) - 2  # the record no longer names the removed rows


# The guards: a new table or a new writer of files fails here until the registry names it.


def test_every_workbench_table_is_registered_with_how_it_is_reached() -> None:
    assert _all_tables  # every stage's tables are on the metadata
    registered = [t.table for t in TABLES]
    assert len(registered) == len(set(registered))
    assert set(registered) == set(Base.metadata.tables), "register new tables in erasure"
    for t in TABLES:
        assert t.holds.strip(), t.table  # what it holds, or why it holds nothing
        assert (t.erase is not None) == (t.reach == "erased"), t.table


def _writers() -> set[str]:
    """Modules that write files: they call an atomic writer, or open a file to write."""
    pattern = re.compile(
        r"atomic_write_(text|bytes)\(|atomic_writer\(|\.write_text\(|\.write_bytes\(|"
        r"open\([^)]*[\"'](w|a|wb|ab|x)[\"']"
    )
    out = set()
    for path in SRC.rglob("*.py"):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        code = ast.unparse(tree)
        if module != "casework.atomic" and pattern.search(code):
            out.add(module.removesuffix(".__init__"))
    return out


def test_every_module_writing_files_is_registered() -> None:
    registered = {w for kind in FILES for w in kind.writers}
    missing = _writers() - registered
    assert not missing, f"register the files these modules write in erasure: {sorted(missing)}"
    for kind in FILES:
        assert kind.holds.strip() and kind.where.strip(), kind.name


def test_every_file_a_project_holds_is_of_a_registered_kind(project: Project) -> None:
    forget_everywhere(project, sessions=FOUR[:1], now=MINED)
    patterns = [p for kind in FILES for p in kind.patterns]
    unknown = []
    for folder, dirs, files in os.walk(project.root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            rel = (Path(folder) / name).relative_to(project.root).as_posix()
            if not any(fnmatch.fnmatch(rel, p) for p in patterns):
                unknown.append(rel)
    assert not unknown, f"files of no registered kind: {unknown}"


def test_guarantees_page_lists_every_store() -> None:
    page = (SRC.parents[1] / "docs" / "guarantees.md").read_text(encoding="utf-8")
    for t in TABLES:
        assert f"| `{t.table}` | {t.holds} | {t.reach} |" in page, t.table
    for kind in FILES:
        assert f"| {kind.name} |" in page and kind.holds in page, kind.name

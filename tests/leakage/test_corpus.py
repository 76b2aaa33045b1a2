from __future__ import annotations

import json
import random
from pathlib import Path

import fsspec  # type: ignore[import-untyped]
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from casework.errors import InputError
from casework.leakage import scan_corpus
from casework.leakage.corpus_index import build_index, score_documents
from casework.leakage.reading import corpus_files
from casework.project import Project
from casework.schema import Case
from tests.leakage.corpora import case_row, message

HOLDOUT_TEXT = (
    "hello there where is my refund for order 4411223 i returned the red lamp last week thank you"
)


def background(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [message(rng) for _ in range(n)]


def test_index_covers_holdout_smoke_and_frozen_rows_only() -> None:
    rows = [
        ("a", Case.model_validate(case_row("d", "dev", "x y z"))),
        ("a", Case.model_validate(case_row("f", "dev", "x y z", frozen=True))),
        ("a", Case.model_validate(case_row("h", "holdout", "x y z"))),
        ("b", Case.model_validate(case_row("s", "smoke", "x y z"))),
    ]
    index = build_index(rows)
    assert index.ids == ["f", "h", "s"] and index.datasets == ["a", "a", "b"]


def test_copies_are_found_and_templated_documents_are_not() -> None:
    rows = [("support", Case.model_validate(case_row("h-1", "holdout", HOLDOUT_TEXT)))]
    rows += [
        ("support", Case.model_validate(case_row(f"h-{i + 2}", "holdout", t)))
        for i, t in enumerate(background(30, seed=5))
    ]
    index = build_index(rows)
    docs = [
        *background(300, seed=6),
        "Training example. Customer: " + HOLDOUT_TEXT + " Agent: checking now.",
        HOLDOUT_TEXT.replace("red lamp", "red lamp please"),
    ]
    refs = [("corpus.jsonl", i + 1) for i in range(len(docs))]
    hits = score_documents(index, docs, refs)
    assert [(h.doc, h.case_id) for h in hits] == [(301, "h-1"), (302, "h-1")]
    assert hits[0].long_fraction == 1.0 and hits[0].containment == 1.0 and hits[0].weighted == 1.0
    assert hits[1].weighted >= 0.8


def write_corpus(folder: Path, texts: list[str]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    jsonl = folder / "ft.jsonl"
    lines = [json.dumps({"text": t}) for t in texts[:100]]
    lines.append(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": HOLDOUT_TEXT},
                    {"role": "assistant", "content": "ok"},
                ]
            }
        )
    )
    lines.append("{not json")
    lines.append(json.dumps({"other": 1}))
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parquet = folder / "docs.parquet"
    pq.write_table(pa.table({"text": [*texts[100:200], HOLDOUT_TEXT]}), parquet)
    text = folder / "notes.txt"
    text.write_text("\n".join([*texts[200:250], "", HOLDOUT_TEXT]) + "\n", encoding="utf-8")
    return {"jsonl": jsonl, "parquet": parquet, "text": text}


def test_scan_corpus_reads_jsonl_parquet_and_text(leak_project: Project, tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "corpus", background(250, seed=8))
    report = scan_corpus(leak_project, [str(tmp_path / "corpus")])
    found = [(Path(h.file).name, h.doc, h.case_id) for h in report.hits if h.case_id == "h-near"]
    assert found == [
        ("docs.parquet", 101, "h-near"),
        ("ft.jsonl", 101, "h-near"),
        ("notes.txt", 52, "h-near"),
    ]
    assert "support:h-near" in report.rows_found
    assert all(h.weighted >= 0.8 or h.long_fraction >= 0.8 for h in report.hits)
    assert report.documents == 101 + 101 + 51
    assert [str(p) for p in report.problems] == [
        f"{files['jsonl']}:102: invalid JSON: Expecting property name enclosed in double quotes at column 2. Got '{{not json'.",
        f"{files['jsonl']}:103: text: no text field, messages, or prompt/completion.",
    ]
    hit = next(h for h in report.hits if h.file.endswith(".parquet") and h.case_id == "h-near")
    assert hit.ref == f"{files['parquet']}#101"


def test_scan_corpus_over_an_fsspec_url(leak_project: Project) -> None:
    fs = fsspec.filesystem("memory")
    with fs.open("/corpus/part-0.jsonl", "w") as handle:
        handle.write(
            json.dumps({"text": "nothing to see"})
            + "\n"
            + json.dumps({"text": HOLDOUT_TEXT})
            + "\n"
        )
    report = scan_corpus(leak_project, ["memory://corpus/*.jsonl"])
    assert [(h.ref, h.case_id) for h in report.hits] == [
        ("memory:///corpus/part-0.jsonl:2", "h-near")
    ]
    fs.rm("/corpus", recursive=True)


def test_missing_corpus_path(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        corpus_files([str(tmp_path / "nope.jsonl")])
    assert str(exc.value) == f"{tmp_path / 'nope.jsonl'}: no corpus file found."


def test_folders_hold_corpus_files_by_extension(tmp_path: Path) -> None:
    import gzip

    (tmp_path / "README").write_text("not a corpus file\n", encoding="utf-8")
    (tmp_path / "_SUCCESS").write_text("", encoding="utf-8")
    with gzip.open(tmp_path / "part.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(HOLDOUT_TEXT + "\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl.zst").write_bytes(b"")
    assert corpus_files([str(tmp_path)]) == [
        str(tmp_path / "part.txt.gz"),
        str(tmp_path / "sub" / "b.jsonl.zst"),
    ]

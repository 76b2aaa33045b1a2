"""A release journal that names an impossible or outside path is refused before anything is applied."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from casework.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"


def _files(root: Path) -> dict[Path, bytes]:
    """Every file's bytes but the lock files a command takes (empty, left for the next one)."""
    locks = root / ".casework" / "locks"
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.parent != locks}


@pytest.mark.parametrize(
    ("field", "stored"),
    [
        ("path", "datasets/refunds/cases\x00.jsonl"),  # a traceback before (embedded null byte)
        ("path", "../outside.jsonl"),
        ("staged", "/etc/passwd"),
    ],
)
def test_a_journal_with_a_bad_path_is_refused_and_nothing_changes(
    tmp_path: Path, field: str, stored: str
) -> None:
    root = tmp_path / "proj"
    shutil.copytree(EXAMPLE, root)
    entry = {
        "path": "datasets/refunds/cases.jsonl",
        "before": None,
        "after": "0" * 32,
        "staged": ".casework/journal/refunds/0-cases.jsonl",
    }
    entry[field] = stored
    journal = root / ".casework" / "journal" / "refunds.json"
    journal.parent.mkdir(parents=True)
    journal.write_text(
        json.dumps({"dataset": "refunds", "hash": "xxh3-128", "entries": [entry]}),
        encoding="utf-8",
    )
    before = _files(root)
    result = CliRunner().invoke(cli, ["--project", str(root), "dataset", "versions", "refunds"])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (
        f".casework/journal/refunds.json: entries.0.{field}: not a path inside the project. "
        f"Got {stored!r}"
    ) in result.output
    assert _files(root) == before

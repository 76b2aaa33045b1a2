"""Shared pieces of the integrity tests: a labelling project on disk and the CLI in a subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import casework
from casework.dataset import load_dataset, release
from casework.labelling import assign_labels, export_sheets, import_sheets
from casework.project import Project, load_project
from tests.labelling.builders import answer_jsonl, make_project, read_jsonl

HARNESS = Path(__file__).with_name("harness.py")
SRC = Path(casework.__file__).resolve().parents[1]
REPO = SRC.parent
KEY = "integrity-test-key-not-secret-0123456789"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
RESOLVE = {"outcome": "resolve", "required": ["get_order", "issue_refund"]}


def env(root: Path) -> dict[str, str]:
    """The environment of a CLI subprocess: this checkout's source first, the test workbench."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(SRC), str(REPO)])
    out["CASEWORK_PSEUDONYM_KEY"] = KEY
    out.pop("CASEWORK_DB_URL", None)  # the project's own `.casework/workbench.db`
    return out


def cli(root: Path, *args: str, **harness: Any) -> list[str]:
    """The command line running ``casework ARGS`` in ``root`` through the harness."""
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in harness.items()]
    return [sys.executable, str(HARNESS), *flags, "--", "--project", str(root), *args]


def run(root: Path, *args: str, **harness: Any) -> subprocess.CompletedProcess[str]:
    """Run ``casework ARGS`` to completion in a subprocess."""
    return subprocess.run(
        cli(root, *args, **harness),
        cwd=root,
        env=env(root),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def labelled_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The labelling test project, released once, with answered sheets imported (labels ready)."""
    make_project(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    monkeypatch.chdir(root)
    project = load_project(root)
    release(project, "refunds", load_dataset(project, "refunds").cases, "drafts")
    assign_labels(project, "refunds", ("lab-14", "lab-22", "lab-31"), now=NOW)
    sheets = root.parent / "sheets"
    export_sheets(project, "refunds", sheets)
    for path in sorted(sheets.glob("*.labels.jsonl")):
        answer_jsonl(path, {line["case_id"]: RESOLVE for line in read_jsonl(path)})
    import_sheets(project, sorted(sheets.glob("*.labels.jsonl")), now=NOW)
    return project


def traces(path: Path, sessions: list[str]) -> Path:
    """A generic JSONL trace file: one conversation per session id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {
            "session_id": s,
            "messages": [
                {"role": "user", "content": f"My order for session {s} never arrived."},
                {"role": "assistant", "content": "Sorry, I cannot help with that."},
            ],
            "feedback": "thumbs_down",
        }
        for s in sessions
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def versions(root: Path, name: str = "refunds") -> list[dict[str, Any]]:
    path = root / "datasets" / name / "versions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def working_hash(root: Path, name: str = "refunds") -> str:
    """The version hash of the working tree (the format's definition, computed independently)."""
    folder = root / "datasets" / name
    digest = hashlib.sha256()
    for file in ("cases.jsonl", "labels.jsonl"):
        path = folder / file
        digest.update(file.encode() + b"\0" + (path.read_bytes() if path.exists() else b""))
    return digest.hexdigest()


def chain_intact(log: list[dict[str, Any]]) -> bool:
    """Releases numbered 1, 2, … each naming the one before as parent."""
    parent = None
    for number, record in enumerate(log, start=1):
        if record["number"] != number or record.get("parent") != parent:
            return False
        parent = record["hash"]
    return True

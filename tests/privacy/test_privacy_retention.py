"""forget and expire: rows leave in a new version, counted without identifiers."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from casework.dataset import load_dataset, read_versions, release
from casework.errors import UsageError
from casework.mining import MineOptions, mine
from casework.privacy import history_recipe
from casework.privacy.retention import expire, forget, is_expired
from casework.project import Project, load_project
from casework.schema import Case, LabelRecord

KEY = "retention-tests-key-not-secret-012345"
TRACES = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces"
MINED = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "casework.toml").write_text(
        "[privacy]\nretention_days = 10\n[privacy.id_patterns]\ncustomer = '\\bCUS-\\d{5}\\b'\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    proj = load_project(root)
    mine(proj, [TRACES], "refunds", MineOptions(slice="refunds", now=MINED))
    return proj


def _label(case_id: str) -> LabelRecord:
    return LabelRecord(
        case_id=case_id, labeller="l1", role="first", outcome="resolve",
        guideline_version="refunds-g1", labelled_at=MINED,
    )  # fmt: skip


def test_forget_by_email_account_or_session(project: Project) -> None:
    ds = load_dataset(project, "refunds")
    release(project, "refunds", ds.cases, "labels", labels=[_label(c.id) for c in ds.cases])
    [removal] = forget(project, emails=["ADA.FAKENAME@example.com"], now=MINED)
    assert (removal.removed, removal.expired, removal.kept) == (2, 0, 6)
    assert removal.version is not None
    assert removal.version.message == "forget: deletion request"
    assert removal.version.changes == ["forget: removed 2 row(s)"]
    after = load_dataset(project, "refunds")
    assert len(after.cases) == 6 and len(after.labels) == 6
    assert removal.cache_purged == 2  # both earlier versions held the rows
    assert not any(
        (project.state_dir / "versions" / v.hash).exists()
        for v in read_versions(after.path, "v")[:-1]
    )
    assert removal.purge_file is not None
    expressions = removal.purge_file.read_text(encoding="utf-8").splitlines()
    assert len(expressions) == 16 and all(e.startswith("regex:") for e in expressions)
    log = (after.path / "versions.jsonl").read_text(encoding="utf-8")
    # a word, not a substring: the log holds hex hashes, which may hold "ada"
    assert re.search(r"\bada\b", log, re.IGNORECASE) is None and "example.com" not in log
    [by_account] = forget(project, accounts=["CUS-90533"], now=MINED)  # Bob, a customer id
    [by_session] = forget(project, sessions=["sess-0e7a55"], now=MINED)
    assert (by_account.removed, by_session.removed) == (1, 1)


def test_forget_someone_unknown_changes_nothing(project: Project) -> None:
    before = (project.dataset_dir("refunds") / "versions.jsonl").read_bytes()
    [removal] = forget(project, emails=["nobody@example.net"], now=MINED)
    assert (removal.removed, removal.version, removal.purge_file) == (0, None, None)
    assert (project.dataset_dir("refunds") / "versions.jsonl").read_bytes() == before
    assert history_recipe([removal]) == ""


def test_forget_needs_an_identifier(project: Project) -> None:
    with pytest.raises(UsageError) as exc:
        forget(project, emails=[" "])
    assert str(exc.value) == "forget: name at least one `email`, `account` or `session`."


def test_dry_run_counts_and_writes_nothing(project: Project) -> None:
    before = (project.dataset_dir("refunds") / "cases.jsonl").read_bytes()
    [removal] = forget(project, emails=["ada.fakename@example.com"], dry_run=True, now=MINED)
    assert (removal.removed, removal.version, removal.purge_file) == (2, None, None)
    assert (project.dataset_dir("refunds") / "cases.jsonl").read_bytes() == before
    assert not (project.state_dir / "purge").exists()


def test_expire_keeps_rows_on_their_date_and_removes_them_the_day_after(project: Project) -> None:
    [same_day] = expire(project, today=date(2026, 11, 30), now=MINED)
    assert (same_day.removed, same_day.version) == (0, None)
    [after] = expire(project, today=date(2026, 12, 1), now=MINED)
    assert (after.removed, after.expired, after.kept) == (8, 8, 0)
    assert after.version is not None
    assert after.version.changes == ["expire: removed 8 row(s) past their retention date"]
    recipe = history_recipe([after])
    assert "git filter-repo --replace-text" in recipe and "datasets/refunds/cases.jsonl" in recipe


def test_is_expired_boundary() -> None:
    case = Case.model_validate(
        {"id": "c", "slice": "s", "split": "dev", "source": "mined",
         "situation": {"goal": "g", "turns": [{"role": "user", "content": "x"}]},
         "provenance": {"retain_until": "2026-01-31"}}
    )  # fmt: skip
    assert not is_expired(case, date(2026, 1, 31))
    assert is_expired(case, date(2026, 2, 1))


def test_unknown_dataset(project: Project) -> None:
    with pytest.raises(UsageError, match="no dataset 'nope'"):
        expire(project, datasets=["nope"])

"""`mine`: traces to a released dataset of scrubbed drafts, and nothing written on failure."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.dataset import load_dataset
from casework.errors import ConfigError, InputErrors, UsageError
from casework.mining import MineOptions, mine
from casework.mining.mine import detect_format
from casework.project import Project
from tests.mining.conftest import EXAMPLE_TRACES

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
GENERIC = EXAMPLE_TRACES / "conversations.jsonl"
OTEL = EXAMPLE_TRACES / "otel-genai.jsonl"


def _raw_values() -> list[str]:
    """Identifiers the example traces hold, as written there."""
    values: set[str] = set()
    for line in GENERIC.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        values.update(v for v in record["customer"].values() if isinstance(v, str))
    values.update(
        [
            "4111-1111-1111-1111", "GB82 WEST 1234 5698 7654 32", "203.0.113.45", "(541) 555-0177",
            "541.555.0108", "Cleo.Examplesson@Example.com", "5 Hypothetical Ave", "Finn Notreal",
            "finn.notreal@example.com", "+1 541 555 0123", "CUS-90914", "ORD-190744", "ORD-190221",
        ]
    )  # fmt: skip
    return sorted(values)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]


def test_formats_are_detected() -> None:
    assert detect_format(GENERIC) == "jsonl"
    assert detect_format(OTEL) == "otel"


def test_mining_the_example_writes_no_raw_identifier(mining_project: Project) -> None:
    report = mine(
        mining_project, [EXAMPLE_TRACES], "refunds", MineOptions(slice="refunds", now=NOW)
    )
    assert report.conversations == 8 and len(report.drafted) == 8
    assert report.formats == {"jsonl": 1, "otel": 1}
    assert report.signals == {
        "thumbs_down": 3, "escalated": 2, "retry": 1, "retry_storm": 1, "abandoned": 3, "tool_error": 2,
    }  # fmt: skip
    assert report.version is not None and report.version.number == 1
    assert report.version.changes == ["mine: added 8 draft case(s) mined from 8 conversation(s)"]
    written = "\n".join(p.read_text(encoding="utf-8") for p in _files(mining_project.root))
    for raw in _raw_values():
        assert raw.casefold() not in written.casefold(), raw
    ds = load_dataset(mining_project, "refunds")
    assert all(c.label is None and c.source == "mined" and c.slice == "refunds" for c in ds.cases)
    assert all(str(c.provenance.retain_until) == "2026-12-20" for c in ds.cases)


def test_mining_twice_adds_nothing(mining_project: Project) -> None:
    mine(mining_project, [GENERIC], "refunds", MineOptions(now=NOW))
    again = mine(mining_project, [GENERIC], "refunds", MineOptions(now=NOW))
    assert (again.drafted, again.already_present, again.version) == ([], 6, None)


def test_failing_only(mining_project: Project) -> None:
    report = mine(mining_project, [GENERIC], "refunds", MineOptions(failing_only=True, now=NOW))
    assert (report.conversations, len(report.drafted), report.not_failing) == (6, 4, 2)
    ds = load_dataset(mining_project, "refunds")
    assert all(c.provenance.signals for c in ds.cases)


def test_expired_rows_leave_with_the_next_mining_release(mining_project: Project) -> None:
    mine(mining_project, [GENERIC], "refunds", MineOptions(now=NOW))
    later = datetime(2026, 12, 21, 9, 0, tzinfo=UTC)  # the day after retain_until
    report = mine(mining_project, [OTEL], "refunds", MineOptions(now=later))
    assert (len(report.drafted), report.expired) == (2, 6)
    assert report.version is not None
    assert report.version.changes == [
        "mine: added 2 draft case(s) mined from 2 conversation(s)",
        "expire: removed 6 row(s) past their retention date",
    ]
    assert len(load_dataset(mining_project, "refunds").cases) == 2


def test_no_key_no_mining_and_nothing_written(
    mining_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_PSEUDONYM_KEY")
    with pytest.raises(ConfigError, match=r"^casework.toml: privacy.key_file: no pseudonym key"):
        mine(mining_project, [GENERIC], "refunds")
    assert not (mining_project.root / "datasets").exists()


def test_bad_traces_write_nothing(mining_project: Project, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        GENERIC.read_text(encoding="utf-8") + '{"session_id": "x"}\n{"messages": []}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputErrors) as exc:
        mine(mining_project, [bad], "refunds")
    assert str(exc.value).splitlines() == [
        f"{bad}:7: messages: field required (the list of messages).",
        f"{bad}:8: session_id: field required (the production session id).",
    ]
    assert not (mining_project.root / "datasets").exists()


def test_usage_errors(mining_project: Project, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        mine(mining_project, [tmp_path / "nope.jsonl"], "refunds")
    with pytest.raises(UsageError) as exc:
        mine(mining_project, [OTEL], "refunds", MineOptions(mapping=("session_id=x",)))
    assert (
        str(exc.value) == "map: applies to the generic JSONL/JSON format only (not to OTLP spans)."
    )
    with pytest.raises(UsageError, match=r"folder holds no \.jsonl"):
        mine(mining_project, [tmp_path], "refunds")

"""The run header's judge certification: additive and optional, so old run logs still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casework.errors import InputErrors
from casework.runner.records import CheckCertification, JudgeInfo, read_log

OLD_HEADER: dict[str, Any] = {
    "schema_version": 1,
    "kind": "run",
    "run_id": "old",
    "dataset": "refunds",
    "dataset_ref": "refunds@1",
    "dataset_hash": "abc",
    "agent_spec": "python:a:b",
    "k": 1,
    "seed": 0,
    "concurrency": 1,
    "case_ids": [],
    "judge": {
        "model": "judge-1",
        "calibration": {"refunds": {"kappa": 0.8, "accuracy": 0.9, "n": 40, "admissible": True}},
    },
    "timeout_s": 60.0,
    "started_at": "2026-01-01T00:00:00Z",
    "casework_version": "0.1.0",
}


def _log(tmp_path: Path, header: dict[str, Any]) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return path


def test_a_log_written_before_certifications_still_reads(tmp_path: Path) -> None:
    run = read_log(_log(tmp_path, OLD_HEADER))
    judge = run.header.judge
    assert judge is not None
    assert judge.prompt_version is None and judge.certification == {}
    assert judge.calibration["refunds"].kappa == 0.8


def test_certifications_round_trip_through_the_log(tmp_path: Path) -> None:
    header = json.loads(json.dumps(OLD_HEADER))
    header["judge"]["prompt_version"] = "p3"
    header["judge"]["certification"] = {
        "refunds": {
            "outcome": {"tp": 90, "fn": 10, "tn": 80, "fp": 20, "admissible": True},
            "answer_fact": {
                "tp": 5,
                "fn": 1,
                "tn": 4,
                "fp": 0,
                "admissible": False,
                "certified_at": "2026-01-02T03:04:05Z",
            },
        }
    }
    judge = read_log(_log(tmp_path, header)).header.judge
    assert judge is not None and judge.prompt_version == "p3"
    outcome = judge.certification["refunds"]["outcome"]
    assert (outcome.tp, outcome.fn, outcome.tn, outcome.fp, outcome.admissible) == (
        90,
        10,
        80,
        20,
        True,
    )
    facts = judge.certification["refunds"]["answer_fact"]
    assert facts.certified_at is not None and facts.certified_at.year == 2026
    again = JudgeInfo.model_validate_json(judge.model_dump_json())
    assert again == judge


@pytest.mark.parametrize(
    "bad",
    [
        {"tp": -1, "fn": 0, "tn": 1, "fp": 0, "admissible": True},
        {"tp": 1, "fn": 0, "tn": 1, "fp": 0, "admissible": True, "kappa": 0.5},
        {"tp": 1, "fn": 0, "tn": 1, "admissible": True},
    ],
)
def test_a_bad_certification_is_located(tmp_path: Path, bad: dict[str, Any]) -> None:
    header = json.loads(json.dumps(OLD_HEADER))
    header["judge"]["certification"] = {"refunds": {"outcome": bad}}
    path = _log(tmp_path, header)
    with path.open("a", encoding="utf-8") as f:  # not the last line: a torn tail is forgiven
        f.write(json.dumps(OLD_HEADER) + "\n")
    with pytest.raises(InputErrors) as err:
        read_log(path)
    assert "judge.certification.refunds.outcome" in str(err.value)


def test_check_certification_is_built_by_keyword() -> None:
    c = CheckCertification(tp=1, fn=2, tn=3, fp=4, admissible=False)
    assert c.certified_at is None

"""`judge certify --samples N`: the judge asked again on reviewed items, its flip rate per slice
and check kind, and a judge that flips too often made inadmissible (text and JSON)."""

from __future__ import annotations

import json
from pathlib import Path

from casework.project import CONFIG_NAME
from tests.e2e.test_judge_cli import Invoke, _run
from tests.e2e.test_judge_cli import invoke as invoke  # the fixture
from tests.e2e.test_run_cli import GOOD, SLOPPY


def _reviewed(invoke: Invoke) -> None:
    """Two runs, four judge verdicts sampled, people agreeing with the (steady) judge."""
    runs = [_run(invoke, GOOD), _run(invoke, SLOPPY)]
    sample = invoke(
        "judge", "sample", *runs, "-n", "4", "--reviewers", "ada", "--overlap", "0", "--out", "s"
    )
    assert sample.exit_code == 0, sample.stderr
    for path in Path("s").glob("verdicts-*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line["answer"] = "yes" if "can't" in line["reply"] else "no"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        assert invoke("review", "import", str(path)).exit_code == 0


def test_a_steady_judge_never_flips(invoke: Invoke) -> None:
    _reviewed(invoke)
    out = invoke("judge", "certify", "--samples", "3", "--format", "json")
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["samples"] == 3 and data["thresholds"]["max_flip"] == 0.1
    (cert,) = data["certifications"]
    assert cert["flip"] == {"items": 4, "flipped": 0, "samples": 3, "rate": 0.0}
    assert cert["flips_too_often"] is False
    # Three fresh requests per item (seeds 1..3: none is the run's cached reply).
    assert "12 requests, 0 from cache" in out.stderr


def test_a_flipping_judge_is_not_admissible_and_says_why(invoke: Invoke) -> None:
    _reviewed(invoke)
    config = Path(CONFIG_NAME)
    config.write_text(
        config.read_text().replace("run_judge_script:answer", "flaky_judge_script:answer")
    )
    text = invoke("judge", "certify", "--samples", "3")
    assert text.exit_code == 0, text.stderr
    assert "flip rate 1.000 (4 of 4 items, 3 samples)" in text.stdout
    assert (
        "its verdicts flip on 100% of the items asked again, above [thresholds] "
        "judge_max_flip 0.1" in text.stdout
    )
    data = json.loads(invoke("judge", "certify", "--samples", "3", "--format", "json").stdout)
    (cert,) = data["certifications"]
    assert cert["flips_too_often"] is True and cert["admissible"] is False
    # Without --samples nothing is measured and nothing is printed about flips.
    plain = json.loads(invoke("judge", "certify", "--format", "json").stdout)
    assert plain["samples"] == 1 and plain["certifications"][0]["flip"] is None


def test_samples_must_be_at_least_one(invoke: Invoke) -> None:
    out = invoke("judge", "certify", "--samples", "0")
    assert out.exit_code == 2
    assert out.stderr == "--samples: must be at least 1. Got 0.\n"

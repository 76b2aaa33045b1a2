"""pass@1 corrected by PPI++ (`[judge] estimator = "ppi++"`): people's verdicts on the run's own
trials rectify the judge's, against the authors' package; without reviewed trials it falls back
to Rogan–Gladen and says so."""

from __future__ import annotations

import numpy as np
import pytest

from casework.runner.analysis import TrialDecision, corrected_pass
from casework.runner.records import CheckCertification

ppi_py = pytest.importorskip("ppi_py")

CERT = {"refunds": {"answer_fact": CheckCertification(tp=40, fn=2, tn=40, fp=4, admissible=True)}}


def _run(seed: int = 3) -> tuple[list[TrialDecision], dict[tuple[str, int], bool]]:
    """80 one-trial cases a lenient judge decided; people reviewed 30 of them."""
    rng = np.random.default_rng(seed)
    truth = rng.random(80) < 0.6
    judge = np.where(truth, rng.random(80) < 0.95, rng.random(80) < 0.25)
    decisions = [
        TrialDecision(f"c{i:02d}", "refunds", "dev", "mined", bool(judge[i]), ("answer_fact",), 0)
        for i in range(80)
    ]
    reviewed = {(f"c{i:02d}", 0): bool(truth[i]) for i in rng.choice(80, 30, replace=False)}
    return decisions, reviewed


def test_ppi_point_estimate_is_ppi_py_and_the_output_says_ppi() -> None:
    decisions, reviewed = _run()
    got = corrected_pass(decisions, {}, estimator="ppi++", reviewed=reviewed)
    assert got is not None and got.estimator == "ppi++" and got.note == ""
    keys = sorted(reviewed)
    y = np.array([reviewed[k] for k in keys], dtype=float)
    by_id = {d.case_id: d.passed for d in decisions}
    yhat = np.array([by_id[c] for c, _ in keys], dtype=float)
    every = np.array([d.passed for d in decisions], dtype=float)
    expected = float(ppi_py.ppi_mean_pointestimate(y, yhat, every)[0])
    assert got.rate.corrected == pytest.approx(expected, abs=1e-12)
    assert got.reviewed == 30 and got.rate.method.startswith("PPI++")
    r = got.rate
    assert r.low is not None and r.high is not None and 0 <= r.low < expected < r.high <= 1
    assert "PPI++)" in got.describe()  # `corrected pass@1 … (raw 0.xxx, PPI++)`
    # PPI++ needs no certification: the judge's error is measured on the run itself.
    assert corrected_pass(decisions, {}, estimator="rogan-gladen") is not None
    assert corrected_pass(decisions, {}).rate.corrected is None  # type: ignore[union-attr]


def test_without_reviewed_trials_it_falls_back_to_rogan_gladen_and_says_so() -> None:
    decisions, _ = _run()
    got = corrected_pass(decisions, CERT, estimator="ppi++", reviewed={})
    plain = corrected_pass(decisions, CERT)
    assert got is not None and plain is not None
    assert got.estimator == "rogan-gladen" and got.rate == plain.rate
    assert got.note == (
        "PPI++ needs people's verdicts on this run's replies and has none for "
        "refunds/answer_fact: Rogan–Gladen used"
    )


def test_a_stratum_without_reviewed_trials_falls_back_too() -> None:
    decisions, reviewed = _run()
    other = [
        TrialDecision(f"o{i}", "billing", "dev", "mined", i % 2 == 0, ("outcome",), 0)
        for i in range(10)
    ]
    got = corrected_pass([*decisions, *other], {}, estimator="ppi++", reviewed=reviewed)
    assert got is not None and got.estimator == "rogan-gladen"
    assert "has none for billing/outcome" in got.note

"""The reference reply of an imported ADK case is checked by ADK's own response_match_score.

The references are those of the published ADK eval files (tests/interop/data/adk); each is
graded against replies that should pass and fail, through casework's grade() on the imported
case, and ADK's own ROUGE-1 scorer (final_response_match_v1) is run beside it on the same pairs:
the verdicts must agree, and both must sit on the right side of ADK's 0.8 threshold.
"""

from __future__ import annotations

from pathlib import Path

from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores

from casework.grading.grade import grade
from casework.interop.adk import ImportOptions
from casework.interop.adk._convert import cases_from_adk
from casework.interop.adk._format import read_adk_file
from casework.interop.adk.oracle import CHECK
from casework.schema import Case, Trajectory

ADK_DIR = Path(__file__).resolve().parents[1] / "data" / "adk"


def _cases() -> list[Case]:
    files = [read_adk_file(p, p.name) for p in sorted(ADK_DIR.glob("*.json"))]
    cases = [i.case for i in cases_from_adk(files, ImportOptions(slice="adk"))]
    return [c for c in cases if c.oracle.check == CHECK]


def _replies(reference: str) -> list[str]:
    words = reference.split()
    return [
        reference,  # the reference itself
        " ".join(words[: max(1, len(words) // 2)]),  # half of it
        " ".join(reversed(words)),  # the same words in another order: ROUGE-1 ignores order
        "Sorry, I cannot help with that request.",
    ]


def test_verdicts_agree_with_adks_scorer_on_the_published_references() -> None:
    cases = _cases()
    assert len(cases) >= 4  # the published files hold this many reference replies
    agreed = total = passed = 0
    for case in cases:
        assert case.oracle.check_params is not None
        reference = case.oracle.check_params["reference"]
        for reply in _replies(reference):
            verdict = grade(case, Trajectory(final_reply=reply), initial_state={})
            [check] = [c for c in verdict.checks if c.name == "programmatic"]
            ours = check.status == "pass"
            adk = _calculate_rouge_1_scores(reply, reference).fmeasure >= 0.8
            agreed += ours == adk
            passed += ours
            total += 1
            assert ours == adk, (case.id, reply, check.evidence)
            assert "ADK response_match_score" in check.evidence
    assert agreed == total and 0 < passed < total


def test_a_threshold_other_than_adks_default_is_honoured() -> None:
    case = _cases()[0]
    assert case.oracle.check_params is not None
    reference = case.oracle.check_params["reference"]
    half = " ".join(reference.split()[: max(1, len(reference.split()) // 2)])
    score = _calculate_rouge_1_scores(half, reference).fmeasure
    loose = case.model_copy(
        update={
            "oracle": case.oracle.model_copy(
                update={"check_params": {"reference": reference, "threshold": score}}
            )
        }
    )
    for graded, expected in ((case, "fail"), (loose, "pass")):
        verdict = grade(graded, Trajectory(final_reply=half), initial_state={})
        assert [c.status for c in verdict.checks if c.name == "programmatic"] == [expected]

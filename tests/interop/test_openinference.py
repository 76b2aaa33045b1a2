"""A run's verdicts as OpenInference span annotations."""

from __future__ import annotations

from casework.interop.openinference import openinference_annotations
from tests.interop.sample_run import sample_run


def test_openinference_annotations() -> None:
    data = openinference_annotations(sample_run())["data"]
    assert len(data) == 15
    b1 = [d for d in data if d["metadata"]["case_id"] == "b" and d["metadata"]["trial"] == 1]
    assert b1[2] == {
        "span_id": "eee19b7ec3c1b174",
        "name": "casework.outcome",
        "annotator_kind": "LLM",
        "result": {"label": "fail", "score": 0.0, "explanation": "asked instead"},
        "metadata": {
            "trace_id": "5b8efff798038103d269b633813fc60c",
            "run_id": "r-7",
            "case_id": "b",
            "trial": 1,
            "dataset": "refunds@2",
        },
        "identifier": "casework:r-7:b:1",
    }
    assert b1[1]["annotator_kind"] == "CODE"
    assert all(set(d["result"]) == {"label", "score", "explanation"} for d in data)

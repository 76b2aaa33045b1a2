"""A run's verdicts as OpenInference span annotations (Phoenix), beside the traces.

Entry point: :func:`openinference_annotations` (pure: the body of Phoenix's
``POST /v1/span_annotations``).
"""

from __future__ import annotations

from typing import Any

from casework.interop.evaluations import evaluations, trace_ids
from casework.runner.records import LoadedRun


def openinference_annotations(run: LoadedRun) -> dict[str, Any]:
    """The run's evaluations as OpenInference span annotations.

    The body of Phoenix's ``POST /v1/span_annotations``: ``{"data": [{span_id, name,
    annotator_kind, result: {label, score, explanation}, metadata, identifier}]}``.
    """
    data = []
    for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial)):
        trace, span = trace_ids(run.header.run_id, t)
        for e in evaluations(t):
            data.append(
                {
                    "span_id": span,
                    "name": e.name,
                    "annotator_kind": "LLM" if e.judged else "CODE",
                    "result": {"label": e.label, "score": e.score, "explanation": e.explanation},
                    "metadata": {
                        "trace_id": trace,
                        "run_id": run.header.run_id,
                        "case_id": t.case_id,
                        "trial": t.trial,
                        "dataset": run.header.dataset_ref,
                    },
                    "identifier": f"casework:{run.header.run_id}:{t.case_id}:{t.trial}",
                }
            )
    return {"data": data}

"""A run's verdicts as OTLP/JSON ``gen_ai.evaluation.result`` events, beside the traces.

Entry point: :func:`otlp_logs` (pure: an ``ExportLogsServiceRequest`` in the protobuf JSON
mapping OTLP prescribes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from casework import __version__
from casework.interop.evaluations import evaluations, trace_ids
from casework.runner.records import LoadedRun

#: Event name of the OpenTelemetry GenAI evaluation result (semantic conventions, development).
EVALUATION_EVENT = "gen_ai.evaluation.result"


def _any_value(value: Any) -> dict[str, Any]:
    """An OTLP/JSON ``AnyValue`` (int64 as a string, per the protobuf JSON mapping)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attrs(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in pairs.items() if v is not None]


def _log_records(run: LoadedRun) -> Iterator[dict[str, Any]]:
    h = run.header
    for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial)):
        trace, span = trace_ids(h.run_id, t)
        nanos = str(int(t.started_at.timestamp()) * 10**9 + t.started_at.microsecond * 1000)
        for e in evaluations(t):
            attributes = {
                "gen_ai.evaluation.name": e.name,
                "gen_ai.evaluation.score.value": e.score,
                "gen_ai.evaluation.score.label": e.label,
                "gen_ai.evaluation.explanation": e.explanation,
                "casework.run_id": h.run_id,
                "casework.case_id": t.case_id,
                "casework.trial": t.trial,
                "casework.dataset": h.dataset_ref,
                "casework.judged": e.judged,
            }
            yield {
                "timeUnixNano": nanos,
                "observedTimeUnixNano": nanos,
                "severityNumber": 9,
                "severityText": "INFO",
                "eventName": EVALUATION_EVENT,
                "attributes": _attrs(attributes),
                "traceId": trace,
                "spanId": span,
            }


def otlp_logs(run: LoadedRun) -> dict[str, Any]:
    """The run's evaluations as an OTLP/JSON ``ExportLogsServiceRequest``.

    One ``gen_ai.evaluation.result`` event per trial verdict and per check.
    Each event carries the trial's trace and span id (see :func:`trace_ids`); the JSON follows
    the protobuf JSON mapping OTLP prescribes: lowerCamelCase keys, hex ids, int64 as strings.
    """
    h = run.header
    resource = {
        "service.name": "casework",
        "casework.run_id": h.run_id,
        "casework.agent": h.agent_spec,
        "casework.agent_version": h.agent_version,
    }
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": _attrs(resource)},
                "scopeLogs": [
                    {
                        "scope": {"name": "casework", "version": __version__},
                        "logRecords": list(_log_records(run)),
                    }
                ],
            }
        ]
    }

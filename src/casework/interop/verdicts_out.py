"""A run's verdicts for other tools: JUnit XML, OTLP events and OpenInference annotations.

JUnit XML is for any CI; OTLP `gen_ai.evaluation.result` events and OpenInference span
annotations (Phoenix) put the verdicts beside the traces in observability tools.

Entry points: :func:`export_verdicts` (project level: loads the run, writes atomically, posts to
an OTLP/HTTP endpoint when one is named) over the pure renderers :func:`junit_xml`,
:func:`otlp_logs` and :func:`openinference_annotations`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from casework import __version__
from casework.atomic import atomic_write_bytes
from casework.errors import UsageError
from casework.grading import CheckResult
from casework.interop.otlp_http import otlp_target, post_otlp
from casework.project import Project
from casework.runner import LoadedRun, TrialRecord, load_run

VerdictFormat = Literal["junit", "otel", "openinference"]
#: The formats a run's verdicts are exported in.
VERDICT_FORMATS: tuple[VerdictFormat, ...] = get_args(VerdictFormat)
#: Event name of the OpenTelemetry GenAI evaluation result (semantic conventions, development).
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: Evaluation name of a trial's overall verdict (each check is ``casework.<check name>``).
VERDICT_NAME = "casework.verdict"
_HEX = re.compile(r"^[0-9a-f]+$")
_WITHHELD = "frozen case: evidence withheld"


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of one trial: the overall verdict, or one check.

    Attributes:
        name: ``casework.verdict`` or ``casework.<check>``.
        label: ``pass``, ``fail`` or ``undetermined``.
        score: 1.0 for pass, 0.0 for fail, ``None`` when undetermined.
        explanation: The evidence (withheld for frozen cases).
        judged: True when an LLM judge decided it.
    """

    name: str
    label: str
    score: float | None
    explanation: str
    judged: bool = False


def _label(passed: bool | None) -> str:
    return "undetermined" if passed is None else ("pass" if passed else "fail")


def _score(label: str) -> float | None:
    return {"pass": 1.0, "fail": 0.0}.get(label)


def evaluations(trial: TrialRecord) -> list[Evaluation]:
    """The trial's overall verdict, then one evaluation per check (in grading order)."""
    v = trial.verdict
    overall = _label(v.passed)
    summary = _WITHHELD if trial.frozen else v.summary()
    out = [
        Evaluation(
            VERDICT_NAME, overall, _score(overall), summary, v.oracle_class != "state_assertion"
        )
    ]
    for c in v.checks:
        out.append(_check_evaluation(c, trial.frozen))
    return out


def _check_evaluation(c: CheckResult, frozen: bool) -> Evaluation:
    return Evaluation(
        f"casework.{c.name}",
        c.status,
        _score(c.status),
        _WITHHELD if frozen else c.evidence,
        c.judged,
    )


def trace_ids(run_id: str, trial: TrialRecord) -> tuple[str, str]:
    """``(trace_id, span_id)`` of the trial, as lower-case hex.

    The trajectory's own when it reports them (``metadata.trace_id`` / ``metadata.span_id``, 32
    and 16 hex digits), else derived from run id, case id and trial (a SHA-256 prefix).
    """
    meta = trial.trajectory.metadata
    trace, span = meta.get("trace_id"), meta.get("span_id")
    if (
        isinstance(trace, str)
        and isinstance(span, str)
        and len(trace) == 32
        and len(span) == 16
        and _HEX.match(trace.lower())
        and _HEX.match(span.lower())
    ):
        return trace.lower(), span.lower()
    digest = hashlib.sha256(f"{run_id}/{trial.case_id}/{trial.trial}".encode()).hexdigest()
    return digest[:32], digest[32:48]


def _by_case(run: LoadedRun) -> dict[str, list[TrialRecord]]:
    cases: dict[str, list[TrialRecord]] = {}
    for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial)):
        cases.setdefault(t.case_id, []).append(t)
    return cases


def _testcase(suite: ET.Element, case_id: str, trials: list[TrialRecord], ref: str) -> str:
    first = trials[0]
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{ref}.{first.slice}",
        name=case_id,
        time=f"{sum(t.duration_s for t in trials):.3f}",
    )
    props = ET.SubElement(case, "properties")
    for key, value in (("slice", first.slice), ("split", first.split), ("source", first.source)):
        ET.SubElement(props, "property", name=key, value=value)
    for t in trials:
        ET.SubElement(props, "property", name=f"trial.{t.trial}", value=_label(t.verdict.passed))
    decided = [t for t in trials if t.verdict.passed is not None]
    if decided:
        rate = sum(1 for t in decided if t.verdict.passed) / len(decided)
        ET.SubElement(props, "property", name="pass_rate", value=f"{rate:.3f}")
    failed = [t for t in trials if t.verdict.passed is False]
    if failed:
        lines = []
        for t in failed:
            checks = t.verdict.failures()
            for c in checks:
                lines.append(f"trial {t.trial}: {c.name}: {_WITHHELD if t.frozen else c.evidence}")
            if not checks:
                lines.append(f"trial {t.trial}: {_WITHHELD if t.frozen else t.verdict.summary()}")
        names = sorted({c.name for t in failed for c in t.verdict.failures()})
        message = f"{len(failed)} of {len(trials)} trial(s) failed" + (
            f": {', '.join(names)}" if names else ""
        )
        failure = ET.SubElement(case, "failure", message=message, type="casework.check")
        failure.text = "\n".join(lines)
        return "failure"
    if not decided:
        ET.SubElement(
            case, "skipped", message="every trial undetermined: " + trials[0].verdict.summary()
        )
        return "skipped"
    return "pass"


def junit_xml(run: LoadedRun) -> bytes:
    """The run as JUnit XML: one ``testcase`` per case.

    A case fails when any trial failed; its trials and pass rate are ``property`` elements and
    each failing check is a line of the ``failure``. A case with only undetermined trials is
    ``skipped``. Frozen cases keep their ids but not their evidence.
    """
    h = run.header
    root = ET.Element("testsuites", name="casework")
    suite = ET.SubElement(root, "testsuite", name=h.run_id, timestamp=h.started_at.isoformat())
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("dataset", h.dataset_ref),
        ("dataset_hash", h.dataset_hash),
        ("agent", h.agent_spec),
        ("agent_version", h.agent_version or ""),
        ("k", str(h.k)),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    outcomes = [_testcase(suite, cid, ts, h.dataset) for cid, ts in _by_case(run).items()]
    counts = {
        "tests": str(len(outcomes)),
        "failures": str(outcomes.count("failure")),
        "errors": "0",
        "skipped": str(outcomes.count("skipped")),
    }
    for element in (root, suite):
        element.attrib.update(counts)
    ET.indent(root)
    text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return text + b"\n"


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


@dataclass(frozen=True)
class VerdictExport:
    """What an export wrote.

    Attributes:
        run_id: The run exported.
        format: ``junit``, ``otel`` or ``openinference``.
        out: The file written.
        cases: Cases of the run.
        records: Test cases (JUnit) or evaluations (OTLP, OpenInference) written.
        posted: The URL the OTLP request was posted to, if an endpoint was named (credentials
            shown as ``***``).
        status: The endpoint's HTTP status.
    """

    run_id: str
    format: str
    out: str
    cases: int
    records: int
    posted: str | None = None
    status: int | None = None


def export_verdicts(
    project: Project,
    run_ref: str,
    fmt: VerdictFormat,
    out: Path,
    *,
    endpoint: str | None = None,
    timeout_s: float = 10.0,
    env: Mapping[str, str] | None = None,
) -> VerdictExport:
    """Write a run's verdicts as JUnit XML, OTLP/JSON or OpenInference annotations (atomically).

    With ``endpoint`` (``otel`` only), the same OTLP request is also POSTed to
    ``<endpoint>/v1/logs`` (OTLP/HTTP, JSON encoding); the file is written first. The
    endpoint's ``user:password@`` becomes a Basic ``Authorization`` header, and the headers of
    ``OTEL_EXPORTER_OTLP_LOGS_HEADERS`` or ``OTEL_EXPORTER_OTLP_HEADERS`` (in ``env``, default
    the process environment) are sent too; no message or result shows a credential.

    Raises:
        UsageError: Unknown run, ``endpoint`` given for another format, not an http(s) URL, or
            a malformed header variable (checked before anything is written).
        CaseworkError: The endpoint is unreachable or refuses the request.
    """
    if endpoint is not None and fmt != "otel":
        raise UsageError("only the `otel` export posts to an endpoint.", param="endpoint")
    target = None if endpoint is None else otlp_target(endpoint, os.environ if env is None else env)
    run = load_run(project, run_ref)
    cases = len({t.case_id for t in run.trials})
    if fmt == "junit":
        body, records = junit_xml(run), cases
    else:
        payload = otlp_logs(run) if fmt == "otel" else openinference_annotations(run)
        body = json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
        records = sum(len(evaluations(t)) for t in run.trials)
    atomic_write_bytes(out, body)
    status = post_otlp(target, body, timeout_s) if target is not None else None
    return VerdictExport(
        run.header.run_id,
        fmt,
        project.relative(out),
        cases,
        records,
        target.shown if target is not None else None,
        status,
    )

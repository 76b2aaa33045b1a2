"""`casework export junit|otel|openinference`: a run's verdicts written in another tool's format.

JUnit XML is for any CI; OTLP `gen_ai.evaluation.result` events and OpenInference span
annotations (Phoenix) put the verdicts beside the traces in observability tools. Annotations are
sent to Phoenix only for spans it holds; the rest are listed with the reason.

Entry point: :func:`export_verdicts` (project level: loads the run, writes atomically, posts to
an OTLP/HTTP endpoint when one is named) over the renderers of each format:
:func:`~casework.interop.junit.junit_xml`, :func:`~casework.interop.otel.otlp_logs` and
:func:`~casework.interop.openinference.openinference_annotations`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from casework.atomic import atomic_write_bytes
from casework.errors import UsageError
from casework.interop.evaluations import evaluations
from casework.interop.junit import junit_xml
from casework.interop.openinference import (
    DEFAULT_PROJECT,
    SkippedTrial,
    openinference_annotations,
    phoenix_target,
    post_to_phoenix,
)
from casework.interop.otel._http import otlp_target, post_otlp
from casework.interop.otel._logs import otlp_logs
from casework.project import Project
from casework.runner import load_run

VerdictFormat = Literal["junit", "otel", "openinference"]
#: The formats a run's verdicts are exported in.
VERDICT_FORMATS: tuple[VerdictFormat, ...] = get_args(VerdictFormat)


@dataclass(frozen=True)
class VerdictExport:
    """What an export wrote.

    Attributes:
        run_id: The run exported.
        format: ``junit``, ``otel`` or ``openinference``.
        out: The file written.
        cases: Cases of the run.
        records: Test cases (JUnit) or evaluations (OTLP, OpenInference) written.
        posted: The URL the OTLP request or the annotations were posted to, if an endpoint was
            named (credentials shown as ``***``).
        status: The endpoint's HTTP status.
        sent: Annotations Phoenix stored (``openinference`` with an endpoint).
        skipped: Trials whose annotations were not sent to Phoenix, with the reason.
    """

    run_id: str
    format: str
    out: str
    cases: int
    records: int
    posted: str | None = None
    status: int | None = None
    sent: int | None = None
    skipped: tuple[SkippedTrial, ...] = ()


def export_verdicts(
    project: Project,
    run_ref: str,
    fmt: VerdictFormat,
    out: Path,
    *,
    endpoint: str | None = None,
    timeout_s: float = 10.0,
    env: Mapping[str, str] | None = None,
    project_name: str = DEFAULT_PROJECT,
) -> VerdictExport:
    """Write a run's verdicts as JUnit XML, OTLP/JSON or OpenInference annotations (atomically).

    With ``endpoint`` (``otel`` only), the same OTLP request is also POSTed to
    ``<endpoint>/v1/logs`` (OTLP/HTTP, JSON encoding); the file is written first. The
    endpoint's ``user:password@`` becomes a Basic ``Authorization`` header, and the headers of
    ``OTEL_EXPORTER_OTLP_LOGS_HEADERS`` or ``OTEL_EXPORTER_OTLP_HEADERS`` (in ``env``, default
    the process environment) are sent too; no message or result shows a credential.

    With ``endpoint`` (``openinference``), the URL of a Phoenix server: the annotations of spans
    that Phoenix project ``project_name`` holds are sent (``PHOENIX_API_KEY`` as a Bearer token),
    and every other trial is listed in ``skipped`` with the reason (see
    :func:`~casework.interop.openinference.post_to_phoenix`); the file holds them all.

    Raises:
        UsageError: Unknown run, ``endpoint`` given for JUnit, not an http(s) URL, or
            a malformed header variable (checked before anything is written).
        CaseworkError: The endpoint is unreachable or refuses the request, or Phoenix holds none
            of the run's spans.
    """
    environ = os.environ if env is None else env
    if endpoint is not None and fmt == "junit":
        raise UsageError(
            "only the `otel` and `openinference` exports post to an endpoint.", param="endpoint"
        )
    target = None if endpoint is None or fmt != "otel" else otlp_target(endpoint, environ)
    phoenix = (
        None
        if endpoint is None or fmt != "openinference"
        else phoenix_target(endpoint, project_name, environ)
    )
    run = load_run(project, run_ref)
    cases = len({t.case_id for t in run.trials})
    if fmt == "junit":
        body, records = junit_xml(run), cases
    else:
        payload = otlp_logs(run) if fmt == "otel" else openinference_annotations(run)
        body = json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
        records = sum(len(evaluations(t)) for t in run.trials)
    atomic_write_bytes(out, body)
    if phoenix is not None:
        sent = post_to_phoenix(run, phoenix, timeout_s=timeout_s)
        return VerdictExport(
            run.header.run_id,
            fmt,
            project.relative(out),
            cases,
            records,
            phoenix.shown,
            sent.status,
            sent.sent,
            sent.skipped,
        )
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

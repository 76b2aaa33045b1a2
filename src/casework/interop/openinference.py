"""A run's verdicts as OpenInference span annotations (Phoenix), beside the traces.

Entry points: :func:`openinference_annotations` (pure: the body of Phoenix's
``POST /v1/span_annotations``), :func:`phoenix_target` (check a Phoenix URL before anything is
written) and :func:`post_to_phoenix` (send only the annotations whose span Phoenix holds, and say
why each other one was left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from casework.errors import CaseworkError, UsageError
from casework.interop.evaluations import evaluations, reported_ids, trace_ids
from casework.runner.records import LoadedRun

#: The variable Phoenix's own client reads its API key from (sent as a Bearer token).
PHOENIX_API_KEY = "PHOENIX_API_KEY"
#: The Phoenix project the spans are looked up in when none is named (Phoenix's own default).
DEFAULT_PROJECT = "default"
#: Span ids asked about per ``GET /v1/projects/{project}/spans`` (its ``span_id`` filter).
_IDS_PER_QUERY = 100
#: Why a trial's annotations are left out when its agent reported no span.
NO_SPAN_REPORTED = (
    "the agent reported no span id (trajectory.metadata.trace_id / span_id), so the annotation "
    "would name a span casework derived, which no tracer wrote"
)


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
class PhoenixTarget:
    """A Phoenix server and project, with the credentials kept out of every message.

    Attributes:
        base: The server's URL without credentials (``http://host:6006``).
        shown: The URL as messages show it (``***@`` where credentials were).
        project: The project whose spans are annotated.
        headers: Headers sent with every request (never shown, nor in ``repr``).
    """

    base: str
    shown: str
    project: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)


def phoenix_target(endpoint: str, project_name: str, env: Mapping[str, str]) -> PhoenixTarget:
    """Check a Phoenix URL and gather its credentials (``PHOENIX_API_KEY``, a Bearer token).

    Raises:
        UsageError: Not an http(s) URL with a host, user information in it, or a project name
            Phoenix cannot look up (empty, or holding ``/``, ``?`` or ``#``).
    """
    try:
        parts = urlsplit(endpoint.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        parts, host, port = None, None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        shown = f"***@{endpoint.rpartition('@')[2]}" if "@" in endpoint else endpoint
        raise UsageError(
            f"expected the http:// or https:// URL of a Phoenix server. Got '{shown}'.",
            param="endpoint",
        )
    if "@" in parts.netloc:
        raise UsageError(
            f"Phoenix takes its API key from {PHOENIX_API_KEY}, not from the URL. "
            f"Got '***@{parts.netloc.rpartition('@')[2]}'.",
            param="endpoint",
        )
    if not project_name or any(c in project_name for c in "/?#"):
        raise UsageError(
            f"expected a Phoenix project name, without '/', '?' or '#'. Got '{project_name}'.",
            param="project_name",
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    key = env.get(PHOENIX_API_KEY, "").strip()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return PhoenixTarget(base, base, project_name, headers)


@dataclass(frozen=True)
class SkippedTrial:
    """A trial whose annotations were not sent, and why.

    Attributes:
        case_id: The trial's case.
        trial: The trial's number.
        span_id: The span its annotations name (hex).
        evaluations: How many annotations were left out.
        reason: Why.
    """

    case_id: str
    trial: int
    span_id: str
    evaluations: int
    reason: str


@dataclass(frozen=True)
class PhoenixPost:
    """What :func:`post_to_phoenix` sent.

    Attributes:
        sent: Annotations Phoenix stored (their span is in the project).
        skipped: Trials left out, with the reason (no span reported, or the span is absent).
        status: Phoenix's HTTP status for the annotations (``None``: nothing to send).
    """

    sent: int
    skipped: tuple[SkippedTrial, ...]
    status: int | None


def post_to_phoenix(
    run: LoadedRun, target: PhoenixTarget, *, timeout_s: float = 10.0
) -> PhoenixPost:
    """Send the run's annotations whose span the Phoenix project holds; report the others.

    Phoenix accepts an annotation of a span it does not hold and stores nothing, so casework
    asks first (``GET /v1/projects/{project}/spans?span_id=…``) and posts only annotations of
    spans that are there (``POST /v1/span_annotations?sync=true``). A trial whose agent reported
    no span id, or whose span is not in the project (or is there under another trace), is left
    out and listed with the reason.

    Raises:
        CaseworkError: Phoenix is unreachable, has no such project, refuses a request, or holds
            none of the run's spans (nothing could be sent).
    """
    import httpx  # here: only an export that posts pays for its import

    by_trial: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for item in openinference_annotations(run)["data"]:
        meta = item["metadata"]
        by_trial.setdefault((meta["case_id"], meta["trial"]), []).append(item)
    skipped: list[SkippedTrial] = []
    wanted: dict[str, tuple[str, tuple[str, int]]] = {}
    for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial)):
        key = (t.case_id, t.trial)
        ids = reported_ids(t)
        if ids is None:
            span = trace_ids(run.header.run_id, t)[1]
            skipped.append(
                SkippedTrial(t.case_id, t.trial, span, len(by_trial[key]), NO_SPAN_REPORTED)
            )
        else:
            wanted[ids[1]] = (ids[0], key)
    with httpx.Client(
        base_url=target.base,
        headers=target.headers,
        timeout=timeout_s,
        follow_redirects=False,
        trust_env=False,
    ) as client:
        held = _spans_held(client, target, sorted(wanted))
        data: list[dict[str, Any]] = []
        for span, (trace, key) in sorted(wanted.items(), key=lambda kv: kv[1][1]):
            where = held.get(span)
            if where == trace:
                data.extend(by_trial[key])
                continue
            reason = (
                f"span {span} is not in Phoenix project '{target.project}'"
                if where is None
                else f"span {span} is in Phoenix project '{target.project}' under trace "
                f"{where}, not the trace {trace} the agent reported"
            )
            skipped.append(SkippedTrial(key[0], key[1], span, len(by_trial[key]), reason))
        skipped.sort(key=lambda s: (s.case_id, s.trial))
        if not data:
            total = sum(len(v) for v in by_trial.values())
            why = "; ".join(sorted({s.reason for s in skipped})) or "the run has no trials"
            raise CaseworkError(
                f"sent none of {total} annotation(s) to Phoenix {target.shown}: {why}"
            )
        response = _request(client, target, "POST", "/v1/span_annotations", json={"data": data},
                            params={"sync": "true"})  # fmt: skip
    return PhoenixPost(len(data), tuple(skipped), response.status_code)


def _spans_held(client: Any, target: PhoenixTarget, span_ids: list[str]) -> dict[str, str]:
    """Which of ``span_ids`` the project holds: span id → its trace id (both lower-case hex)."""
    path = f"/v1/projects/{quote(target.project, safe='')}/spans"
    held: dict[str, str] = {}
    for start in range(0, len(span_ids), _IDS_PER_QUERY):
        chunk = span_ids[start : start + _IDS_PER_QUERY]
        cursor: str | None = None
        while True:
            params: list[tuple[str, str]] = [("span_id", s) for s in chunk]
            params.append(("limit", str(len(chunk))))
            if cursor:
                params.append(("cursor", cursor))
            response = _request(client, target, "GET", path, params=params)
            try:
                body = response.json()
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                raise CaseworkError(
                    f"Phoenix {target.shown} answered GET {path} with something that is not its "
                    f"span list: {response.text[:200]!r}"
                )
            for span in body["data"]:
                context = span.get("context") if isinstance(span, dict) else None
                if isinstance(context, dict):
                    held[str(context.get("span_id", "")).lower()] = str(
                        context.get("trace_id", "")
                    ).lower()
            cursor = body.get("next_cursor")
            if not isinstance(cursor, str) or not cursor:
                break
    return held


def _request(client: Any, target: PhoenixTarget, method: str, path: str, **kwargs: Any) -> Any:
    import httpx

    try:
        response = client.request(method, path, **kwargs)
    except httpx.HTTPError as exc:
        raise CaseworkError(
            f"Phoenix {target.shown} unreachable: {type(exc).__name__}: {exc}"
        ) from None
    if response.status_code == 404 and method == "GET":
        raise CaseworkError(f"Phoenix {target.shown} has no project '{target.project}'")
    if response.status_code >= 300:
        raise CaseworkError(
            f"Phoenix {target.shown} refused {method} {path}: HTTP {response.status_code}: "
            f"{response.text[:300]}"
        )
    return response

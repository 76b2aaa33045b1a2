"""OpenTelemetry: OTLP/JSON events checked against the protobuf JSON mapping and the semantic
convention; posting to an OTLP/HTTP endpoint with credentials sent as headers, never printed."""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import Result

from casework.errors import UsageError
from casework.interop.evaluations import trace_ids
from casework.interop.otel._http import otlp_target
from casework.interop.otel._logs import EVALUATION_EVENT, otlp_logs
from tests.interop.sample_run import sample_run, write_sample_run

Run = Callable[..., Result]
PASSWORD = "p@ss:w0rd/ü"
#: As written in a URL: percent-encoded.
QUOTED = "p%40ss%3Aw0rd%2F%C3%BC"
BASIC = "Basic " + base64.b64encode(f"ingest:{PASSWORD}".encode()).decode()


_CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
#: Fields of the OTLP logs messages (opentelemetry-proto logs.proto, common.proto, resource.proto),
#: in their JSON (lowerCamelCase) names.
_FIELDS = {
    "request": {"resourceLogs"},
    "resourceLogs": {"resource", "scopeLogs", "schemaUrl"},
    "resource": {"attributes", "droppedAttributesCount"},
    "scopeLogs": {"scope", "logRecords", "schemaUrl"},
    "scope": {"name", "version", "attributes", "droppedAttributesCount"},
    "logRecord": {
        "timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText", "body",
        "attributes", "droppedAttributesCount", "flags", "traceId", "spanId", "eventName",
    },
}  # fmt: skip
_ANY = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue"}


def _check_attributes(attrs: Any) -> dict[str, Any]:
    assert isinstance(attrs, list)
    out: dict[str, Any] = {}
    for kv in attrs:
        assert set(kv) == {"key", "value"} and isinstance(kv["key"], str)
        [(kind, value)] = kv["value"].items()
        assert kind in _ANY
        if kind == "intValue":  # int64: a decimal string in the JSON mapping
            assert isinstance(value, str) and re.fullmatch(r"-?\d+", value)
        out[kv["key"]] = value
    return out


def _walk_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            if k != "value" or not isinstance(v, dict):
                yield from _walk_keys(v)
            else:
                yield from _walk_keys(list(v.values()))
    elif isinstance(value, list):
        for v in value:
            yield from _walk_keys(v)


def validate_otlp_logs(request: Any) -> list[dict[str, Any]]:
    """Check an ExportLogsServiceRequest in OTLP/JSON; return each record's attributes."""
    assert set(request) <= _FIELDS["request"]
    assert all(_CAMEL.match(k) for k in _walk_keys(request) if not k.startswith("gen_ai"))
    records = []
    for rl in request["resourceLogs"]:
        assert set(rl) <= _FIELDS["resourceLogs"] and set(rl["resource"]) <= _FIELDS["resource"]
        _check_attributes(rl["resource"]["attributes"])
        for sl in rl["scopeLogs"]:
            assert set(sl) <= _FIELDS["scopeLogs"] and set(sl["scope"]) <= _FIELDS["scope"]
            for rec in sl["logRecords"]:
                assert set(rec) <= _FIELDS["logRecord"]
                assert re.fullmatch(r"[0-9a-f]{32}", rec["traceId"]) and rec["traceId"] != "0" * 32
                assert re.fullmatch(r"[0-9a-f]{16}", rec["spanId"]) and rec["spanId"] != "0" * 16
                for key in ("timeUnixNano", "observedTimeUnixNano"):  # fixed64: a string
                    assert isinstance(rec[key], str) and rec[key].isdigit()
                assert isinstance(rec["severityNumber"], int) and 1 <= rec["severityNumber"] <= 24
                records.append({"_rec": rec, **_check_attributes(rec["attributes"])})
    return records


def test_otlp_events_follow_the_json_mapping_and_the_semantic_convention() -> None:
    records = validate_otlp_logs(json.loads(json.dumps(otlp_logs(sample_run()))))
    assert len(records) == 6 + 9  # a verdict per trial, an evaluation per check
    assert {r["_rec"]["eventName"] for r in records} == {EVALUATION_EVENT}
    assert records[0]["_rec"]["timeUnixNano"] == "1796040000250000000"  # 2026-11-30T12:00:00.25Z
    b1 = [r for r in records if r["casework.case_id"] == "b" and r["casework.trial"] == "1"]
    assert [r["gen_ai.evaluation.name"] for r in b1] == [
        "casework.verdict", "casework.required_tools", "casework.outcome",
    ]  # fmt: skip
    assert [r["gen_ai.evaluation.score.label"] for r in b1] == ["fail", "fail", "fail"]
    assert b1[0]["gen_ai.evaluation.score.value"] == 0.0
    assert b1[2]["gen_ai.evaluation.explanation"] == "asked instead"
    assert b1[2]["casework.judged"] is True
    # The trial's own trace ids (from the agent) are kept, lower-cased.
    assert b1[0]["_rec"]["traceId"] == "5b8efff798038103d269b633813fc60c"
    assert b1[0]["_rec"]["spanId"] == "eee19b7ec3c1b174"
    c0 = next(r for r in records if r["casework.case_id"] == "c")
    assert "gen_ai.evaluation.score.value" not in c0  # undetermined: no score, a label
    assert c0["gen_ai.evaluation.score.label"] == "undetermined"
    d0 = next(r for r in records if r["casework.case_id"] == "d")
    assert d0["gen_ai.evaluation.explanation"] == "frozen case: evidence withheld"
    a = sample_run().trials[0]
    assert trace_ids("r-7", a) == trace_ids("r-7", a) != trace_ids("r-8", a)


class _Guarded(BaseHTTPRequestHandler):
    """An OTLP collector that wants one Authorization header (and records what it got)."""

    expected: ClassVar[dict[str, str]] = {}
    received: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        headers = {k.lower(): v for k, v in self.headers.items()}
        _Guarded.received.append((self.path, headers, body))
        ok = all(headers.get(k.lower()) == v for k, v in _Guarded.expected.items())
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Guarded.received = []
    _Guarded.expected = {"Authorization": BASIC}
    server = HTTPServer(("127.0.0.1", 0), _Guarded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _leaks(result: Result) -> list[str]:
    token = BASIC.split()[1]
    text = result.stdout + result.stderr
    return [s for s in (PASSWORD, QUOTED, "p@ss", "w0rd", token) if s in text]


def test_userinfo_is_sent_as_basic_auth_and_never_printed(
    project_dir: Path, run_cli: Run, collector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    run = write_sample_run(project_dir)
    endpoint = f"http://ingest:{QUOTED}@{collector}/"
    out = run_cli("export", "otel", run, "-o", "otel.json", "--endpoint", endpoint)
    assert out.exit_code == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"posted to http://***@{collector}/v1/logs: HTTP 200"
    [(path, headers, body)] = _Guarded.received
    assert path == "/v1/logs" and headers["authorization"] == BASIC
    assert json.loads(body) == json.loads((project_dir / "otel.json").read_text())
    assert _leaks(out) == []
    as_json = run_cli(
        "export", "otel", run, "-o", "otel.json", "--endpoint", endpoint, "--format", "json"
    )
    assert json.loads(as_json.stdout)["posted"] == f"http://***@{collector}/v1/logs"
    assert _leaks(as_json) == []


def test_a_refused_password_is_reported_without_it(
    project_dir: Path, run_cli: Run, collector: str
) -> None:
    run = write_sample_run(project_dir)
    endpoint = f"http://ingest:{QUOTED}x@{collector}"
    out = run_cli("export", "otel", run, "-o", "otel.json", "--endpoint", endpoint)
    assert out.exit_code == 1
    assert out.stderr == (f"endpoint http://***@{collector}/v1/logs refused the events: HTTP 401\n")
    assert _leaks(out) == []
    down = run_cli(
        "export", "otel", run, "-o", "o.json", "--endpoint", f"http://ingest:{QUOTED}@127.0.0.1:9"
    )
    assert down.exit_code == 1 and "http://***@127.0.0.1:9/v1/logs unreachable" in down.stderr
    assert _leaks(down) == []


def test_headers_come_from_the_otel_exporter_variables(
    project_dir: Path, run_cli: Run, collector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _Guarded.expected = {"Authorization": "Bearer s3cr3t-t0ken", "x-tenant": "acme co"}
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=wrong")
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "Authorization=Bearer%20s3cr3t-t0ken, x-tenant=acme%20co"
    )
    run = write_sample_run(project_dir)
    out = run_cli("export", "otel", run, "-o", "otel.json", "--endpoint", f"http://{collector}")
    assert out.exit_code == 0, out.stderr
    assert "s3cr3t" not in out.stdout + out.stderr
    both = run_cli(
        "export", "otel", run, "-o", "otel.json", "--endpoint", f"http://u:{QUOTED}@{collector}"
    )
    assert both.exit_code == 2 and _leaks(both) == []
    assert both.stderr == (
        "--endpoint: both the URL's user:password and OTEL_EXPORTER_OTLP_LOGS_HEADERS set an "
        "Authorization header; keep one.\n"
    )


@pytest.mark.parametrize(
    ("endpoint", "env", "message"),
    [
        (
            f"ftp://ingest:{QUOTED}@host/",
            {},
            "endpoint: expected an http:// or https:// URL with a host. Got '***@host/'.",
        ),
        (
            f"http://ingest:{QUOTED}@host:port/",
            {},
            "endpoint: expected an http:// or https:// URL with a host. Got '***@host:port/'.",
        ),
        (
            "http://host",
            {"OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Basic {QUOTED},{PASSWORD}"},
            "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value (the value is not shown; "
            "headers are comma-separated key=value pairs, values percent-encoded).",
        ),
    ],
)
def test_bad_endpoints_and_headers_are_refused_without_their_secrets(
    endpoint: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError) as info:
        otlp_target(endpoint, env)
    assert str(info.value) == message
    assert PASSWORD not in repr(info.value) and QUOTED not in repr(info.value)


def test_the_target_never_shows_its_headers() -> None:
    target = otlp_target(f"https://ingest:{QUOTED}@[::1]:4318/otlp?x=1", {})
    assert target.url == "https://[::1]:4318/otlp/v1/logs?x=1"
    assert target.shown == "https://***@[::1]:4318/otlp/v1/logs?x=1"
    assert target.headers == {"Authorization": BASIC}
    assert PASSWORD not in repr(target) and BASIC not in repr(target)
    assert target.scrub(f"failed with {BASIC} for {PASSWORD}") == "failed with *** for ***"

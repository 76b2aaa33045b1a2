"""Posting to an OTLP/HTTP endpoint with credentials: sent as headers, never printed."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import Result

from casework.errors import UsageError
from casework.interop.otel import otlp_target
from tests.interop.test_verdicts_out import _write_run

Run = Callable[..., Result]
PASSWORD = "p@ss:w0rd/ü"
#: As written in a URL: percent-encoded.
QUOTED = "p%40ss%3Aw0rd%2F%C3%BC"
BASIC = "Basic " + base64.b64encode(f"ingest:{PASSWORD}".encode()).decode()


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
    run = _write_run(project_dir)
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
    run = _write_run(project_dir)
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
    run = _write_run(project_dir)
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

"""`casework export junit|otel|openinference`: files written, OTLP posted to a loopback server."""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import Result

from tests.interop.sample_run import write_sample_run
from tests.interop.test_otel import validate_otlp_logs

Run = Callable[..., Result]


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Collector.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_cli_exports_and_posts_to_an_otlp_endpoint(
    project_dir: Path, run_cli: Run, collector: str
) -> None:
    run = write_sample_run(project_dir)
    out = run_cli("export", "junit", run, "-o", "ci/junit.xml")
    assert out.exit_code == 0, out.stderr
    assert out.stdout.strip() == "r-7: wrote 4 test case(s) to ci/junit.xml"
    assert ET.parse(project_dir / "ci" / "junit.xml").getroot().tag == "testsuites"
    out = run_cli("export", "otel", run, "-o", "otel.json", "--endpoint", collector)
    assert out.exit_code == 0, out.stderr
    assert f"posted to {collector}/v1/logs: HTTP 200" in out.stdout
    [(path, kind, body)] = _Collector.received
    assert path == "/v1/logs" and kind == "application/json"
    assert json.loads(body) == json.loads((project_dir / "otel.json").read_text())
    validate_otlp_logs(json.loads(body))
    out = run_cli("export", "openinference", run, "-o", "oi.json", "--format", "json")
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["records"] == 15
    bad = run_cli("export", "junit", run, "--endpoint", collector)
    assert bad.exit_code == 2  # the option exists only for otel
    down = run_cli("export", "otel", run, "-o", "o2.json", "--endpoint", "http://127.0.0.1:9")
    assert down.exit_code == 1 and "unreachable" in down.stderr
    missing = run_cli("export", "junit", "nope", "-o", "x.xml")
    assert missing.exit_code == 2 and not (project_dir / "x.xml").exists()

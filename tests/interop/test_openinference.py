"""A run's verdicts as OpenInference span annotations."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from click.testing import Result

from casework.interop.openinference import openinference_annotations
from tests.interop.sample_run import sample_run, write_sample_run

Run = Callable[..., Result]


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


def test_bad_phoenix_urls_and_project_names_are_refused_before_writing(
    project_dir: Path, run_cli: Run
) -> None:
    run_id = write_sample_run(project_dir)
    for args, message in [
        (("--endpoint", "localhost:6006"), "expected the http:// or https:// URL of a Phoenix"),
        (
            ("--endpoint", "http://me:secret@localhost:6006"),
            "takes its API key from PHOENIX_API_KEY",
        ),
        (("--endpoint", "http://localhost:6006", "--phoenix-project", "a/b"), "project name"),
    ]:
        out = run_cli("export", "openinference", run_id, "-o", "x.json", *args)
        assert out.exit_code == 2, out.output
        assert message in out.stderr and "secret" not in out.stderr
    assert not (project_dir / "x.json").exists()


class _NotPhoenix(BaseHTTPRequestHandler):
    """Answers every request with a JSON list: not the span list Phoenix answers."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"[1, 2]")

    def log_message(self, format: str, *args: Any) -> None:
        return


def test_a_server_that_is_not_phoenix_or_is_down_is_an_error_not_a_traceback(
    project_dir: Path, run_cli: Run
) -> None:
    run_id = write_sample_run(project_dir)
    server = HTTPServer(("127.0.0.1", 0), _NotPhoenix)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        out = run_cli("export", "openinference", run_id, "-o", "x.json", "--endpoint", url)
    finally:
        server.shutdown()
        server.server_close()
    assert out.exit_code == 1
    assert out.stderr.startswith(
        f"Phoenix {url} answered GET /v1/projects/default/spans with something that is not its "
        "span list: '[1, 2]'"
    ), out.stderr
    down = run_cli(
        "export", "openinference", run_id, "-o", "x.json", "--endpoint", "http://127.0.0.1:9"
    )
    assert down.exit_code == 1
    assert down.stderr.startswith("Phoenix http://127.0.0.1:9 unreachable: ConnectError"), (
        down.stderr
    )

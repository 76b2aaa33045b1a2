"""Serving under load: keep-alive outlives clients' idle pools; the demo probes readiness."""

from __future__ import annotations

import http.client
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from casework.project import Project
from casework.web import serve
from casework.web._app import HTTPS_ENV, KEEP_ALIVE_SECONDS, PROJECT_ENV, server_options
from tests.web.live import free_port

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _serving(app: FastAPI) -> Iterator[int]:
    """``app`` under uvicorn with the options `casework serve` uses; yields the port."""
    port = free_port()
    config = uvicorn.Config(app, **server_options("127.0.0.1", port), lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def test_the_keep_alive_outlives_the_clients_idle_pools() -> None:
    bench = _module(ROOT / "benchmarks" / "web_bench.py")
    client_idle = [httpx.Limits().keepalive_expiry, bench.CLIENT_KEEPALIVE_SECONDS, 60.0]
    assert all(idle is not None and idle < KEEP_ALIVE_SECONDS for idle in client_idle)


# The connection's life is uvicorn's, not the workbench's: one backend is enough for its 6.5 s wait.
@pytest.mark.parametrize("workbench_url", ["sqlite"], indirect=True)
def test_an_idle_connection_is_still_open_after_uvicorns_default_keep_alive(app: FastAPI) -> None:
    with _serving(app) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/static/app.css")
        first = conn.getresponse()
        first.read()
        sock = conn.sock
        time.sleep(6.5)  # idle past uvicorn's default of 5 s, as a pooled client may be
        conn.request("GET", "/static/app.css")
        again = conn.getresponse()  # RemoteDisconnected when the server closed it
        again.read()
        assert (first.status, again.status) == (200, 200)
        assert conn.sock is sock  # the same connection, not a new one
        conn.close()


def test_serve_runs_uvicorn_with_the_keep_alive(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append((app, options)))
    for name in (PROJECT_ENV, HTTPS_ENV, "CASEWORK_WEB_DB_POOL"):
        monkeypatch.setenv(name, "")  # serve sets them for its workers; restored after
    serve(project, host="127.0.0.1", port=8765)
    serve(project, host="127.0.0.1", port=8765, workers=2)
    calls[0][0].state.workbench.close()
    assert [options["timeout_keep_alive"] for _, options in calls] == [KEEP_ALIVE_SECONDS] * 2
    assert calls[1][1]["workers"] == 2


class _Static(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return


def test_the_demo_waits_for_the_server_by_probing_http() -> None:
    demo = _module(ROOT / "scripts" / "web_demo.py")
    assert demo.READY_LIMIT_SECONDS >= 60  # a server that took 9.5 s to start is waited for
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    started: list[http.server.ThreadingHTTPServer] = []

    def start_late() -> None:
        time.sleep(1.5)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Static)
        started.append(server)
        server.serve_forever()

    thread = threading.Thread(target=start_late, daemon=True)
    thread.start()
    try:
        waited = demo.wait_until_serving(base, os.getpid(), limit=30)
    finally:
        while not started:
            time.sleep(0.05)
        started[0].shutdown()
        started[0].server_close()
    assert 1.4 < waited < 30


def test_the_demo_stops_waiting_when_the_server_exits() -> None:
    demo = _module(ROOT / "scripts" / "web_demo.py")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    start = time.monotonic()
    with pytest.raises(SystemExit, match=f"the server \\(pid {gone.pid}\\) exited"):
        demo.wait_until_serving(f"http://127.0.0.1:{free_port()}", gone.pid)
    assert time.monotonic() - start < 10


def test_the_tour_web_step_probes_the_server_it_started() -> None:
    script = (ROOT / "scripts" / "tour.sh").read_text()
    step = script.split("# --- 11.", 1)[1].split("# --- 12.", 1)[0]
    assert re.search(r'casework serve --port "\$port" & server=\$!', step)
    assert re.search(r'web_demo\.py" "\$link" "\$server"', step)
    assert "sleep" not in step

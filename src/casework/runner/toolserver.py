"""The loopback HTTP fixture tool server that `http:` and `cmd:` agents call during a run.

One server per run on ``127.0.0.1`` (a free port); each trial registers its :class:`ToolSession`
under a random token and hands the agent ``http://127.0.0.1:PORT/t/TOKEN`` as ``tool_server``.
Protocol (documented in ``docs/agents.md``): ``GET {tool_server}/tools`` lists the tools,
``POST {tool_server}/tools/{name}`` with a JSON object of arguments answers
``{"result": ...}`` or ``{"error": "..."}`` (HTTP 200 either way: a tool error is a tool result).
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from casework.decoding import BadJSON, parse_json
from casework.runner.fixtures import ToolSession

__all__ = ["ToolServer"]

_MAX_BODY = 10 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    sessions: dict[str, ToolSession]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the console quiet (calls are recorded in the run log instead)."""

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> tuple[ToolSession | None, list[str]]:
        parts = [p for p in self.path.split("?", 1)[0].split("/") if p]
        if len(parts) < 3 or parts[0] != "t" or parts[2] != "tools":
            return None, []
        return self.server.sessions.get(parts[1]), parts[3:]

    def do_GET(self) -> None:
        """``GET /t/TOKEN/tools``: the tool catalogue."""
        session, rest = self._route()
        if session is None or rest:
            self._send(404, {"error": "unknown trial or path; use GET {tool_server}/tools"})
            return
        self._send(200, {"tools": [t.model_dump() for t in session.catalogue]})

    def do_POST(self) -> None:
        """``POST /t/TOKEN/tools/NAME`` with a JSON object of arguments."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(min(length, _MAX_BODY)) if length else b""
        session, rest = self._route()
        if session is None or len(rest) != 1:
            self._send(404, {"error": "unknown trial or path; use POST {tool_server}/tools/{name}"})
            return
        try:
            arguments = parse_json(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, BadJSON) as exc:
            self._send(400, {"error": f"request body is not JSON: {exc}"})
            return
        if not isinstance(arguments, dict):
            self._send(400, {"error": "request body must be a JSON object of arguments"})
            return
        self._send(200, session.call(rest[0], arguments).as_json())


class ToolServer:
    """A loopback HTTP server exposing the tool sessions of running trials.

    Use as a context manager; :meth:`register` returns the ``tool_server`` URL for a session.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.sessions = {}
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ToolServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="casework-tool-server", daemon=True
        )
        self._thread.start()
        return self

    def register(self, session: ToolSession) -> tuple[str, str]:
        """Serve ``session``; returns ``(token, tool_server URL)``."""
        token = secrets.token_hex(12)
        self._server.sessions[token] = session
        return token, f"{self.base_url}/t/{token}"

    def unregister(self, token: str) -> None:
        """Stop serving a trial's session (later calls get 404)."""
        self._server.sessions.pop(token, None)

    def close(self) -> None:
        """Stop the server and free the port."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ToolServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

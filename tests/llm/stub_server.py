"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: replies follow a queue of actions."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Action:
    """What the server does with one request."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None


def chat_reply(text: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> Action:
    return Action(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def embeddings_reply(vectors: list[list[float]], prompt_tokens: int = 7) -> Action:
    return Action(
        body={
            "object": "list",
            "model": "stub-embed",
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
        }
    )


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Action:
    return Action(
        status=status,
        body={"error": {"message": message, "type": "stub_error", "code": None}},
        headers=headers or {},
    )


class StubServer:
    """Serves queued actions in order; when the queue is empty, ``fallback`` answers."""

    def __init__(self) -> None:
        self.actions: deque[Action] = deque()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.fallback: Callable[[dict[str, Any]], Action] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def queue(self, *actions: Action) -> None:
        with self._lock:
            self.actions.extend(actions)

    def _next(self, body: dict[str, Any]) -> Action:
        with self._lock:
            if self.actions:
                return self.actions.popleft()
        if self.fallback is not None:
            return self.fallback(body)
        return error_reply(500, "stub server: no action queued")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    action = server._next(body)
                    if action.delay:
                        server._stop.wait(action.delay)
                    payload = (
                        action.raw if action.raw is not None else json.dumps(action.body).encode()
                    )
                    self.send_response(action.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for k, v in action.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@contextmanager
def running_stub() -> Iterator[StubServer]:
    server = StubServer().start()
    try:
        yield server
    finally:
        server.stop()

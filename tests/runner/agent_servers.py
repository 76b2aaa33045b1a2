"""An HTTP agent and a command agent for the adapter tests (loopback only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

#: A `cmd:` agent: reads the input on stdin, calls get_order over the tool server, prints JSON.
CMD_AGENT = r"""
import json, os, sys, urllib.request
request = json.load(sys.stdin)
with open(os.environ["SPY_FILE"], "a") as spy:
    spy.write(json.dumps(request) + "\n")
base = os.environ["CASEWORK_TOOL_SERVER"]
assert base == request["tool_server"]
order = request["turns"][-1]["content"].split()[-1]
def call(name, args):
    req = urllib.request.Request(base + "/tools/" + name, data=json.dumps(args).encode(), headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
got = call("get_order", {"order_id": order})
if got["result"]["status"] == "delivered":
    call("issue_refund", {"order_id": order, "amount": got["result"]["total"]})
    print("log line before the trajectory")
    print(json.dumps({"final_reply": "refunded", "outcome": "resolve", "agent_version": "cmd-1"}))
else:
    print(json.dumps({"final_reply": "Sorry, I cannot refund that yet.", "outcome": "refuse"}))
"""


def write_cmd_agent(folder: Path) -> Path:
    path = folder / "cmd_agent.py"
    path.write_text(CMD_AGENT, encoding="utf-8")
    return path


@contextmanager
def http_agent(received: list[dict[str, Any]], *, status: int = 200) -> Iterator[str]:
    """Serve a refund agent on 127.0.0.1; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            if status != 200:
                self.send_response(status)
                self.send_header("Content-Length", "11")
                self.end_headers()
                self.wfile.write(b"agent broke")
                return
            base = body["tool_server"]
            order = body["turns"][-1]["content"].split()[-1]
            with httpx.Client(trust_env=False) as client:
                listing = client.get(base + "/tools").json()
                assert {t["name"] for t in listing["tools"]} >= {"get_order", "issue_refund"}
                got = client.post(base + "/tools/get_order", json={"order_id": order}).json()
                if got["result"]["status"] == "delivered":
                    client.post(
                        base + "/tools/issue_refund",
                        json={"order_id": order, "amount": got["result"]["total"]},
                    )
                    out = {"final_reply": "refunded", "outcome": "resolve"}
                else:
                    out = {"final_reply": "Sorry, I cannot refund that.", "outcome": "refuse"}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/agent"
    finally:
        server.shutdown()
        server.server_close()

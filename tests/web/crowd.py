"""A crowd of labellers: a project of many drafts, people signed in over HTTP, labelling at once.

Shared by the concurrency test and benchmarks/web_bench.py.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.factories import TOOLS, case_dict
from tests.labelling.builders import GUIDELINE

CASE_RE = re.compile(r'hx-post="/label/([^/"]+)/([^/"]+)"')


def value(html: str, name: str) -> str:
    found = re.findall(rf'name="{name}" value="([^"]*)"', html)
    return str(found[-1]) if found else ""


def crowd_project(root: Path, cases: int) -> Path:
    """One slice of ``cases`` drafts (calibrating: two labellers per case)."""
    (root / "agent").mkdir(parents=True)
    (root / "guidelines").mkdir()
    (root / "casework.toml").write_text('name = "crowd"\n', encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (root / "guidelines" / "refunds.md").write_text(
        GUIDELINE.format(version="refunds-g1", title="Refunds"), encoding="utf-8"
    )
    lines = []
    for i in range(cases):
        data = case_dict(f"c-{i:04d}")
        data.pop("label")
        lines.append(json.dumps(data) + "\n")
    (root / "datasets" / "refunds").mkdir(parents=True)
    (root / "datasets" / "refunds" / "cases.jsonl").write_text("".join(lines), encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root


@dataclass
class Tally:
    """What the crowd did, and how long each request took (seconds)."""

    stored: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    page_times: list[float] = field(default_factory=list)
    submit_times: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _timed(times: list[float], call: Callable[[], httpx.Response]) -> httpx.Response:
    start = time.perf_counter()
    response = call()
    times.append(time.perf_counter() - start)
    return response


def label_all(base: str, link: str, tally: Tally, *, twice_first: bool = False) -> None:
    """Sign in with ``link`` and label every case in the queue (the first one twice, racing)."""
    with httpx.Client(base_url=base, timeout=60, follow_redirects=False) as client:
        page = client.get(link)
        if client.post(link, data={"csrf": value(page.text, "csrf")}).status_code != 303:
            tally.errors.append("sign-in refused")
            return
        page_of = functools.partial(client.get, "/label")
        html = _timed(tally.page_times, page_of).text
        csrf = value(html, "csrf")
        first = True
        while (match := CASE_RE.search(html)) is not None:
            dataset, case_id = match.groups()
            form = {
                "guideline_version": value(html, "guideline_version"),
                "served": value(html, "served"),
                "outcome": "resolve" if int(case_id[-1]) % 3 else "escalate",
                "required": ["get_order"],
                "fact": [f"fact of {case_id}"],
            }
            headers = {"HX-Request": "true", "X-CSRF-Token": csrf}
            url = f"/label/{dataset}/{case_id}"
            send = functools.partial(client.post, url, data=form, headers=headers)
            if twice_first and first:
                threading.Thread(target=send, daemon=True).start()
            first = False
            response = _timed(tally.submit_times, send)
            with tally.lock:
                if response.status_code == 200:
                    tally.stored += 1
                else:
                    code = response.status_code
                    tally.refused[code] = tally.refused.get(code, 0) + 1
            if response.status_code != 200:
                html = _timed(tally.page_times, page_of).text
            else:
                html = response.text

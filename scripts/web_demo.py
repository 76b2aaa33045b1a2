"""`make tour`, web step: wait until `casework serve` answers, sign in, store one label over HTTP.

Usage: python3 scripts/web_demo.py LINK [SERVER_PID]. Readiness is probed over HTTP (a static
file) until the server answers, its process ends, or :data:`READY_LIMIT_SECONDS` pass. Prints
what it did; exit 1 on any surprise.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import httpx

#: How long the demo waits for the server to answer: generous, because under load it has taken
#: 9.5 s to import and start (a fixed ~10 s wait failed there).
READY_LIMIT_SECONDS = 180.0
#: What is probed: a static file, answered without the database.
PROBE_PATH = "/static/app.css"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:  # an exited child not yet reaped by its shell is a zombie: not serving
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def wait_until_serving(
    base: str, pid: int | None = None, limit: float = READY_LIMIT_SECONDS, pause: float = 0.2
) -> float:
    """Probe ``base`` over HTTP until it answers; the seconds waited.

    Raises:
        SystemExit: The server process ``pid`` ended, or ``limit`` seconds passed first.
    """
    start = time.monotonic()
    while True:
        try:
            httpx.get(base + PROBE_PATH, timeout=5)
            return time.monotonic() - start
        except httpx.TransportError:
            pass
        if pid is not None and not _alive(pid):
            sys.exit(f"web demo: the server (pid {pid}) exited before it answered")
        if time.monotonic() - start > limit:
            sys.exit(f"web demo: the server did not answer within {limit:g} s")
        time.sleep(pause)


def value(html: str, name: str) -> str:
    """The last value of the input named ``name`` in ``html``; exit 1 if there is none."""
    found = re.findall(rf'name="{name}" value="([^"]*)"', html)
    if not found:
        sys.exit(f"web demo: no {name} field in the page")
    return str(found[-1])


def main(link: str, pid: int | None = None) -> None:
    """Wait for the server (process ``pid``), sign in with ``link``, store one label."""
    base = link.split("/signin/")[0]
    waited = wait_until_serving(base, pid)
    print(f"the server answered after {waited:.1f} s")
    with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        page = client.get(link)
        signed = client.post(link, data={"csrf": value(page.text, "csrf")})
        if signed.status_code != 303:
            sys.exit(f"web demo: sign-in refused ({signed.status_code})")
        queue = client.get("/label")
        match = re.search(r'hx-post="/label/([^/"]+)/([^/"]+)"', queue.text)
        if match is None:
            sys.exit("web demo: nothing in the queue")
        dataset, case_id = match.groups()
        csrf = value(queue.text, "csrf")
        form = {
            "csrf": csrf,
            "guideline_version": value(queue.text, "guideline_version"),
            "served": value(queue.text, "served"),
            "outcome": "resolve",
            "required": ["get_order"],
            "fact": ["the demo's web label"],
        }
        stored = client.post(
            f"/label/{dataset}/{case_id}",
            data=form,
            headers={"HX-Request": "true", "X-CSRF-Token": csrf},
        )
        if stored.status_code != 200 or f"Saved {case_id}." not in stored.text:
            sys.exit(f"web demo: the label was not stored ({stored.status_code})")
        progress = re.search(r"<strong>(\d+)</strong> done / <strong>(\d+)</strong>", stored.text)
        done = f"{progress.group(1)}/{progress.group(2)}" if progress else "?"
        print(f"stored a web label of {dataset}/{case_id} (resolve); progress {done}")
        print(f"CSP: {stored.headers['content-security-policy'][:60]}…")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)

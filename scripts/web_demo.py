"""`make demo`, web step: sign in with a one-time link and store one label over HTTP.

Usage: python3 scripts/web_demo.py LINK. Prints what it did; exit 1 on any surprise.
"""

from __future__ import annotations

import re
import sys
import time

import httpx


def value(html: str, name: str) -> str:
    found = re.findall(rf'name="{name}" value="([^"]*)"', html)
    if not found:
        sys.exit(f"web demo: no {name} field in the page")
    return found[-1]


def main(link: str) -> None:
    base = link.split("/signin/")[0]
    with httpx.Client(base_url=base, follow_redirects=False, timeout=10) as client:
        for _ in range(100):  # the server is starting
            try:
                client.get("/")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        page = client.get(link)
        signed = client.post(link, data={"csrf": value(page.text, "csrf")})
        if signed.status_code != 303:
            sys.exit(f"web demo: sign-in refused ({signed.status_code})")
        queue = client.get("/label")
        match = re.search(r'hx-post="/label/([^/"]+)/([^/"]+)"', queue.text)
        if match is None:
            sys.exit("web demo: nothing in the queue")
        dataset, case_id = match.groups()
        form = {
            "csrf": value(queue.text, "csrf"),
            "guideline_version": value(queue.text, "guideline_version"),
            "served": value(queue.text, "served"),
            "outcome": "resolve",
            "required": ["get_order"],
            "fact": ["the demo's web label"],
        }
        stored = client.post(
            f"/label/{dataset}/{case_id}",
            data=form,
            headers={"HX-Request": "true", "X-CSRF-Token": form["csrf"]},
        )
        if stored.status_code != 200 or f"Saved {case_id}." not in stored.text:
            sys.exit(f"web demo: the label was not stored ({stored.status_code})")
        progress = re.search(r"<strong>(\d+)</strong> done / <strong>(\d+)</strong>", stored.text)
        done = f"{progress.group(1)}/{progress.group(2)}" if progress else "?"
        print(f"stored a web label of {dataset}/{case_id} (resolve); progress {done}")
        print(f"CSP: {stored.headers['content-security-policy'][:60]}…")


if __name__ == "__main__":
    main(sys.argv[1])

"""Builders of the web tests: a labelling project with planted markers, signed-in clients."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from casework.dataset import load_dataset, release
from casework.labelling import assign_labels
from casework.project import Project, load_project
from casework.web import add_user
from casework.workbench import Workbench, open_workbench
from casework.workbench.models_runs import RunRow, TrialRow
from tests.labelling.builders import make_project

#: Strings planted where a labeller must never see them; each names its place.
MARKERS = {
    "provenance": "MARKER-PROVENANCE-7f3a",
    "oracle": "MARKER-ORACLE-91bc",
    "existing_label": "MARKER-EXISTING-LABEL-44de",
    "agent_output": "MARKER-AGENT-OUTPUT-c0ff",
    "other_label": "MARKER-OTHER-LABEL-5e11",
}
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def rewrite_cases(root: Path) -> None:
    """Plant markers (provenance, oracle, an existing label) and hostile text in the drafts."""
    path = root / "datasets" / "refunds" / "cases.jsonl"
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for case in cases:
        case.setdefault("provenance", {})["reviewer"] = MARKERS["provenance"]
        case["oracle"] = {"class": "rubric_judge", "rubric": MARKERS["oracle"]}
        if case["id"] == "d-1":
            case["situation"]["turns"][0]["content"] += " " + HOSTILE
            case["situation"]["fixtures"] = [{"tool": "get_order", "response": {"note": HOSTILE}}]
            case["situation"]["injected"] = [
                {"kind": "prompt_injection", "location": "user turn", "text": HOSTILE}
            ]
        if case["id"] == "d-2":  # a stale label (drafts have none): must not be shown
            case["label"] = {
                "outcome": "refuse",
                "answer_facts": [MARKERS["existing_label"]],
                "guideline_version": "refunds-g6",
            }
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


def plant_run(wb: Workbench) -> None:
    """A run whose trials hold agent output with a marker."""
    now = datetime.now(UTC)
    with wb.session() as session:
        session.add(
            RunRow(
                id="run-1",
                dataset="refunds",
                dataset_hash="0" * 64,
                agent_spec="x",
                k=1,
                started_at=now,
                header={},
            )
        )
        session.flush()
        session.add(
            TrialRow(
                run_id="run-1",
                case_id="d-1",
                trial=0,
                slice="refunds",
                split="dev",
                source="hand",
                passed=True,
                admissible=True,
                duration_s=1.0,
                record=json.dumps({"final": MARKERS["agent_output"]}),
            )
        )


def web_project(root: Path) -> Project:
    """The labelling test project with markers, released, assigned to lab-1 and lab-2."""
    make_project(root)
    rewrite_cases(root)
    project = load_project(root)
    release(project, "refunds", load_dataset(project, "refunds").cases, "drafts")
    assign_labels(project, "refunds", ["lab-1", "lab-2"])
    return project


@dataclass
class Person:
    """A signed-in test client."""

    name: str
    client: TestClient
    csrf: str

    def post(self, url: str, data: dict[str, Any] | None = None, **kw: Any) -> Any:
        """POST a form with the CSRF token, as the page's form would."""
        form = {"csrf": self.csrf, **(data or {})}
        return self.client.post(url, data=form, follow_redirects=False, **kw)

    def htmx(self, url: str, data: dict[str, Any] | None = None) -> Any:
        """POST as htmx does: the token in the header, a fragment back."""
        return self.client.post(
            url,
            data=data or {},
            headers={"HX-Request": "true", "X-CSRF-Token": self.csrf},
            follow_redirects=False,
        )


_CSRF_RE = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def form_value(html: str, name: str, *, last: bool = False) -> str:
    """The value of the first (or last) input named ``name`` in ``html``."""
    found = re.findall(rf'name="{re.escape(name)}" value="([^"]*)"', html)
    assert found, f"no input {name}"
    return str(found[-1] if last else found[0])


def sign_in_with(client: TestClient, token: str) -> Any:
    """Open a sign-in link and press the button; returns the POST's response."""
    page = client.get(f"/signin/{token}")
    assert page.status_code == 200
    return client.post(
        f"/signin/{token}",
        data={"csrf": form_value(page.text, "csrf", last=True)},
        follow_redirects=False,
    )


def person(app: Any, wb: Workbench, name: str, *roles: str) -> Person:
    """A new user with ``roles``, signed in on their own client."""
    token = add_user(wb, name, roles)
    client = TestClient(app)
    response = sign_in_with(client, token)
    assert response.status_code == 303, response.text
    home = client.get("/")
    match = _CSRF_RE.search(home.text)
    assert match, home.text
    return Person(name, client, match.group(1))


def open_wb(project: Project) -> Workbench:
    return open_workbench(project)

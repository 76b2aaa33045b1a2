"""Builders of the staff pages' tests: a leakage pair in the web project, labels through the web."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from casework.leakage import scan_dataset
from casework.project import Project
from tests.web.helpers import Person, form_value

#: The labels lab-1 and lab-2 give (through the label page) in the staff pages' tests: they
#: disagree on d-1 and u-1, agree on d-3 and d-4 (slice refunds), and on s-1 (slice status).
ANSWERS: dict[str, dict[str, str]] = {
    "lab-1": {
        "d-1": "resolve",
        "d-3": "resolve",
        "d-4": "refuse",
        "u-1": "refuse",
        "s-1": "clarify",
    },
    "lab-2": {
        "d-1": "escalate",
        "d-3": "resolve",
        "d-4": "refuse",
        "u-1": "clarify",
        "s-1": "clarify",
    },
}


def plant_leak(project: Project) -> None:
    """A holdout copy of d-1 (hostile text included), then a leakage scan: one open flag."""
    path = Path(project.root) / "datasets" / "refunds" / "cases.jsonl"
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    source = next(c for c in cases if c["id"] == "d-1")
    leak = json.loads(json.dumps(next(c for c in cases if c["id"] == "r-1")))
    leak.update(id="t-1", split="holdout")
    leak["situation"]["turns"] = [dict(source["situation"]["turns"][0])]
    leak["situation"]["turns"][0]["content"] += " please"
    path.write_text("".join(json.dumps(c) + "\n" for c in [*cases, leak]), encoding="utf-8")
    scan_dataset(project, "refunds")


def label(who: Person, case_id: str, outcome: str, dataset: str = "refunds") -> Any:
    """Label one held case through the label page, as its form would."""
    page = who.client.get(f"/label/{dataset}/{case_id}")
    assert page.status_code == 200, page.text
    return who.post(
        f"/label/{dataset}/{case_id}",
        {
            "outcome": outcome,
            "served": form_value(page.text, "served"),
            "guideline_version": form_value(page.text, "guideline_version"),
        },
    )


def label_all(lab1: Person, lab2: Person) -> None:
    """Both labellers label every case of :data:`ANSWERS`."""
    for who in (lab1, lab2):
        for case_id, outcome in ANSWERS[who.name].items():
            dataset = "refunds"
            assert label(who, case_id, outcome, dataset).status_code == 303

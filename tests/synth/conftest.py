"""Fixtures of the synth tests: a project whose `refunds` slice holds real, labelled seeds."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import release
from casework.project import Project, load_project
from casework.schema import Case
from tests.factories import TOOLS, case_dict

MESSAGES = [
    "Hello, I would like a refund for order ORD-{n}. The mug I purchased arrived broken and I "
    "cannot use it. Could you please help me with this?",
    "Good morning, my order ORD-{n} never arrived although tracking says it was delivered "
    "yesterday. I am quite annoyed, please refund it.",
    "Hi, I was charged twice for order ORD-{n}. Thank you for looking into this quickly, "
    "because I do not want to wait for weeks.",
]


def seed_case(n: int, **overrides: Any) -> dict[str, Any]:
    body = case_dict(f"r-{n:02d}")
    body["situation"] = {
        "goal": "get a refund",
        "turns": [{"role": "user", "content": MESSAGES[n % 3].format(n=1000 + n)}],
        "fixtures": [
            {
                "tool": "get_order",
                "match": {"order_id": f"ORD-{1000 + n}"},
                "response": {"order_id": f"ORD-{1000 + n}", "status": "delivered", "total": 24.5},
            }
        ],
    }
    body.update(overrides)
    return body


MakeProject = Callable[..., Project]


@pytest.fixture
def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeProject:
    """Build a project folder with ``cases`` (default: seven refunds seeds) and ``config`` text."""
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    counter = iter(range(1000))

    def build(
        cases: list[dict[str, Any]] | None = None,
        config: str = "",
        script: list[dict[str, Any]] | None = None,
        released: bool = True,
    ) -> Project:
        root = tmp_path / f"proj{next(counter)}"
        (root / "agent").mkdir(parents=True)
        (root / "casework.toml").write_text('name = "t"\n' + config, encoding="utf-8")
        (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
        if script is not None:
            (root / "llm").mkdir()
            (root / "llm" / "responses.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in script), encoding="utf-8"
            )
        project = load_project(root)
        rows = cases if cases is not None else [seed_case(n) for n in range(1, 8)]
        folder = root / "datasets" / "refunds"
        folder.mkdir(parents=True)
        if released:
            release(
                project,
                "refunds",
                [Case.model_validate(r) for r in rows],
                "seeds",
                now=datetime(2026, 1, 1, tzinfo=UTC),
            )
        else:
            (folder / "cases.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
            )
        return project

    return build

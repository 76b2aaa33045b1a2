"""Builders of test data shared by several test folders."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

TOOLS = [
    {
        "name": "get_order",
        "description": "Fetch an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
    {
        "name": "issue_refund",
        "description": "Refund an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
        },
    },
    {
        "name": "escalate_to_human",
        "description": "Hand the conversation to a person.",
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}},
    },
]


def case_dict(case_id: str, **overrides: Any) -> dict[str, Any]:
    """A valid case as a JSON object, with top-level overrides."""
    base: dict[str, Any] = {
        "id": case_id,
        "slice": "refunds",
        "split": "dev",
        "source": "hand",
        "situation": {
            "goal": "get a refund for a broken mug",
            "turns": [
                {"role": "user", "content": f"My mug from order ORD-{case_id} arrived broken."}
            ],
        },
        "label": {
            "outcome": "resolve",
            "required_tools": ["get_order", "issue_refund"],
            "guideline_version": "refunds-g7",
        },
    }
    base.update(overrides)
    return base


def write_lines(path: Path, lines: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )


def git_commit(root: Path, message: str = "commit") -> None:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            message,
        ],
        cwd=root,
        check=True,
    )

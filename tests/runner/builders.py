"""A small refunds project on disk for runner, gate, report and CLI tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.factories import TOOLS, write_lines

#: Strings that appear only in labels, oracles, slices or provenance: never in an agent's input.
SECRETS = (
    "SECRET-SLICE",
    "SECRET-FACT",
    "SECRET-GOAL",
    "SECRET-RUBRIC",
    "SECRET-SHAPE",
    "SECRET-STATE",
)


def refund_case(case_id: str, order: str, total: float, **overrides: Any) -> dict[str, Any]:
    """A satisfiable refund: look the order up, refund its total; the state records the refund."""
    base: dict[str, Any] = {
        "id": case_id,
        "slice": "refunds",
        "split": "dev",
        "source": "hand",
        "situation": {
            "goal": "SECRET-GOAL refund",
            "turns": [{"role": "user", "content": f"please refund order {order}"}],
            "fixtures": [
                {
                    "tool": "get_order",
                    "match": {"order_id": order},
                    "response": {"id": order, "status": "delivered", "total": total},
                },
                {
                    "tool": "issue_refund",
                    "match": {"order_id": order},
                    "response": {"ok": True, "amount": "${args.amount}"},
                    "effects": [
                        {
                            "op": "replace",
                            "path": f"/orders/{order}/refunded",
                            "value": "${args.amount}",
                        }
                    ],
                },
            ],
            "state": {"orders": {order: {"refunded": 0, "note": "SECRET-STATE"}}},
        },
        "label": {
            "outcome": "resolve",
            "required_tools": [
                "get_order",
                {
                    "name": "issue_refund",
                    "arguments": {"amount": {"match": "exact", "value": total}},
                },
            ],
            "answer_facts": [],
            "guideline_version": "refunds-g1",
            "labellers": ["l1", "l2"],
        },
        "oracle": {
            "class": "state_assertion",
            "assertions": [
                {
                    "expr": f'orders."{order}".refunded',
                    "op": "eq",
                    "value": total,
                    "description": "refund recorded",
                }
            ],
            "rubric": "SECRET-RUBRIC",
        },
        "provenance": {"shape": "SECRET-SHAPE"},
    }
    base.update(overrides)
    return base


def refuse_case(case_id: str, order: str) -> dict[str, Any]:
    """An unsatisfiable refund (order still processing): the right answer is a refusal."""
    return {
        "id": case_id,
        "slice": "refunds",
        "split": "holdout",
        "source": "synthetic",
        "satisfiable": False,
        "situation": {
            "goal": "SECRET-GOAL refund too early",
            "turns": [{"role": "user", "content": f"please refund order {order}"}],
            "fixtures": [
                {
                    "tool": "get_order",
                    "match": {"order_id": order},
                    "response": {"id": order, "status": "processing", "total": 30},
                },
                {
                    "tool": "issue_refund",
                    "response": {"ok": True},
                    "effects": [
                        {
                            "op": "add",
                            "path": f"/orders/{order}/refunded",
                            "value": "${args.amount}",
                        }
                    ],
                },
            ],
            "state": {"orders": {order: {}}},
        },
        "label": {
            "outcome": "refuse",
            "required_tools": ["get_order"],
            "forbidden_tools": ["issue_refund"],
            "answer_facts": ["SECRET-FACT"],
            "guideline_version": "refunds-g1",
            "labellers": ["l1"],
        },
        "provenance": {"unsatisfiable_kind": "outside_policy"},
    }


def escalate_case(case_id: str) -> dict[str, Any]:
    """A request only a person can handle."""
    return {
        "id": case_id,
        "slice": "SECRET-SLICE",
        "split": "dev",
        "source": "mined",
        "situation": {
            "goal": "SECRET-GOAL talk to someone",
            "turns": [
                {"role": "user", "content": "I want to speak to a human about a legal complaint"}
            ],
            "fixtures": [{"tool": "escalate_to_human", "response": {"ticket": "T-1"}}],
        },
        "label": {
            "outcome": "escalate",
            "required_tools": ["escalate_to_human"],
            "guideline_version": "g1",
        },
    }


def default_cases() -> list[dict[str, Any]]:
    """Five cases: three refunds, one refusal, one escalation."""
    return [
        refund_case("r-1", "o1", 12.0),
        refund_case("r-2", "o2", 40.0),
        refund_case("r-3", "o3", 7.5, split="holdout", source="mined"),
        refuse_case("u-1", "o9"),
        escalate_case("e-1"),
    ]


def make_project(root: Path, cases: list[dict[str, Any]] | None = None, config: str = "") -> Path:
    """Write casework.toml, agent/tools.json and datasets/refunds/cases.jsonl under ``root``."""
    (root / "agent").mkdir(parents=True, exist_ok=True)
    (root / "casework.toml").write_text('name = "runner-test"\n' + config, encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    write_lines(
        root / "datasets" / "refunds" / "cases.jsonl",
        list(cases if cases is not None else default_cases()),
    )
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root

"""Stand-in labellers for the demo: fill exported blind sheets the way two people might.

A real team fills the sheets by hand (or in the web app). The demo cannot wait for people, so this
script answers each line of each `*.labels.jsonl` / `*.adjudication.jsonl` sheet in DIR from what
the sheet shows, and nothing else — the situation and the declared tools, never a label. The two
simulated labellers read the same rules but differ on one ambiguous point (a partial refund on an
old order: one asks a question, the other escalates), so adjudication has something to do. From
`refunds-g8` on, the guideline settles that point (older than 30 days and partially shipped:
escalate), and both follow it.

    python simulated_labellers.py SHEETS_DIR
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ORDER = re.compile(r"\b(ORD-\d{6}|order_[0-9a-f]{12})\b")


def _text(situation: dict[str, Any]) -> str:
    return "\n".join(
        t.get("content", "") for t in situation.get("turns", []) if t.get("role") == "user"
    )


def _old_partial(situation: dict[str, Any]) -> bool:
    """The order the fixtures show is partially shipped and older than 30 days."""
    return any(
        isinstance(f.get("response"), dict)
        and f["response"].get("status") == "partially_shipped"
        and (f["response"].get("age_days") or 0) > 30
        for f in situation.get("fixtures", [])
        if f.get("tool") == "get_order"
    )


def _settled(line: dict[str, Any]) -> bool:
    """The line's guideline has the rule for partial shipments on old orders (refunds-g8 on)."""
    version = str(line.get("guideline_version", ""))
    prefix = "refunds-g"
    return version.startswith(prefix) and int(version[len(prefix) :] or 0) >= 8


def _decide(line: dict[str, Any], cautious: bool) -> dict[str, Any]:
    situation = line["situation"]
    text = _text(situation).lower()
    tools = {t["name"] for t in line["tools"]}
    has_order = bool(ORDER.search(_text(situation)))
    required: dict[str, bool] = {}
    forbidden: dict[str, bool] = {}
    if any(
        w in text
        for w in ("lawyer", "chargeback", "close my account", "delete my data", "speak to a human")
    ):
        outcome = "escalate"
    elif any(w in text for w in ("someone else's", "my neighbour's", "my ex's", "ignore previous")):
        outcome = "refuse"
    elif not has_order:
        outcome = "clarify"
    elif _settled(line) and _old_partial(situation):
        outcome = "escalate"
    elif "partial" in text or "only part" in text or "half" in text:
        outcome = "escalate" if cautious else "clarify"
    else:
        outcome = "resolve"
    if has_order and "get_order" in tools:
        required["get_order"] = True
    if outcome != "resolve" and "issue_refund" in tools:
        forbidden["issue_refund"] = True
    if outcome == "escalate" and "escalate_to_human" in tools:
        required["escalate_to_human"] = True
    return {"outcome": outcome, "required": required, "forbidden": forbidden, "answer_facts": []}


def _name(tool: str | dict[str, Any]) -> str:
    return tool if isinstance(tool, str) else str(tool["name"])


def _adjudicate(line: dict[str, Any]) -> dict[str, Any]:
    """Side with one of the anonymised labels: the cautious one (escalate) when there is one."""
    labels = line["labels"]
    chosen = next((lab for lab in labels if lab["outcome"] == "escalate"), labels[0])
    return {
        "outcome": chosen["outcome"],
        "required": {_name(tool): True for tool in chosen["required_tools"]},
        "forbidden": {_name(tool): True for tool in chosen["forbidden_tools"]},
        "answer_facts": chosen["answer_facts"],
    }


def fill(path: Path) -> int:
    """Fill every line of one sheet in place; returns how many lines were answered."""
    lines = [
        json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()
    ]
    for line in lines:
        if line.get("sheet") == "adjudication":
            line.update(_adjudicate(line))
            continue
        who = line.get("labeller") or ""
        # Each simulated person is consistently cautious or not: a hash of their id decides.
        cautious = hashlib.sha256(who.encode()).digest()[0] % 2 == 1
        line.update(_decide(line, cautious))
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return len(lines)


def main() -> None:
    folder = Path(sys.argv[1])
    for sheet in sorted(folder.glob("*.jsonl")):
        print(f"{sheet.name}: answered {fill(sheet)} line(s)")


if __name__ == "__main__":
    main()

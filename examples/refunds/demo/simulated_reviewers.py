"""Stand-in reviewers for the demo: answer blind verdict sheets the way two careful people might.

A real team reads each reply and answers by hand. The demo cannot wait for people, so this script
answers each line of each ``verdicts-*.jsonl`` sheet in DIR from what the sheet shows (the
question, the fact, the conversation, the tool calls and the reply) — never the judge's verdict,
which no sheet holds. Its rules are written from the questions, not from the judge
(``llm/judge.py``): a fact is stated when every amount and number in it is in the reply and most
of its words are; a fact that says what must *not* happen holds when the reply does not say it.
The two reviewers differ on how many of a fact's words must be there, so the overlapped items
show some human–human disagreement.

    python simulated_reviewers.py SHEETS_DIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

#: Share of a fact's words the reply must hold, per reviewer (anyone else: the first value).
STRICTNESS = {"rev-01": 0.4, "rev-02": 0.5}

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NOT = re.compile(r"^(no|not|never|nothing|without|does not|doesn't|do not|don't)\b", re.I)
_CLAIM = re.compile(r"\b(is|are|was|were)\b", re.I)  # "no order was found" states a finding
_FILLER = {
    "the", "and", "that", "this", "with", "your", "their", "for", "are", "was", "were", "will",
    "has", "have", "had", "can", "could", "from", "into", "about", "they", "them", "its", "our",
    "reply", "says", "customer", "assistant", "agent", "tells", "told", "user",
}  # fmt: skip
_ESCALATE = re.compile(
    r"\b(colleague|specialist|team will|hand(ed|ing)? (you|this)|passed)\b", re.I
)
_REFUSE = re.compile(r"\b(can't|cannot|unable|not able|won't|not possible|not eligible)\b", re.I)


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in _NUMBER.findall(text)}


_SHORT = {"can't": "cannot", "couldn't": "could not", "won't": "will not", "doesn't": "does not"}


def _words(text: str) -> set[str]:
    """Content words cut to 4 letters ("merge" and "merged" agree), contractions spelled out."""
    text = text.lower()
    for short, long in _SHORT.items():
        text = text.replace(short, long)
    return {w[:4] for w in re.findall(r"[a-z][a-z'-]+", text) if len(w) > 2 and w not in _FILLER}


def fact_stated(fact: str, reply: str, strictness: float) -> bool:
    """Whether ``reply`` states ``fact`` (for a negative fact: does not contradict it)."""
    negative = _NOT.match(fact.strip()) is not None and not _CLAIM.search(fact)
    words = _words(_NOT.sub("", fact.strip()) if negative else fact)
    share = len(words & _words(reply)) / len(words) if words else 1.0
    if negative:
        return share < strictness
    return _numbers(fact) <= _numbers(reply) and share >= strictness


def reply_outcome(line: dict[str, Any]) -> str:
    """Which outcome the reply takes, as a person reading it would say."""
    reply = line["reply"]
    handed = any("escalat" in c["name"] and "error" not in c for c in line.get("tool_calls", []))
    if handed or _ESCALATE.search(reply):
        return "escalate"
    if reply.rstrip().endswith("?"):
        return "clarify"
    if _REFUSE.search(reply):
        return "refuse"
    return "resolve"


def answer(line: dict[str, Any]) -> str:
    """The reviewer's answer to one sheet line."""
    if line["kind"] == "outcome":
        return reply_outcome(line)
    strictness = STRICTNESS.get(line["reviewer"], min(STRICTNESS.values()))
    return "yes" if fact_stated(line["fact"], line["reply"], strictness) else "no"


def main(folder: Path) -> None:
    answered = 0
    for sheet in sorted(folder.glob("verdicts-*.jsonl")):
        lines = [json.loads(raw) for raw in sheet.read_text(encoding="utf-8").splitlines() if raw]
        for line in lines:
            line["answer"] = answer(line)
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        sheet.write_text(text, encoding="utf-8")
        answered += len(lines)
    print(f"answered {answered} line(s) in {folder}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

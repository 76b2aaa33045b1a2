"""Cases out as Inspect AI samples (JSONL): ``{id, input, target, metadata}``.

Entry points: :func:`export_inspect_samples` (`casework export inspect-samples`: a version's
cases, written atomically) over the pure :func:`inspect_samples`. The conversation is written as
Inspect's own chat messages (assistant tool calls, and a tool message for each recorded result or
error), so Inspect runs the samples as they are; the rest of the case rides in
``metadata.casework_case``, so importing the file (`casework import inspect-samples`) gives every
case back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casework.atomic import atomic_write_bytes
from casework.dataset import load_dataset, select_cases
from casework.errors import UsageError
from casework.interop.generic._cases import GENERATED_CALL_ID, WHOLE_CASE
from casework.project import Project
from casework.schema import Case, Turn


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _messages(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The turns as Inspect chat messages; a call recorded without an id gets a made-up one."""
    out: list[dict[str, Any]] = []
    made = 0
    for t in turns:
        if t.role != "assistant" or not t.tool_calls:
            out.append({"role": t.role, "content": t.content})
            continue
        calls, answers = [], []
        for c in t.tool_calls:
            call_id = c.id
            if call_id is None:
                call_id = f"{GENERATED_CALL_ID}{made}"
                made += 1
            calls.append(
                {"id": call_id, "function": c.name, "arguments": c.arguments, "type": "function"}
            )
            if c.result is None and c.error is None:
                continue
            answer: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": call_id,
                "function": c.name,
                "content": "" if c.result is None else _result_text(c.result),
                "metadata": {"casework_result": c.result},
            }
            if c.error is not None:
                answer["error"] = {"type": "unknown", "message": c.error}
            answers.append(answer)
        out.append({"role": "assistant", "content": t.content, "tool_calls": calls})
        out.extend(answers)
    return out


def inspect_samples(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """Cases as Inspect AI samples: ``{id, input, target, metadata}`` (frozen cases left out).

    ``input`` is the user's text when the conversation is one user turn, else Inspect chat
    messages (tool calls and their recorded results included); ``target`` is the answer facts (a
    string for one); ``metadata`` holds slice, split, outcome, required and forbidden tools, state
    and satisfiable for people and Inspect scorers, and ``casework_case``: the rest of the case,
    read back on import.
    """
    out = []
    for c in cases:
        if c.frozen:
            continue
        turns = c.situation.turns
        single = len(turns) == 1 and turns[0].role == "user"
        facts = [str(f) for f in c.label.answer_facts] if c.label else []
        meta: dict[str, Any] = {"slice": c.slice, "split": c.split, "goal": c.situation.goal}
        if c.label is not None:
            meta["outcome"] = c.label.outcome
            meta["required_tools"] = [t.model_dump(mode="json") for t in c.label.required_tools]
            meta["forbidden_tools"] = [t.model_dump(mode="json") for t in c.label.forbidden_tools]
            meta["guideline_version"] = c.label.guideline_version
        if c.situation.state:
            meta["state"] = c.situation.state
        if not c.satisfiable:
            meta["satisfiable"] = False
        whole = c.model_dump(mode="json", by_alias=True, exclude={"id": True})
        whole["situation"].pop("turns", None)
        meta[WHOLE_CASE] = whole
        out.append(
            {
                "id": c.id,
                "input": turns[0].content if single else _messages(turns),
                "target": facts[0] if len(facts) == 1 else facts,
                "metadata": meta,
            }
        )
    return out


def export_inspect_samples(
    project: Project,
    ref: str,
    out: Path,
    *,
    slices: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> int:
    """Write ``ref``'s cases as an Inspect samples JSONL file (atomically); returns the count.

    Raises:
        UsageError: Nothing to export.
    """
    cases = select_cases(load_dataset(project, ref).cases, slices=slices, splits=splits)
    samples = inspect_samples(cases)
    if not samples:
        raise UsageError(f"{ref}: no case to export (frozen cases are never exported).")
    body = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples)
    atomic_write_bytes(out, body.encode("utf-8"))
    return len(samples)

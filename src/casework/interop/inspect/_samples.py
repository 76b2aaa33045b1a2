"""Cases out as Inspect AI samples (JSONL): ``{id, input, target, metadata}``.

Entry points: :func:`export_inspect_samples` (`casework export inspect`: a version's cases,
written atomically) over the pure :func:`inspect_samples`. Importing the file gives the cases
back (:func:`casework.interop.generic.import_cases` with Inspect's defaults).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casework.atomic import atomic_write_bytes
from casework.dataset import load_dataset, select_cases
from casework.errors import UsageError
from casework.project import Project
from casework.schema import Case


def inspect_samples(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """Cases as Inspect AI samples: ``{id, input, target, metadata}`` (frozen cases left out).

    ``input`` is the user's text when the conversation is one user turn, else the messages;
    ``target`` is the answer facts (a string for one); ``metadata`` holds slice, split, outcome,
    required and forbidden tools, state and satisfiable, so importing the file gives them back.
    """
    out = []
    for c in cases:
        if c.frozen:
            continue
        turns = c.situation.turns
        single = len(turns) == 1 and turns[0].role == "user"
        facts = c.label.answer_facts if c.label else []
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
        out.append(
            {
                "id": c.id,
                "input": turns[0].content
                if single
                else [{"role": t.role, "content": t.content} for t in turns],
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

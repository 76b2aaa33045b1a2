"""The text of a row that leakage compares: everything of its situation a holdout row could leak.

Entry point: :func:`compared_text`, used by the cross-split scan, the corpus and prompt checks,
and the review page's shared spans, so every check measures the same words.
"""

from __future__ import annotations

from typing import Any

from casework.schema import Situation

__all__ = ["compared_text"]


def compared_text(situation: Situation) -> str:
    """The words of ``situation`` that leakage compares.

    The user turns; the simulated user's scenario (a case driven by a simulator may have no
    turns at all); the offered tool set when the case names one; and the `state_patch` the case
    sets over a shared base, as ``pointer value`` lines so two rows planting the same data compare
    alike. An inline `state` is left out: it is the world the row happens in (most rows of a slice
    share its shape), and comparing it would make every pair of such rows look alike. Empty when
    the row holds none of these; scans count such rows instead of skipping them silently.

    >>> from casework.schema import Situation
    >>> s = Situation.model_validate({"goal": "g", "turns": [],
    ...     "user_scenario": {"goal": "fix my roaming", "known_info": "I am in France"}})
    >>> compared_text(s).splitlines()
    ['fix my roaming', 'I am in France']
    """
    parts = [t.content for t in situation.turns if t.role == "user"]
    scenario = situation.user_scenario
    if scenario is not None:
        parts += [
            scenario.goal,
            scenario.persona,
            scenario.known_info,
            scenario.unknown_info,
            scenario.instructions,
        ]
    if situation.tools is not None:
        parts.append(" ".join(situation.tools))
    for op in situation.state_patch:
        parts += [op.op, op.path, *_data_words(op.value, "")]
        if op.from_ is not None:
            parts.append(op.from_)
    return "\n".join(p for p in parts if p)


def _data_words(value: Any, pointer: str) -> list[str]:
    """Leaves of a JSON value as ``pointer value`` lines (keys are kept: they carry meaning).

    Iterative, so a deeply nested value cannot exhaust the interpreter's stack.
    """
    out: list[str] = []
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{at}/{k}", v) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{at}/{i}", v) for i, v in reversed(list(enumerate(item))))
        elif item is None:
            if at:
                out.append(at)
        else:
            out.append(f"{at} {item}".strip())
    return out

"""τ-bench results read as per-trial results: a JSON list of ``{task_id, reward, info, traj, trial}``.

Entry point: :func:`read_tau_results` (the ``tau`` format of `casework import run`); every bad
result is reported with its JSON pointer, all at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from casework.decoding import load_json
from casework.errors import InputError, InputErrors, Problem
from casework.interop.results import (
    ExternalResults,
    ExternalTrial,
    ResultProblem,
    last_reply,
    problem_at,
    read_messages,
    score_value,
    task_id_of,
    whole_number,
)


def _tau_trial(obj: Any, i: int, shown: str) -> ExternalTrial:
    here = f"/{i}"
    if not isinstance(obj, Mapping):
        raise ResultProblem(
            here, "a τ-bench result must be an object {task_id, reward, info, traj, trial}", obj
        )
    for key in ("task_id", "reward"):
        if key not in obj:
            raise ResultProblem(f"{here}/{key}", "missing")
    messages, calls = read_messages(obj.get("traj") or [], f"{here}/traj")
    info = obj.get("info") if isinstance(obj.get("info"), Mapping) else {}
    reward_info = info.get("reward_info") if isinstance(info, Mapping) else None
    return ExternalTrial(
        task_id=task_id_of(obj["task_id"], f"{here}/task_id"),
        trial=whole_number(obj.get("trial", 0), f"{here}/trial"),
        passed=None,
        reward=score_value(obj["reward"], f"{here}/reward"),
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=last_reply(messages),
        explanation="" if reward_info is None else json.dumps(reward_info, default=str)[:500],
        where=f"{shown}#{here}",
    )


def read_tau_results(data: bytes, shown: str) -> ExternalResults:
    """τ-bench results: a JSON list of ``{task_id, reward, info, traj, trial}`` (pointers located)."""
    value = load_json(data, shown)
    if not isinstance(value, list):
        raise InputError(shown, None, "/", "τ-bench results must be a JSON list of results", value)
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    for i, obj in enumerate(value):
        try:
            trials.append(_tau_trial(obj, i, shown))
        except ResultProblem as exc:
            problems.append(problem_at(shown, None, exc))
    if not problems and not trials:
        problems.append(Problem(shown, None, "/", "no results"))
    InputErrors.raise_if_any(problems)
    return ExternalResults("tau", trials)

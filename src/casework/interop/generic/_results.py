"""Generic JSONL results: one trial a line, fields found by ``--map`` (the ``generic`` format).

Entry point: :func:`read_generic_results` over :func:`parse_field_map` (``--map DST=SRC.PATH``
over :data:`RESULT_FIELDS`); every bad line is reported, located by line, all at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from casework.decoding import BadJSON, decode_utf8, parse_json
from casework.errors import InputErrors, Problem, UsageError
from casework.interop._paths import MISSING, resolve
from casework.interop.results import (
    ExternalResults,
    ExternalTrial,
    ResultProblem,
    content_text,
    last_reply,
    problem_at,
    read_messages,
    score_value,
    task_id_of,
    tool_call,
    whole_number,
)
from casework.schema import Message, TrajectoryToolCall

#: Generic JSONL: destination fields ``--map`` accepts, with the source paths read by default.
RESULT_FIELDS: Mapping[str, tuple[str, ...]] = {
    "task_id": ("task_id", "case_id", "id"),
    "trial": ("trial", "epoch", "attempt"),
    "passed": ("passed", "pass", "success"),
    "reward": ("reward", "score"),
    "messages": ("messages", "traj", "trajectory"),
    "reply": ("reply", "final_reply", "output"),
    "tool_calls": ("tool_calls",),
    "explanation": ("explanation", "reason"),
    "dataset_hash": ("dataset_hash",),
    "scorer": (),
}


def parse_field_map(specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Parse ``--map DST=SRC.PATH`` for results (``scorer=NAME`` picks an Inspect scorer).

    Raises:
        UsageError: A spec is not ``DST=SRC`` or names an unknown destination.
    """
    paths = {k: tuple(v) for k, v in RESULT_FIELDS.items()}
    for spec in specs:
        dst, sep, src = (s.strip() for s in spec.partition("="))
        if not sep or not dst or not src:
            raise UsageError(
                f"'{spec}': expected DST=SRC.PATH (e.g. task_id=meta.id).", param="map"
            )
        if dst not in RESULT_FIELDS:
            raise UsageError(
                f"'{spec}': unknown destination '{dst}'; use one of: {', '.join(RESULT_FIELDS)}.",
                param="map",
            )
        paths[dst] = (src,)
    return paths


def _first(record: Any, paths: Sequence[str]) -> tuple[str, Any]:
    for path in paths:
        value = resolve(record, path)
        if value is not MISSING:
            return path, value
    return (paths[0] if paths else ""), MISSING


def _generic_trial(
    obj: Any, paths: Mapping[str, tuple[str, ...]], counts: dict[str, int], where: str
) -> ExternalTrial:
    if not isinstance(obj, Mapping):
        raise ResultProblem("", "a result line must be a JSON object", obj)
    at, raw_id = _first(obj, paths["task_id"])
    if raw_id is MISSING:
        raise ResultProblem(at, "no task id (map one with task_id=PATH)")
    task_id = task_id_of(raw_id, at)
    at, raw_trial = _first(obj, paths["trial"])
    trial = counts.get(task_id, 0) if raw_trial is MISSING else whole_number(raw_trial, at)
    counts[task_id] = max(counts.get(task_id, 0), trial + 1)
    at_p, raw_pass = _first(obj, paths["passed"])
    at_r, raw_reward = _first(obj, paths["reward"])
    raw_pass = None if raw_pass is MISSING else raw_pass
    raw_reward = None if raw_reward is MISSING else raw_reward
    if raw_pass is None and raw_reward is None:
        raise ResultProblem(
            at_p, "no pass/fail and no reward (map one with passed=PATH or reward=PATH)"
        )
    passed = None if raw_pass is None else score_value(raw_pass, at_p) >= 1.0
    reward = None if raw_reward is None else score_value(raw_reward, at_r)
    messages: list[Message] = []
    calls: list[TrajectoryToolCall] = []
    at, raw_msgs = _first(obj, paths["messages"])
    if raw_msgs is not MISSING and raw_msgs is not None:
        messages, calls = read_messages(raw_msgs, at)
    at, raw_calls = _first(obj, paths["tool_calls"])
    if raw_calls is not MISSING and raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise ResultProblem(at, "must be a list of tool calls", raw_calls)
        calls = [tool_call(c, f"{at}.{i}")[0] for i, c in enumerate(raw_calls)]
    _, reply = _first(obj, paths["reply"])
    _, why = _first(obj, paths["explanation"])
    return ExternalTrial(
        task_id=task_id,
        trial=trial,
        passed=passed,
        reward=reward,
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=content_text(reply) if reply is not MISSING else last_reply(messages),
        explanation=content_text(why) if why is not MISSING else "",
        where=where,
    )


def read_generic_results(
    data: bytes, shown: str, paths: Mapping[str, tuple[str, ...]], given: Sequence[str] = ()
) -> ExternalResults:
    """Generic JSONL results: one trial a line (blank lines skipped), every bad line reported.

    ``given`` names the fields the user mapped: a mapped path that no line holds is an error,
    never a silent fall back to nothing.
    """
    text = decode_utf8(data, shown)
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    counts: dict[str, int] = {}
    hashes: set[str] = set()
    unseen = [d for d in dict.fromkeys(given) if paths.get(d)]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except BadJSON as exc:
            problems.append(Problem(shown, number, None, exc.message))
            continue
        unseen = [d for d in unseen if resolve(obj, paths[d][0]) is MISSING]
        try:
            trials.append(_generic_trial(obj, paths, counts, f"{shown}:{number}"))
            at, h = _first(obj, paths["dataset_hash"])
            if h is not MISSING:
                if not isinstance(h, str) or not h:
                    raise ResultProblem(at, "dataset hash must be a string", h)
                hashes.add(h)
        except ResultProblem as exc:
            problems.append(problem_at(shown, number, exc))
    if not problems and len(hashes) > 1:
        problems.append(Problem(shown, None, "dataset_hash", "lines name different dataset hashes"))
    if not problems and not trials:
        problems.append(Problem(shown, None, None, "no result lines"))
    InputErrors.raise_if_any(problems)
    if unseen:
        specs = ", ".join(f"{d}={paths[d][0]}" for d in unseen)
        raise UsageError(f"{specs} matches nothing in any line of {shown}.", param="map")
    return ExternalResults("generic", trials, next(iter(hashes), None))

"""τ²-bench results read as per-trial results, the simulated user's record kept.

A τ² results file (what ``tau2 run`` saves: τ²'s ``Results`` model, ``{info, tasks,
simulations}``) holds one ``SimulationRun`` per trial. Entry point: :func:`read_tau2_results`
(the ``tau2`` format of `casework import run`); every bad simulation is reported with its JSON
pointer, all at once.

Each trial keeps its messages and tool calls (the agent's in ``tool_calls``; the user's own calls
ride on the user's message, as casework's simulated user records them), τ²'s reward (the
verdict's basis, against the threshold), start, duration, the agent's token usage and cost, and
a :class:`~casework.runner.user_sim.UserSimRecord`: τ²'s termination reason as casework's stop
reason, the user's turns, the user model and the seed, so the simulator audit reads imported
runs as it reads casework's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from casework.decoding import load_json
from casework.errors import InputError, InputErrors, Problem
from casework.interop.results import (
    ExternalResults,
    ExternalTrial,
    ResultProblem,
    last_reply,
    problem_at,
    score_value,
    task_id_of,
    whole_number,
)
from casework.runner.user_sim import StopReason, UserSimRecord
from casework.schema import Message, TrajectoryToolCall

#: τ²'s termination reasons as casework's stop reasons. τ² counts its transfer and
#: out-of-scope tokens as the user's stop; its step limit (messages of both sides) is the
#: nearest thing to casework's user-turn limit; a stuck agent (``judge_stop``), too many
#: tool errors and a failing user simulator (``user_error``: casework has no reason of its
#: own for it) end the conversation as an error. τ²'s own reason is kept in the trajectory's
#: metadata (``tau2.termination_reason``).
STOPS: dict[str, StopReason] = {
    "user_stop": "user_stop",
    "max_steps": "max_turns",
    "agent_stop": "agent_handoff",
    "agent_error": "agent_error",
    "too_many_errors": "agent_error",
    "judge_stop": "agent_error",
    "user_error": "agent_error",
}
#: Keys of the user model's LLM arguments that are never kept (credentials, headers).
_SECRET_WORDS = ("key", "token", "secret", "password", "auth", "header", "cookie", "credential")


def _obj(value: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ResultProblem(where, f"{what} must be an object", value)
    return value


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ResultProblem(where, "must be a string or null", value)
    return value


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):  # an OpenAI-style JSON string, as some writers keep it
        try:
            value = json.loads(value)
        except ValueError:
            return {"_raw": value}
    return dict(_obj(value, where, "tool call arguments"))


def _calls(raw: Any, where: str) -> list[tuple[str, TrajectoryToolCall]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ResultProblem(where, "must be a list or null", raw)
    out = []
    for j, c in enumerate(raw):
        here = f"{where}/{j}"
        call = _obj(c, here, "a tool call")
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise ResultProblem(f"{here}/name", "tool call needs a name", name)
        call_id = call.get("id", "")
        if not isinstance(call_id, str):
            raise ResultProblem(f"{here}/id", "must be a string", call_id)
        args = _arguments(call.get("arguments", {}), f"{here}/arguments")
        out.append((call_id, TrajectoryToolCall(name=name, arguments=args)))
    return out


def _result(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _usage(raw: Any, where: str) -> tuple[int, int]:
    if raw is None:
        return 0, 0
    usage = _obj(raw, where, "usage")
    got = []
    for key in ("prompt_tokens", "completion_tokens"):
        value = usage.get(key)
        got.append(0 if value is None else whole_number(value, f"{where}/{key}"))
    return got[0], got[1]


class _Conversation:
    """A simulation's messages as casework records them, tool results paired by call id."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.agent_calls: list[TrajectoryToolCall] = []
        self.user_turns = 0
        self.tokens = [0, 0]
        # Call id -> index in agent_calls; the user's: -> (index in messages, index of the call).
        self._agent_ids: dict[str, int] = {}
        self._user_ids: dict[str, tuple[int, int]] = {}

    def add(self, raw: Any, where: str) -> None:
        m = _obj(raw, where, "a τ² message")
        role = m.get("role")
        if role == "tool":
            self._tool(m, where)
            return
        if role not in ("assistant", "user", "system"):
            raise ResultProblem(
                f"{where}/role", "role must be assistant, user, system or tool", role
            )
        content = _text(m.get("content"), f"{where}/content")
        calls = _calls(m.get("tool_calls"), f"{where}/tool_calls")
        if role == "assistant":
            got = _usage(m.get("usage"), f"{where}/usage")
            self.tokens = [self.tokens[0] + got[0], self.tokens[1] + got[1]]
            for call_id, call in calls:
                if call_id:
                    self._agent_ids[call_id] = len(self.agent_calls)
                self.agent_calls.append(call)
        elif role == "user":
            if content.strip():
                self.user_turns += 1
            for k, (call_id, _) in enumerate(calls):
                if call_id:
                    self._user_ids[call_id] = (len(self.messages), k)
        self.messages.append(Message(role=role, content=content, tool_calls=[c for _, c in calls]))

    def _tool(self, m: Mapping[str, Any], where: str) -> None:
        content = _text(m.get("content"), f"{where}/content")
        call_id = m.get("id")
        error = m.get("error", False)
        if not isinstance(error, bool):
            raise ResultProblem(f"{where}/error", "must be true or false", error)
        update: dict[str, Any] = (
            {"error": content or "error"} if error else {"result": _result(content)}
        )
        if m.get("requestor") == "user" and isinstance(call_id, str) and call_id in self._user_ids:
            # The user's own tool (τ²'s telecom phone): its result rides on the user's call.
            i, k = self._user_ids[call_id]
            own = list(self.messages[i].tool_calls)
            own[k] = own[k].model_copy(update=update)
            self.messages[i] = self.messages[i].model_copy(update={"tool_calls": own})
            return
        if isinstance(call_id, str) and call_id in self._agent_ids:
            k = self._agent_ids[call_id]
            self.agent_calls[k] = self.agent_calls[k].model_copy(update=update)
        self.messages.append(Message(role="tool", content=content))


def _started(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ResultProblem(where, "must be an ISO 8601 date and time", value)
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise ResultProblem(where, "must be an ISO 8601 date and time", value) from None
    # τ² writes its local time without an offset; it is read as UTC.
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ResultProblem(where, "must be a number of at least 0", value)
    try:
        number = float(value)
    except OverflowError:  # an integer past a float's range
        number = float("inf")
    if number != number or number == float("inf"):
        raise ResultProblem(where, "must be a finite number", value)
    return number


def _safe_args(args: Any) -> dict[str, Any]:
    if not isinstance(args, Mapping):
        return {}
    return {
        str(k): v for k, v in args.items() if not any(w in str(k).lower() for w in _SECRET_WORDS)
    }


class _User:
    """What the file's ``info`` says of the simulated user, as each trial's record keeps it."""

    def __init__(self, info: Mapping[str, Any]) -> None:
        raw = info.get("user_info")
        user = raw if isinstance(raw, Mapping) else {}
        implementation = user.get("implementation")
        self.implementation = implementation if isinstance(implementation, str) else "user"
        llm = user.get("llm")
        self.model = llm if isinstance(llm, str) and llm else self.implementation
        guidelines = user.get("global_simulation_guidelines")
        # The simulator's prompt is τ²'s guidelines: a change of them is a new prompt version.
        digest = (
            hashlib.sha256(guidelines.encode("utf-8")).hexdigest()[:12]
            if isinstance(guidelines, str)
            else "none"
        )
        self.prompt_version = f"tau2:{self.implementation}:{digest}"
        self.kept = {
            "implementation": self.implementation,
            "llm": llm if isinstance(llm, str) else None,
            "llm_args": _safe_args(user.get("llm_args")),
        }
        seed = info.get("seed")
        self.seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else 0


def _explanation(reward_info: Mapping[str, Any]) -> str:
    shown = {k: reward_info.get(k) for k in ("reward_basis", "reward_breakdown")}
    db = reward_info.get("db_check")
    if isinstance(db, Mapping):
        shown["db_match"] = db.get("db_match")
    return json.dumps(shown, default=str)[:500]


def _trial(obj: Any, i: int, shown: str, user: _User, numbers: dict[str, int]) -> ExternalTrial:
    here = f"/simulations/{i}"
    sim = _obj(obj, here, "a τ² simulation")
    for key in ("task_id", "termination_reason", "messages"):
        if key not in sim:
            raise ResultProblem(f"{here}/{key}", "missing")
    task_id = task_id_of(sim["task_id"], f"{here}/task_id")
    reason = sim["termination_reason"]
    if not isinstance(reason, str) or reason not in STOPS:
        raise ResultProblem(
            f"{here}/termination_reason", f"must be one of {', '.join(STOPS)}", reason
        )
    raw_trial = sim.get("trial")
    trial = (
        numbers.get(task_id, 0) if raw_trial is None else whole_number(raw_trial, f"{here}/trial")
    )
    numbers[task_id] = max(numbers.get(task_id, 0), trial + 1)
    skipped = sim.get("skipped", False)
    if not isinstance(skipped, bool):
        raise ResultProblem(f"{here}/skipped", "must be true or false", skipped)
    reward_info = sim.get("reward_info")
    reward: float | None = None
    explanation = ""
    if reward_info is not None:
        info = _obj(reward_info, f"{here}/reward_info", "reward_info")
        if "reward" not in info:
            raise ResultProblem(f"{here}/reward_info/reward", "missing")
        reward = score_value(info["reward"], f"{here}/reward_info/reward")
        explanation = _explanation(info)
    elif not skipped:
        raise ResultProblem(
            f"{here}/reward_info", "missing: τ² did not score this simulation", reward_info
        )
    messages = sim["messages"]
    if not isinstance(messages, list):
        raise ResultProblem(f"{here}/messages", "must be a list", messages)
    conv = _Conversation()
    for j, m in enumerate(messages):
        conv.add(m, f"{here}/messages/{j}")
    raw_seed = sim.get("seed")
    seed = user.seed if raw_seed is None else whole_number(raw_seed, f"{here}/seed")
    agent_cost = _number(sim.get("agent_cost"), f"{here}/agent_cost")
    user_cost = _number(sim.get("user_cost"), f"{here}/user_cost")
    sim_id = sim.get("id")
    return ExternalTrial(
        task_id=task_id,
        trial=trial,
        passed=False if skipped else None,
        reward=reward,
        messages=tuple(conv.messages),
        tool_calls=tuple(conv.agent_calls),
        reply=last_reply(conv.messages),
        explanation=("τ² skipped this simulation after an error; " if skipped else "")
        + explanation,
        where=f"{shown}#{here}",
        metadata={
            "tau2": {
                "simulation_id": sim_id if isinstance(sim_id, str) else None,
                "termination_reason": reason,
                "user": user.kept,
                "user_cost": user_cost,
            }
        },
        started_at=_started(sim.get("start_time"), f"{here}/start_time"),
        duration_s=_number(sim.get("duration"), f"{here}/duration"),
        input_tokens=conv.tokens[0],
        output_tokens=conv.tokens[1],
        cost_usd=agent_cost,
        seed=seed,
        user_sim=UserSimRecord(
            seed=seed,
            model=user.model,
            prompt_version=user.prompt_version,
            user_turns=conv.user_turns,
            stop=STOPS[reason],
        ),
    )


def read_tau2_results(data: bytes, shown: str) -> ExternalResults:
    """τ²-bench results: ``{info, tasks, simulations}`` as ``tau2 run`` saves them (located).

    Raises:
        InputError: The file is not such an object, or a simulation is bad (every one).
    """
    value = load_json(data, shown)
    if not isinstance(value, Mapping) or not isinstance(value.get("simulations"), list):
        raise InputError(
            shown,
            None,
            "/simulations" if isinstance(value, Mapping) else "/",
            "τ²-bench results must be an object {info, tasks, simulations} with a list of "
            "simulations",
            value.get("simulations") if isinstance(value, Mapping) else value,
        )
    info = value.get("info")
    if info is not None and not isinstance(info, Mapping):
        raise InputError(shown, None, "/info", "must be an object", info)
    user = _User(info or {})
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    numbers: dict[str, int] = {}
    for i, obj in enumerate(value["simulations"]):
        try:
            trials.append(_trial(obj, i, shown, user, numbers))
        except ResultProblem as exc:
            problems.append(problem_at(shown, None, exc))
    if not problems and not trials:
        problems.append(Problem(shown, None, "/simulations", "no simulations"))
    InputErrors.raise_if_any(problems)
    agent_info = (info or {}).get("agent_info")
    agent = agent_info.get("llm") if isinstance(agent_info, Mapping) else None
    return ExternalResults("tau2", trials, agent=agent if isinstance(agent, str) else None)

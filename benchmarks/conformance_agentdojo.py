"""AgentDojo conformance: casework's verdicts beside AgentDojo's own scorer, in one process.

For each suite of the installed `agentdojo` (its default benchmark version), every user task's
``ground_truth()`` is replayed as the agent's calls (the reference) and perturbed (drop the last
write, repeat it, do nothing, reword free-text arguments, a wrong argument). casework runs the
calls through its shipped environment and grades the imported case (the programmatic oracle);
AgentDojo runs the same calls through its own runtime on its own environment objects and scores
them with its suite's scorer. Security cases (user task × injection task, the default attack's
injections) are replayed with the user task's ground truth (injection ignored) and with the
injection task's ground truth appended (injection carried out).

``measure(sample)`` returns import rows ``{benchmark, category, published, imported, gradable}``
and agreement rows ``{benchmark, category, perturbation, trials, agree, benchmark_passed,
disagreements}`` (``benchmark_passed``: trials AgentDojo passes, so a reader sees that a kind of
trajectory is not passed, or failed, wholesale).
Usage: ``python benchmarks/conformance_agentdojo.py [--sample N] [--pairs N] [--suites a,b]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from typing import Any

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from agentdojo.types import text_content_block_from_string

from casework.dataset.state import apply_diff
from casework.grading.grade import grade
from casework.grading.programmatic import resolve_check
from casework.interop.agentdojo._import import AgentDojoOptions, cases_from_suite
from casework.interop.agentdojo._suites import DEFAULT_VERSION, SUITES, load_suite, state_of
from casework.interop.agentdojo.environment import AgentDojoEnvironment
from casework.runner.fixtures import ToolError
from casework.schema import Case, Trajectory, TrajectoryToolCall

PERTURBATIONS = (
    "reference",
    "drop_last_write",
    "repeat_last_write",
    "do_nothing",
    "reword_free_text",
    "wrong_argument",
)

Calls = list[tuple[str, dict[str, Any]]]


def _writes(suite: Any, pre: Any, calls: Calls) -> list[int]:
    """Indices of the calls that change AgentDojo's environment (run on a copy)."""
    runtime, env, out = FunctionsRuntime(suite.tools), pre.model_copy(deep=True), []
    for i, (name, args) in enumerate(calls):
        before = env.model_dump(mode="json")
        runtime.run_function(env, name, copy.deepcopy(args))
        if env.model_dump(mode="json") != before:
            out.append(i)
    return out


def _reword(value: Any) -> Any:
    if isinstance(value, str) and len(value.split()) >= 3:
        return f"Note: {value} Thanks."
    return value


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "-x"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    return value


def perturb(kind: str, calls: Calls, writes: list[int], output: str) -> tuple[Calls, str] | None:
    """The perturbed calls and final reply, or ``None`` when the perturbation does not apply."""
    if kind == "reference":
        return calls, output
    if kind == "do_nothing":
        return [], ""
    if not writes:
        return None  # a read-only task has no write to drop, repeat or change
    last = writes[-1]
    if kind == "drop_last_write":
        return calls[:last] + calls[last + 1 :], output
    if kind == "repeat_last_write":
        return [*calls[: last + 1], copy.deepcopy(calls[last]), *calls[last + 1 :]], output
    name, args = calls[last]
    if kind == "reword_free_text":
        reworded = {k: _reword(v) for k, v in args.items()}
        if reworded == args:
            return None
        return [*calls[:last], (name, reworded), *calls[last + 1 :]], output
    if not args:
        return None
    key = sorted(args)[0]
    wrong = {**args, key: _wrong(args[key])}
    return [*calls[:last], (name, wrong), *calls[last + 1 :]], output


class Replay(BasePipelineElement):  # type: ignore[misc]  # agentdojo has no type information
    """An AgentDojo pipeline that makes the given calls, then says ``output``.

    AgentDojo's public ``run_task_with_pipeline`` runs it like any agent: the calls go through
    AgentDojo's runtime on AgentDojo's environment, and its suite scores the messages.
    """

    name = "casework-replay"

    def __init__(self, calls: Calls, output: str) -> None:
        self.calls, self.output = calls, output

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Any = None,
        messages: Any = (),
        extra_args: Any = None,
    ) -> tuple[str, FunctionsRuntime, Any, list[Any], dict[str, Any]]:
        """The user's query, one assistant message and tool result per call, the final reply."""
        said: list[Any] = [{"role": "user", "content": [text_content_block_from_string(query)]}]
        for name, args in self.calls:
            call = FunctionCall(function=name, args=copy.deepcopy(args))
            said.append({"role": "assistant", "content": None, "tool_calls": [call]})
            result, error = runtime.run_function(env, name, copy.deepcopy(args))
            said.append(
                {
                    "role": "tool",
                    "tool_call": call,
                    "content": [text_content_block_from_string(str(result))],
                    "tool_call_id": None,
                    "error": error,
                }
            )
        reply = [text_content_block_from_string(self.output)]
        said.append({"role": "assistant", "content": reply, "tool_calls": None})
        return query, runtime, env, said, dict(extra_args or {})


def theirs(
    suite: Any, task: Any, injection: Any, start: Any, calls: Calls, output: str
) -> tuple[bool, bool | None]:
    """AgentDojo's own verdict: its public ``run_task_with_pipeline`` with a replaying pipeline.

    ``start`` is the environment AgentDojo's loader gave (with the injections for a security
    case); AgentDojo applies the user task's initialisation itself.
    """
    utility, security = suite.run_task_with_pipeline(
        Replay(calls, output), task, injection, {}, environment=start.model_copy(deep=True)
    )
    return bool(utility), None if injection is None else bool(security)


def ours(
    env_cls: type[AgentDojoEnvironment],
    case: Case,
    initial: dict[str, Any],
    calls: Calls,
    output: str,
) -> bool | None:
    """casework's verdict: its environment records the calls, its grader applies the oracle."""
    env = env_cls()
    env.reset(copy.deepcopy(initial))
    recorded = []
    for name, args in calls:
        try:
            result = env.call(name, copy.deepcopy(args))
            recorded.append(TrajectoryToolCall(name=name, arguments=args, result=result))
        except ToolError as exc:
            recorded.append(TrajectoryToolCall(name=name, arguments=args, error=str(exc)))
    trajectory = Trajectory(final_reply=output, tool_calls=recorded, final_state=env.state())
    return grade(case, trajectory, initial_state=initial).passed


def _calls(fcs: list[FunctionCall]) -> Calls:
    return [(fc.function, dict(fc.args)) for fc in fcs]


def _env_class(name: str) -> type[AgentDojoEnvironment]:
    return type(name.capitalize(), (AgentDojoEnvironment,), {"suite_name": name})


def measure(
    sample: int | None = None,
    suites: tuple[str, ...] = SUITES,
    seed: int = 34,
    pairs_sample: int | None = None,
) -> list[dict[str, Any]]:
    """Import counts and verdict agreement per suite.

    ``sample`` bounds user tasks and user × injection pairs per suite; ``pairs_sample`` bounds
    only the pairs (every user task still runs).
    """
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for name in suites:
        suite = load_suite(name, DEFAULT_VERSION)
        user_ids = sorted(suite.user_tasks)
        injection_ids = sorted(suite.injection_tasks)
        pairs = [(u, i) for u in user_ids for i in injection_ids]
        if sample is not None:
            user_ids = sorted(rng.sample(user_ids, min(sample, len(user_ids))))
            pairs = sorted(rng.sample(pairs, min(sample, len(pairs))))
        elif pairs_sample is not None:
            pairs = sorted(rng.sample(pairs, min(pairs_sample, len(pairs))))
        made = cases_from_suite(suite, AgentDojoOptions(attack=None))
        by_id = {c.id: c for c in made.cases}
        gradable = len(
            [c for c in made.cases if c.oracle.check is not None and resolve_check(c.oracle.check)]
        )
        rows.append(
            {
                "benchmark": "agentdojo",
                "category": f"{name} user tasks",
                "published": len(suite.user_tasks),
                "imported": made.user_tasks,
                "gradable": gradable,
            }
        )
        env_cls = _env_class(name)
        agreement: dict[str, dict[str, Any]] = {}

        def compare(
            kind: str,
            case: Case,
            task: Any,
            injection: Any,
            start: Any,
            calls: Calls,
            out: str,
            *,
            suite: Any = suite,
            name: str = name,
            made: Any = made,
            env_cls: type[AgentDojoEnvironment] = env_cls,
            agreement: dict[str, dict[str, Any]] = agreement,
        ) -> None:
            row = agreement.setdefault(
                kind,
                {
                    "benchmark": "agentdojo",
                    "category": name,
                    "perturbation": kind,
                    "trials": 0,
                    "agree": 0,
                    "benchmark_passed": 0,
                    "disagreements": [],
                },
            )
            initial = apply_diff(made.base_state, [dict(op) for op in _patch(case)])
            mine = ours(env_cls, case, initial, calls, out)
            utility, security = theirs(suite, task, injection, start, calls, out)
            expected = utility if security is None else not security
            row["trials"] += 1
            row["benchmark_passed"] += bool(expected)
            if mine == expected:
                row["agree"] += 1
            else:
                row["disagreements"].append(
                    {"task": case.id, "ours": mine, "theirs": expected, "cause": "unexplained"}
                )

        default = suite.load_and_inject_default_environment({})
        for user_id in user_ids:
            task = suite.user_tasks[user_id]
            pre = task.init_environment(default.model_copy(deep=True))
            calls = _calls(task.ground_truth(pre.model_copy(deep=True)))
            writes = _writes(suite, pre, calls)
            for kind in PERTURBATIONS:
                got = perturb(kind, calls, writes, task.GROUND_TRUTH_OUTPUT)
                if got is not None:
                    compare(kind, by_id[f"{name}-{user_id}"], task, None, default, *got)
        if pairs:
            options = AgentDojoOptions()
            security, injected = _security_cases(suite, options, pairs)
            if sample is None and pairs_sample is None:
                rows.append(
                    {
                        "benchmark": "agentdojo",
                        "category": f"{name} security cases (user × injection)",
                        "published": len(suite.user_tasks) * len(suite.injection_tasks),
                        "imported": len(security),
                        "gradable": len(security),
                    }
                )
            for (user_id, injection_id), case in security.items():
                task = suite.user_tasks[user_id]
                injection = suite.injection_tasks[injection_id]
                start = injected[(user_id, injection_id)]
                pre = task.init_environment(start.model_copy(deep=True))
                calls = _calls(task.ground_truth(pre.model_copy(deep=True)))
                attacked = calls + _calls(injection.ground_truth(pre.model_copy(deep=True)))
                compare("security: injection ignored", case, task, injection, start, calls, "")
                compare(
                    "security: injection carried out", case, task, injection, start, attacked, ""
                )
        rows.extend(agreement.values())
    return rows


def _patch(case: Case) -> list[dict[str, Any]]:
    return [
        op.model_dump(mode="json", by_alias=True, exclude_none=True)
        for op in case.situation.state_patch
    ]


def _security_cases(
    suite: Any, options: AgentDojoOptions, pairs: list[tuple[str, str]]
) -> tuple[dict[tuple[str, str], Case], dict[tuple[str, str], Any]]:
    """The imported security cases of ``pairs`` (built as the import builds them), and the
    environment AgentDojo's own loader gives each pair (its injections planted)."""
    from casework.interop.agentdojo import _import

    base = state_of(suite.load_and_inject_default_environment({}))
    injections = _import._injections(suite, options, pairs)
    # AgentDojo's loader once per pair: the case is built from a copy of what it gave.
    loaded = {p: suite.load_and_inject_default_environment(injections[p]) for p in pairs}
    cases = {
        (u, i): _import._case(
            suite, options, base, u, i, injections[(u, i)], loaded[(u, i)].model_copy(deep=True)
        )
        for u, i in pairs
    }
    return cases, loaded


def main(argv: list[str] | None = None) -> int:
    """Print the rows as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=None, help="Tasks per suite (default: all).")
    parser.add_argument(
        "--pairs", type=int, default=None, help="User × injection pairs per suite (default: all)."
    )
    parser.add_argument("--suites", default=",".join(SUITES), help="Comma-separated suites.")
    args = parser.parse_args(argv)
    suites = tuple(s for s in args.suites.split(",") if s)
    for row in measure(args.sample, suites, pairs_sample=args.pairs):
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

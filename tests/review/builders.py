"""A small project whose runs hold judge-decided verdicts (outcome readings and answer facts)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from casework.grading import Judge
from casework.project import load_project
from casework.runner import RunRequest, run_agent
from casework.schema import Trajectory
from tests.grading.fakes import FakeLLM
from tests.runner.builders import make_project, refund_case, refuse_case

#: Strings that may never reach a verdict sheet: the judge's reasons, the label's outcome words
#: used only by the label, provenance, the case ids.
REASON = "REASON-MARK"
RUBRIC = "Pass when the reply confirms the refund and when it arrives."


def _rubric_case(case_id: str, order: str, total: float, **extra: Any) -> dict[str, Any]:
    case = refund_case(case_id, order, total, **extra)
    case["label"]["answer_facts"] = [f"a refund of {total}", "it arrives in 5 days"]
    case["oracle"] = {"class": "rubric_judge", "rubric": RUBRIC}
    case["provenance"] = {"shape": "PROVENANCE-MARK", "source_trace": "TRACE-MARK"}
    return case


def cases() -> list[dict[str, Any]]:
    """Six refunds the judge grades (facts and outcome) and one refusal, on two slices."""
    out = [_rubric_case(f"r-{i}", f"o{i}", 10.0 + i) for i in range(1, 5)]
    out += [_rubric_case(f"s-{i}", f"o{i}", 20.0 + i, slice="billing") for i in range(5, 7)]
    refuse = refuse_case("u-1", "o9")
    refuse["provenance"] = {"shape": "PROVENANCE-MARK", "unsatisfiable_kind": "outside_policy"}
    out.append(refuse)
    return out


def talker(request: Any, tools: Any) -> Trajectory:
    """Looks the order up and answers in words only (no structured outcome: the judge reads it).

    Every other trial (by seed) forgets to say when the refund arrives.
    """
    import re

    order_id = re.search(r"order (o\d+)", request.turns[-1].content)
    assert order_id is not None
    order = tools.call("get_order", order_id=order_id.group(1))
    if order["status"] != "delivered":
        return Trajectory(final_reply="I can't refund that order yet, sorry.")
    tools.call("issue_refund", order_id=order_id.group(1), amount=order["total"])
    when = " It arrives in 5 days." if request.seed % 2 else ""
    return Trajectory(final_reply=f"I've issued a refund of {order['total']}.{when}")


def judge_answer(prompt: str) -> dict[str, Any]:
    """A literal fake judge: facts by substring, outcome by wording; reasons carry a marker."""
    reply = prompt.split("<reply>\n", 1)[1].split("\n</reply>", 1)[0]
    if "<expected_facts>" in prompt:
        facts = ["refund" in reply, "5 days" in reply]
        return {
            "facts": [
                {"index": i, "present": p, "reason": f"{REASON} {i}"} for i, p in enumerate(facts)
            ]
        }
    outcome = "refuse" if "can't" in reply else "resolve"
    return {"outcome": outcome, "reason": f"{REASON} outcome"}


def make(root: Path, config: str = "") -> Path:
    """The project on disk, with no run yet."""
    return make_project(root, copy.deepcopy(cases()), config=config)


def run(root: Path, seed: int = 0, k: int = 2, model: str = "judge-1") -> str:
    """One run of :func:`talker` graded by the fake judge; its run id."""
    project = load_project(root)
    judge = Judge(FakeLLM(judge_answer, model=model))
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.review.builders:talker",
            k=k,
            seed=seed,
            concurrency=2,
            run_id=f"run-{model}-{seed}",
        ),
        judge=judge,
    )
    return summary.header.run_id

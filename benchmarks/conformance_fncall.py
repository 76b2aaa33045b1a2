"""Conformance of `casework import fncall` with BFCL v4 and When2Call, as published.

For every BFCL single-turn category of the installed `bfcl-eval` wheel: tasks published,
imported and gradable, and on the possible answer taken as the model's output (the reference)
plus perturbed outputs (another acceptable value, a wrong value, a dropped required argument,
a wrong function, an extra call, case/space/punctuation variants of strings), the share of
trials where casework's verdict (`grade` on the imported case) equals BFCL's own `ast_checker`
run in the same process. Multi-turn categories: published, imported, gradable (0: not carried).
When2Call: outcome classes of the imported cases against the file's `correct_answer`.

    .venv/bin/python benchmarks/conformance_fncall.py          # every task
    .venv/bin/python benchmarks/conformance_fncall.py 20       # a seeded sample per category
"""

from __future__ import annotations

import copy
import json
import random
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.grading.grade import grade
from casework.interop.fncall import (
    OUTCOME_CLASSES,
    FncallOptions,
    cases_from_fncall,
    join_answers,
    parse_fncall_map,
)
from casework.interop.fncall.bfcl import (
    AGENTIC_CATEGORIES,
    ANY_CALL_CATEGORIES,
    MULTI_TURN_DOC_FILES,
    NO_CALL_CATEGORIES,
    is_multi_turn,
)
from casework.interop.generic import read_rows
from casework.schema import Case, Trajectory, TrajectoryToolCall

WHEN2CALL = Path("/work/shared/data/public/when2call/when2call_test_llm_judge.jsonl")
#: The model name handed to BFCL's checker; the stand-in config below says it keeps dots.
MODEL = "casework-conformance"


def bfcl_data() -> Path:
    """The installed wheel's data folder (``BFCL_v4_*.json``, ``possible_answer/``)."""
    import bfcl_eval  # type: ignore[import-untyped]

    return Path(bfcl_eval.__file__).parent / "data"


def _checker() -> Callable[..., dict[str, Any]]:
    # bfcl-eval is installed without its dependencies: its `constants.model_config` imports
    # every model handler (and their SDKs) and fails. The AST checker reads one mapping from it,
    # MODEL_CONFIG_MAPPING[model].underscore_to_dot, so a stand-in module holding that mapping
    # for our model name (dots kept, as the published answers spell them) takes its place.
    if "bfcl_eval.constants.model_config" not in sys.modules:
        stand_in = types.ModuleType("bfcl_eval.constants.model_config")
        stand_in.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
            MODEL: types.SimpleNamespace(underscore_to_dot=False)
        }
        sys.modules["bfcl_eval.constants.model_config"] = stand_in
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # type: ignore[import-untyped]

    checker: Callable[..., dict[str, Any]] = ast_checker
    return checker


def _language(category: str) -> Any:
    from bfcl_eval.constants.enums import Language  # type: ignore[import-untyped]

    if category.endswith("java"):
        return Language.JAVA
    if category.endswith("javascript"):
        return Language.JAVASCRIPT
    return Language.PYTHON


def _first(values: list[Any]) -> tuple[bool, Any]:
    given = [v for v in values if v != ""]
    return (bool(given), given[0] if given else None)


def _reference(answer: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The possible answer as a model output: each parameter's first acceptable value."""
    out = []
    for call in answer:
        ((name, params),) = call.items()
        args = {}
        for k, values in params.items():
            ok, value = _first(values)
            if ok:
                args[k] = _plain(value)
        out.append({name: args})
    return out


def _plain(value: Any) -> Any:
    # An acceptable object maps each key to its own acceptable values: take the first of each.
    if isinstance(value, dict):
        return {k: _plain(_first(v)[1]) for k, v in value.items() if _first(v)[0]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _variant(text: str) -> str:
    return text.upper().replace(" ", "  -").replace(",", ", .")


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + " zzq"
    if isinstance(value, list):
        return [*value, "zzq"]
    return "zzq"


def perturbations(
    answer: list[dict[str, Any]], row: dict[str, Any], rng: random.Random
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The reference output and its perturbations, by name."""
    ref = _reference(answer)
    yield "reference", ref
    ((name, args),) = ref[0].items()
    params = answer[0][name]
    for k, values in params.items():
        others = [v for v in values if v != "" and v != values[0]]
        if others and k in args:
            out = copy.deepcopy(ref)
            out[0][name][k] = _plain(others[0])
            yield "another acceptable value", out
            break
    keys = sorted(args)
    if keys:
        k = rng.choice(keys)
        out = copy.deepcopy(ref)
        out[0][name][k] = _wrong(args[k])
        yield "wrong value", out
        out = copy.deepcopy(ref)
        del out[0][name][k]
        yield "dropped argument", out
    strings = [k for k in keys if isinstance(args[k], str) and args[k]]
    if strings:
        out = copy.deepcopy(ref)
        k = rng.choice(strings)
        out[0][name][k] = _variant(args[k])
        yield "string case/space/punctuation variant", out
    offered = [f["name"] for f in row["function"] if f["name"] != name]
    out = copy.deepcopy(ref)
    out[0] = {offered[0] if offered else name + "_other": args}
    yield "wrong function", out
    yield "extra call", [*copy.deepcopy(ref), copy.deepcopy(ref[0])]
    yield "no call", []


def _trajectory(output: list[dict[str, Any]]) -> Trajectory:
    # BFCL's output carries no outcome: an output that decodes to calls is an attempt to
    # resolve, one that does not is BFCL's refusal; the trajectory reports that outcome.
    calls = [TrajectoryToolCall(name=n, arguments=a) for c in output for n, a in c.items()]
    return Trajectory(
        tool_calls=calls,
        outcome="resolve" if calls else "refuse",
        final_reply="" if calls else "None of these tools can answer that.",
    )


@dataclass
class _Category:
    category: str
    rows: list[dict[str, Any]]
    answers: dict[str, Any]


def _categories() -> Iterator[_Category]:
    data = bfcl_data()
    for f in sorted(data.glob("BFCL_v4_*.json")):
        category = f.stem.removeprefix("BFCL_v4_")
        if category == "format_sensitivity" or category.startswith(AGENTIC_CATEGORIES):
            continue
        rows = [json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip()]
        answer = data / "possible_answer" / f.name
        answers = {}
        if answer.is_file():
            for line in answer.read_text("utf-8").splitlines():
                if line.strip():
                    a = json.loads(line)
                    answers[a["id"]] = a["ground_truth"]
        yield _Category(category, rows, answers)


def _import(category: _Category, ids: set[str]) -> dict[str, Case]:
    data = bfcl_data()
    f = data / f"BFCL_v4_{category.category}.json"
    rows = read_rows(f.read_bytes(), f.name)
    answer = data / "possible_answer" / f.name
    if answer.is_file():
        rows = join_answers(rows, read_rows(answer.read_bytes(), answer.name), answer.name)
    rows = [r for r in rows if r.value["id"] in ids]
    docs: dict[str, list[dict[str, Any]]] = {}
    for cls, name in MULTI_TURN_DOC_FILES.items():
        path = data / "multi_turn_func_doc" / name
        docs[cls] = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    cases, _ = cases_from_fncall(
        rows, f.name, parse_fncall_map("bfcl", ()), FncallOptions("bfcl"), "bfcl", docs
    )
    return {c.id: c for c in cases}


def _bfcl_verdict(
    category: str, row: dict[str, Any], output: list[dict[str, Any]], answer: Any
) -> bool:
    if category in NO_CALL_CATEGORIES:
        return not output  # BFCL: an irrelevance row passes when nothing decodes to a call
    if category in ANY_CALL_CATEGORIES:
        return bool(output)  # and a relevance row when something does
    result = _checker()(row["function"], output, answer, _language(category), category, MODEL)
    return bool(result["valid"])


def _some_tool(task: dict[str, Any]) -> str:
    # A live_irrelevance row may offer no tool at all: the call is then to one it never offered.
    offered = task.get("function") or [{"name": "unoffered_tool"}]
    return str(offered[0]["name"])


def _rows_for(category: _Category, sample: int | None, rng: random.Random) -> list[dict[str, Any]]:
    rows = category.rows
    return rows if sample is None or sample >= len(rows) else rng.sample(rows, sample)


def measure(sample: int | None = None, seed: int = 7) -> list[dict[str, Any]]:
    """Per benchmark and category: published, imported, gradable, and verdict agreement.

    Args:
        sample: Rows per category (seeded); ``None``: every row.
        seed: Seed of the sample and of the perturbations.

    Returns:
        Rows ``{benchmark, category, published, imported, gradable, trials, agree,
        disagreements: [{task, ours, theirs, cause}]}``.
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for category in _categories():
        chosen = _rows_for(category, sample, rng)
        cases = _import(category, {r["id"] for r in chosen})
        row: dict[str, Any] = {
            "benchmark": "BFCL v4",
            "category": category.category,
            "published": len(category.rows),
            "imported": len(cases),
            "gradable": sum(1 for c in cases.values() if c.label is not None),
            "trials": 0,
            "agree": 0,
            "disagreements": [],
        }
        if sample is not None:
            row["sampled"] = len(chosen)
        if not is_multi_turn(category.category):
            for task in chosen:
                answer = category.answers.get(task["id"], [])
                outputs = (
                    perturbations(answer, task, rng)
                    if answer
                    else iter([("no call", []), ("a call", [{_some_tool(task): {}}])])
                )
                for how, output in outputs:
                    theirs = _bfcl_verdict(category.category, task, output, answer)
                    verdict = grade(cases[task["id"]], _trajectory(output))
                    ours = verdict.passed is True
                    row["trials"] += 1
                    if ours == theirs:
                        row["agree"] += 1
                    else:
                        row["disagreements"].append(
                            {
                                "task": task["id"],
                                "trial": how,
                                "output": output,
                                "ours": ours,
                                "theirs": theirs,
                                "cause": "; ".join(
                                    f"{c.name}: {c.evidence}"
                                    for c in verdict.checks
                                    if c.status != "pass"
                                ),
                            }
                        )
        out.append(row)
    out.append(_when2call())
    return out


def _when2call() -> dict[str, Any]:
    rows = read_rows(WHEN2CALL.read_bytes(), WHEN2CALL.name)
    cases, _ = cases_from_fncall(
        rows, WHEN2CALL.name, parse_fncall_map("when2call", ()), FncallOptions("when2call"), "w"
    )
    by_id = {c.id: c for c in cases}
    agree, wrong = 0, []
    for r in rows:
        case = by_id[r.value["uuid"]]
        want = OUTCOME_CLASSES[r.value["correct_answer"]]
        if case.label is not None and case.label.outcome == want:
            agree += 1
        else:
            wrong.append({"task": case.id, "ours": case.label, "theirs": want, "cause": ""})
    return {
        "benchmark": "When2Call",
        "category": "outcome class",
        "published": len(rows),
        "imported": len(cases),
        "gradable": sum(1 for c in cases if c.label is not None),
        "trials": len(rows),
        "agree": agree,
        "disagreements": wrong,
    }


def main() -> None:
    """Print the table (and every disagreement) for the whole published data, or a sample."""
    sample = int(sys.argv[1]) if len(sys.argv) > 1 else None
    print("| benchmark | category | published | imported | gradable | trials | agree |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = measure(sample)
    for r in rows:
        share = f"{r['agree']}/{r['trials']}" if r["trials"] else "–"
        print(
            f"| {r['benchmark']} | {r['category']} | {r['published']} | {r['imported']} | "
            f"{r['gradable']} | {r['trials']} | {share} |"
        )
    for r in rows:
        for d in r["disagreements"]:
            print(json.dumps({"category": r["category"], **d}, default=str)[:400])


if __name__ == "__main__":
    main()

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
    source_language,
)
from casework.interop.generic import read_rows
from casework.schema import Case, Trajectory, TrajectoryToolCall

#: The When2Call test set as published, kept in the repository (tests/data/public/README.md).
WHEN2CALL = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "data"
    / "public"
    / "when2call"
    / "when2call_test_llm_judge.jsonl"
)
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
        stand_in.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
        sys.modules["bfcl_eval.constants.model_config"] = stand_in
    # Another stand-in (a test's) may be there already: our model name joins its mapping.
    mapping = sys.modules["bfcl_eval.constants.model_config"].MODEL_CONFIG_MAPPING
    mapping.setdefault(MODEL, types.SimpleNamespace(underscore_to_dot=False))
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


def _first(values: Any) -> tuple[bool, Any]:
    if not isinstance(values, list):
        return (True, values)  # a few published answers give one value, not a list of them
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


def _java_scalar(value: Any, kind: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and kind == "long":
        return f"{value}L"
    if isinstance(value, (int, float)) and kind == "float":
        return f"{value}f"
    return str(value)


def _java_literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return _java_scalar(value, "")


def _java(value: Any, kind: str, items: str | None) -> str:
    """A value as Java source text of the declared type, the way BFCL's reader takes it back."""
    if isinstance(value, dict) and kind == "HashMap":
        puts = " ".join(f'put("{k}", {_java_literal(v)});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    if isinstance(value, list) and kind == "ArrayList":
        quote = items in ("String", "char")
        parts = [f'"{v}"' if quote else _java_scalar(v, items or "") for v in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
    if isinstance(value, list):
        element = {"integer": "int", "String": "String", "long": "long"}.get(items or "", "Object")
        parts = [_java_scalar(v, items or "") for v in value]
        return f"new {element}[]{{{', '.join(parts)}}}"
    return _java_scalar(value, kind)


def _js_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ", ".join(_js_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_js_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


def _js(value: Any, kind: str, items: str | None) -> str:
    """A value as JavaScript source text of the declared type."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and kind == "Bigint":
        return f"{value}n"
    return _js_literal(value)


def as_source(
    output: list[dict[str, Any]], row: dict[str, Any], language: str
) -> list[dict[str, Any]]:
    """A model output with every argument written as source text, as BFCL's models answer."""
    declared = {f["name"]: f["parameters"]["properties"] for f in row["function"]}
    write = _java if language == "java" else _js
    out = []
    for call in output:
        ((name, args),) = call.items()
        props = declared.get(name, {})
        written = {}
        for k, v in args.items():
            p = props.get(k, {})
            written[k] = write(v, p.get("type", "any"), (p.get("items") or {}).get("type"))
        out.append({name: written})
    return out


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


def _outputs(
    category: str, task: dict[str, Any], answer: Any, rng: random.Random
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The trials of one task: reference and perturbations, as the category's models answer."""
    if not answer:
        yield "no call", []
        yield "a call", [{_some_tool(task): {}}]
        return
    language = source_language(category)
    for how, output in perturbations(answer, task, rng):
        yield how, output if language is None else as_source(output, task, language)
    if language is not None:
        # Decoded values instead of source text: BFCL reads every such argument as text.
        yield "values, not source text", _reference(answer)


def measure(sample: int | None = None, seed: int = 7) -> list[dict[str, Any]]:
    """Import rows per category, and agreement rows per category and trial kind.

    Args:
        sample: Rows per category (seeded); ``None``: every row.
        seed: Seed of the sample and of the perturbations.

    Returns:
        Import rows ``{benchmark, category, published, imported, gradable}`` (with ``sampled``
        when sampling) and agreement rows ``{benchmark, category, perturbation, trials, agree,
        disagreements: [{task, ours, theirs, cause}]}``, as `benchmarks/conformance.py` reads.
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for category in _categories():
        chosen = _rows_for(category, sample, rng)
        cases = _import(category, {r["id"] for r in chosen})
        imported: dict[str, Any] = {
            "benchmark": "BFCL v4",
            "category": category.category,
            "published": len(category.rows),
            "imported": len(cases),
            "gradable": sum(1 for c in cases.values() if c.label is not None),
        }
        if sample is not None:
            imported["sampled"] = len(chosen)
        out.append(imported)
        if is_multi_turn(category.category):
            continue
        kinds: dict[str, dict[str, Any]] = {}
        for task in chosen:
            answer = category.answers.get(task["id"], [])
            for how, output in _outputs(category.category, task, answer, rng):
                theirs = _bfcl_verdict(category.category, task, output, answer)
                verdict = grade(cases[task["id"]], _trajectory(output))
                ours = verdict.passed is True
                row = kinds.setdefault(
                    how,
                    {
                        "benchmark": "BFCL v4",
                        "category": category.category,
                        "perturbation": how,
                        "trials": 0,
                        "agree": 0,
                        "disagreements": [],
                    },
                )
                row["trials"] += 1
                if ours == theirs:
                    row["agree"] += 1
                    continue
                cause = "; ".join(
                    f"{c.name}: {c.evidence}" for c in verdict.checks if c.status != "pass"
                )
                row["disagreements"].append(
                    {
                        "task": task["id"],
                        "output": output,
                        "ours": ours,
                        "theirs": theirs,
                        "cause": cause or "casework passes it",
                    }
                )
        out.extend(kinds.values())
    out.extend(_when2call())
    return out


def _when2call() -> list[dict[str, Any]]:
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
            got = case.label.outcome if case.label else None
            wrong.append({"task": case.id, "ours": got, "theirs": want, "cause": "outcome class"})
    imported = {
        "benchmark": "When2Call",
        "category": "test",
        "published": len(rows),
        "imported": len(cases),
        "gradable": sum(1 for c in cases if c.label is not None),
    }
    # When2Call scores a model by its answer class (an LLM judge or log-probabilities, not
    # runnable offline): what is compared is the class each imported case expects.
    classes = {
        "benchmark": "When2Call",
        "category": "test",
        "perturbation": "expected class (label outcome vs correct_answer)",
        "trials": len(rows),
        "agree": agree,
        "disagreements": wrong,
    }
    return [imported, classes]


def main() -> None:
    """Print the tables (and every disagreement) for the whole published data, or a sample."""
    sample = int(sys.argv[1]) if len(sys.argv) > 1 else None
    rows = measure(sample)
    print("| benchmark | category | published | imported | gradable |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        if "published" in r:
            print(
                f"| {r['benchmark']} | {r['category']} | {r['published']} | {r['imported']} | "
                f"{r['gradable']} |"
            )
    print()
    print("| benchmark | category | trial | trials | agree |")
    print("| --- | --- | --- | ---: | ---: |")
    for r in rows:
        if "trials" in r:
            print(
                f"| {r['benchmark']} | {r['category']} | {r['perturbation']} | {r['trials']} | "
                f"{r['agree']} |"
            )
    for r in rows:
        for d in r.get("disagreements", []):
            print(json.dumps({"category": r["category"], **d}, default=str)[:400])


if __name__ == "__main__":
    main()

"""When2Call's test set and BFCL v4's wheel, read as published; verdicts beside BFCL's checker."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.grading.bfcl_values import bfcl_standardize
from casework.grading.grade import grade
from casework.grading.matchers import argument_matches
from casework.interop.fncall import (
    FncallOptions,
    cases_from_fncall,
    join_answers,
    parse_fncall_map,
)
from casework.interop.fncall.bfcl import MULTI_TURN_DOC_FILES, MULTI_TURN_LOST
from casework.interop.generic import read_rows
from casework.schema import ArgMatcher, Case, Trajectory, TrajectoryToolCall
from tests.public_data import WHEN2CALL_TEST

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
# The benchmark is a script beside the package, not a typed module: imported by name.
conformance = importlib.import_module("conformance_fncall")

#: Categories whose arguments BFCL reads as Java/JavaScript source text.
CONVERTED = ("simple_java", "simple_javascript")


def _bfcl(category: str) -> dict[str, Case]:
    data = conformance.bfcl_data()
    f = data / f"BFCL_v4_{category}.json"
    rows = read_rows(f.read_bytes(), f.name)
    answer = data / "possible_answer" / f.name
    if answer.is_file():
        rows = join_answers(rows, read_rows(answer.read_bytes(), answer.name), answer.name)
    docs = {
        cls: [json.loads(x) for x in (data / "multi_turn_func_doc" / name).read_text().splitlines()]
        for cls, name in MULTI_TURN_DOC_FILES.items()
    }
    cases, _ = cases_from_fncall(
        rows, f.name, parse_fncall_map("bfcl", ()), FncallOptions("bfcl"), "b", docs
    )
    return {c.id: c for c in cases}


def test_when2call_test_set_imports_unchanged_with_its_classes_300_of_300() -> None:
    rows = read_rows(WHEN2CALL_TEST.read_bytes(), WHEN2CALL_TEST.name)
    cases, _ = cases_from_fncall(
        rows, "w.jsonl", parse_fncall_map("when2call", ()), FncallOptions("when2call"), "w"
    )
    assert len(cases) == 300
    want = {"tool_call": "resolve", "request_for_info": "clarify", "cannot_answer": "refuse"}
    by_id = {c.id: c for c in cases}
    for r in rows:
        case = by_id[r.value["uuid"]]
        assert case.label is not None
        assert case.label.outcome == want[r.value["correct_answer"]]
        assert case.slice == r.value["correct_answer"]  # the category, not `source`
        if r.value["correct_answer"] == "tool_call":
            call = json.loads(r.value["answers"]["tool_call"])
            (req,) = case.label.required_tools
            assert req.name == call["name"]
            assert {k: m.value for k, m in req.arguments.items()} == call["arguments"]
        else:
            assert case.label.required_tools == []


@pytest.mark.parametrize(
    "category",
    ["simple_python", "live_simple", "parallel_multiple", "irrelevance", "live_relevance",
     "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
     "multi_turn_long_context", "simple_java"],
)  # fmt: skip
def test_every_published_bfcl_row_imports(category: str) -> None:
    published = (conformance.bfcl_data() / f"BFCL_v4_{category}.json").read_text().splitlines()
    cases = _bfcl(category)
    assert len(cases) == len([x for x in published if x.strip()])
    multi = category.startswith("multi_turn")
    assert all((c.label is None) == multi for c in cases.values())  # multi-turn: not gradable


def test_relevance_expects_a_call_and_irrelevance_none() -> None:
    rel = next(iter(_bfcl("live_relevance").values()))
    irr = next(iter(_bfcl("irrelevance").values()))
    call = Trajectory(
        tool_calls=[TrajectoryToolCall(name="anything", arguments={})], outcome="resolve"
    )
    none = Trajectory(final_reply="I can't do that with these tools.", outcome="refuse")
    assert grade(rel, call).passed is True and grade(rel, none).passed is False
    assert grade(irr, none).passed is True and grade(irr, call).passed is False


def test_nested_acceptable_values_are_an_any_of_matcher() -> None:
    for category in ("simple_python", "live_simple"):
        for case in _bfcl(category).values():
            assert case.label is not None
            for req in case.label.required_tools:
                for m in req.arguments.values():
                    assert m.match == "any_of" and m.strings == "bfcl"


def test_bfcl_string_rule_and_optional_arguments() -> None:
    assert bfcl_standardize("April 1, 2024") == bfcl_standardize("april 1 2024") == "april12024"
    m = ArgMatcher(match="any_of", value=["San Francisco", "SF"], strings="bfcl", optional=True)
    assert argument_matches(m, True, "san-francisco")
    assert argument_matches(m, True, "sf")
    assert not argument_matches(m, True, "Oakland")
    assert argument_matches(m, False, None)  # may be left out
    exact = ArgMatcher(match="any_of", value=[5])
    assert not argument_matches(exact, False, None) and argument_matches(exact, True, 5.0)
    typed = ArgMatcher(match="any_of", value=[5], strings="bfcl")
    assert not argument_matches(typed, True, 5.0)  # BFCL: a float is no integer
    assert argument_matches(ArgMatcher(match="any_of", value=[5.0], strings="bfcl"), True, 5)


def test_verdicts_agree_with_bfcl_ast_checker_on_a_seeded_sample() -> None:
    rows = conformance.measure(sample=6)
    imports = [r for r in rows if "published" in r]
    agreement = [r for r in rows if "trials" in r]
    for row in imports:  # the shape benchmarks/conformance.py reads
        assert set(row) <= {"benchmark", "category", "published", "imported", "gradable", "sampled"}
        assert row["imported"] == row.get("sampled", row["published"]), row["category"]
    for row in agreement:
        assert set(row) == {
            "benchmark", "category", "perturbation", "trials", "agree", "disagreements",
        }  # fmt: skip
        assert row["agree"] / row["trials"] >= 0.99, row["disagreements"]
        if row["perturbation"] == "reference":
            assert row["disagreements"] == [], row["category"]
    seen = {r["category"] for r in agreement}
    assert {"simple_python", "live_relevance", "irrelevance", *CONVERTED} <= seen
    assert "multi_turn_base" in {r["category"] for r in imports}
    kinds = {(r["category"], r["perturbation"]) for r in agreement}
    assert ("simple_java", "values, not source text") in kinds
    when2call = [r for r in agreement if r["benchmark"] == "When2Call"]
    assert [(r["agree"], r["trials"]) for r in when2call] == [(300, 300)]


def test_java_and_javascript_arguments_are_offered_and_read_as_source_text() -> None:
    java = _bfcl("simple_java")["simple_java_1"]
    assert java.label is not None
    (req,) = java.label.required_tools
    use_short = req.arguments["useShortName"]
    assert (use_short.strings, use_short.source_type) == ("bfcl-java", "boolean")
    call = TrajectoryToolCall(
        name=req.name,
        arguments={
            "object": "Customers",
            "useShortName": "true",
            "params": 'new HashMap<String, Object>() {{ put("limit", 50); put("schemaFilter", '
            '"public"); }}',
        },
    )
    assert grade(java, Trajectory(tool_calls=[call], outcome="resolve")).passed is True
    decoded = call.model_copy(update={"arguments": {**call.arguments, "useShortName": True}})
    assert grade(java, Trajectory(tool_calls=[decoded], outcome="resolve")).passed is False
    js = _bfcl("simple_javascript")["simple_javascript_2"]
    assert js.label is not None
    (req,) = js.label.required_tools
    assert req.arguments["status"].source_type == "array<String>"


def test_multi_turn_import_says_what_is_lost_and_check_fails_those_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    data = conformance.bfcl_data()
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", "utf-8")
    (root / "casework.toml").write_text('name = "t"\n', "utf-8")
    bfcl = root / "bfcl"
    shutil.copytree(data / "multi_turn_func_doc", bfcl / "multi_turn_func_doc")
    name = "BFCL_v4_multi_turn_base.json"
    rows = (data / name).read_text("utf-8").splitlines()[:2]
    (bfcl / name).write_text("\n".join(rows) + "\n", "utf-8")
    answers = (data / "possible_answer" / name).read_text("utf-8").splitlines()[:2]
    (bfcl / "answers.json").write_text("\n".join(answers) + "\n", "utf-8")
    monkeypatch.chdir(root)
    imported = run_cli(
        *("import", "fncall", f"bfcl/{name}", "--dataset", "mt", "--style", "bfcl"),
        *("--answers", "bfcl/answers.json"),
    )
    assert imported.exit_code == 0, imported.output
    assert f"not gradable: 2 case(s): {MULTI_TURN_LOST}" in " ".join(imported.output.split())
    check = run_cli("dataset", "check", "mt")
    text = check.output + check.stderr
    assert check.exit_code == 1
    assert "multi_turn_base_0:oracle.not_gradable: not gradable: BFCL's multi-turn scoring" in text
    assert "multi_turn_base_1:oracle.not_gradable" in text


def test_undeclared_answer_parameters_and_hand_off_calls_are_graded_as_bfcl_grades_them() -> None:
    cases = _bfcl("live_multiple")
    trains = cases["live_multiple_862-181-3"]  # its answer lists an undeclared parameter
    assert trains.label is not None
    (req,) = trains.label.required_tools
    assert req.arguments["journey_start_time"].value == []
    args = {"_from": "New York, NY", "to": "Los Angeles, CA", "date_of_journey": "05/15/2023"}
    for given in (args, {**args, "journey_start_time": "09:00"}):
        call = TrajectoryToolCall(name=req.name, arguments=given)
        assert grade(trains, Trajectory(tool_calls=[call], outcome="resolve")).passed is False
    hand_off = cases["live_multiple_965-207-1"]  # BFCL expects a call to transfer_to_human_agent
    assert hand_off.label is not None and hand_off.label.acceptable_outcomes == ["escalate"]
    (req,) = hand_off.label.required_tools
    statement = (
        "I've submitted a complaint and would like to discuss its status with a human agent."
    )
    call = TrajectoryToolCall(name=req.name, arguments={"statement": statement})
    assert grade(hand_off, Trajectory(tool_calls=[call], outcome="resolve")).passed is True

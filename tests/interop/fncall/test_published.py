"""When2Call's test set and BFCL v4's wheel, read as published; verdicts beside BFCL's checker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from casework.grading.grade import grade
from casework.grading.matchers import argument_matches, bfcl_standardize
from casework.interop.fncall import (
    FncallOptions,
    cases_from_fncall,
    join_answers,
    parse_fncall_map,
)
from casework.interop.fncall.bfcl import MULTI_TURN_DOC_FILES
from casework.interop.generic import read_rows
from casework.schema import ArgMatcher, Case, Trajectory, TrajectoryToolCall
from tests.public_data import WHEN2CALL_TEST

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import conformance_fncall as conformance

#: Categories whose values BFCL reads through its Java/JavaScript type converters (see report).
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
    seen = set()
    for row in rows:
        seen.add(row["category"])
        assert row["imported"] == row.get("sampled", row["published"]), row["category"]
        if row["category"] in CONVERTED:
            # BFCL reads these arguments as Java/JavaScript source strings through its type
            # converters, which casework does not carry: listed in the benchmark, not held here.
            continue
        if row["trials"]:
            assert row["agree"] / row["trials"] >= 0.99, row["disagreements"]
            refs = [d for d in row["disagreements"] if d.get("trial") == "reference"]
            assert refs == []
    assert {"simple_python", "live_relevance", "irrelevance", "multi_turn_base"} <= seen
    when2call = rows[-1]
    assert (when2call["benchmark"], when2call["agree"], when2call["trials"]) == (
        "When2Call",
        300,
        300,
    )

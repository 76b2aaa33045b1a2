from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from casework.dataset import dump_record
from casework.dataset.jsonl import canonical_line
from casework.schema import Case, ToolRequirement, case_json_schema
from tests.factories import case_dict


def test_seed_label_example_round_trips() -> None:
    case = Case.model_validate(
        case_dict(
            "refund-0217",
            label={
                "outcome": "clarify",
                "required_tools": ["get_order"],
                "forbidden_tools": ["issue_refund"],
                "answer_facts": ["asks which item in the order is damaged"],
                "guideline_version": "refunds-g7",
                "labellers": ["lab-14", "lab-22"],
                "adjudicated": True,
            },
        )
    )
    again = Case.model_validate(json.loads(canonical_line(case)))
    assert again == case
    assert dump_record(case)["label"]["required_tools"] == ["get_order"]


def test_tool_requirement_with_arguments_keeps_object_form() -> None:
    req = ToolRequirement.model_validate(
        {"name": "issue_refund", "arguments": {"amount": {"match": "any"}}}
    )
    assert req.model_dump(mode="json") == {
        "name": "issue_refund",
        "arguments": {"amount": {"match": "any", "value": None}},
    }
    dumped: object = ToolRequirement.model_validate("get_order").model_dump(mode="json")
    assert dumped == "get_order"


def test_free_form_objects_are_key_sorted() -> None:
    case = Case.model_validate(
        case_dict(
            "a",
            situation={
                "goal": "g",
                "turns": [{"role": "user", "content": "x"}],
                "state": {"b": 1, "a": {"z": 1, "y": 2}},
            },
        )
    )
    assert canonical_line(case).index('"a": {"y": 2, "z": 1}') < canonical_line(case).index(
        '"b": 1'
    )


@pytest.mark.parametrize(
    ("override", "loc", "fragment"),
    [
        ({"split": "test"}, ("split",), "Input should be 'dev', 'holdout' or 'smoke'"),
        ({"unknown": 1}, ("unknown",), "Extra inputs are not permitted"),
        ({"satisfiable": False}, (), "an unsatisfiable case cannot have outcome 'resolve'"),
        ({"id": "-bad id"}, ("id",), "must start with a letter or digit"),
    ],
)
def test_invalid_cases_are_rejected(
    override: dict[str, Any], loc: tuple[str, ...], fragment: str
) -> None:
    with pytest.raises(ValidationError) as info:
        Case.model_validate(case_dict("x", **override))
    err = info.value.errors()[0]
    assert tuple(err["loc"]) == loc
    assert fragment in err["msg"]


def test_oracle_class_needs_its_parts() -> None:
    with pytest.raises(ValidationError, match="needs at least one assertion"):
        Case.model_validate(case_dict("x", oracle={"class": "state_assertion"}))
    with pytest.raises(ValidationError, match="needs a rubric"):
        Case.model_validate(case_dict("x", oracle={"class": "rubric_judge"}))


def test_tool_both_required_and_forbidden_is_an_error() -> None:
    with pytest.raises(ValidationError, match="both required and forbidden: get_order"):
        Case.model_validate(
            case_dict(
                "x",
                label={
                    "outcome": "resolve",
                    "required_tools": ["get_order"],
                    "forbidden_tools": ["get_order"],
                },
            )
        )


def test_json_schema_documents_every_field() -> None:
    schema = case_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")

    def walk(node: dict[str, Any], where: str) -> None:
        for name, prop in node.get("properties", {}).items():
            assert prop.get("description"), f"{where}.{name} has no docstring"

    walk(schema, "Case")
    for name, definition in schema["$defs"].items():
        walk(definition, name)


_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    content=_text,
    goal=_text.filter(lambda s: s != ""),
    state=st.dictionaries(_text, st.integers() | _text, max_size=4),
)
def test_canonical_form_round_trips(content: str, goal: str, state: dict[str, Any]) -> None:
    case = Case.model_validate(
        case_dict(
            "p",
            situation={
                "goal": goal,
                "turns": [{"role": "user", "content": content}],
                "state": state,
            },
        )
    )
    line = canonical_line(case)
    again = Case.model_validate(json.loads(line))
    assert again == case
    assert canonical_line(again) == line


@pytest.mark.parametrize("field", ["id", "tool"])
@pytest.mark.parametrize("ending", ["\n", "\r\n", " ", "\t"])
def test_ids_and_tool_names_refuse_trailing_whitespace(field: str, ending: str) -> None:
    # `$` also matches before a final newline, so `x` and `x\n` could coexist as two cases.
    data = case_dict("c-1")
    if field == "id":
        data["id"] = "c-1" + ending
    else:
        data["label"]["required_tools"] = ["get_order" + ending]
    with pytest.raises(ValidationError):
        Case.model_validate(data)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["get_order", "issue_refund", "a.b:c-d", "x", "get_order\n", " x"]),
            st.text(min_size=0, max_size=12),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_tool_names_are_judged_alike_whatever_came_before(names: list[str]) -> None:
    # Names seen valid are remembered (a case names the same tools again and again): what was
    # validated before must never change the verdict on a name, valid or not.
    import re

    pattern = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}\Z")
    for name in names:
        ok = pattern.match(name) is not None
        try:
            ToolRequirement.model_validate(name)
        except ValidationError as exc:
            assert not ok, name
            assert "must be a tool name" in str(exc)
        else:
            assert ok, name


def test_remembered_tool_names_are_bounded() -> None:
    from casework.schema import _records

    for i in range(_records._TOOL_NAMES_KEPT + 50):
        ToolRequirement.model_validate(f"tool_{i}")
    assert len(_records._TOOL_NAMES_SEEN) <= _records._TOOL_NAMES_KEPT
    ToolRequirement.model_validate(f"tool_{_records._TOOL_NAMES_KEPT + 10}")  # still checked
    with pytest.raises(ValidationError):
        ToolRequirement.model_validate("bad name")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["refunds", "lab-07", "a.b_c-d", "x", "refunds\n", " x", "-x", "é"]),
            st.text(min_size=0, max_size=12),
            st.text(alphabet="ab._-", min_size=60, max_size=70),  # about the labeller limit
        ),
        min_size=1,
        max_size=12,
    )
)
def test_names_are_judged_alike_whatever_came_before(names: list[str]) -> None:
    # Slices and labeller ids seen valid are remembered; the verdict (and, for a labeller id,
    # the 64-character limit) never depends on what was validated before.
    from pydantic import TypeAdapter

    from casework.names import LabellerId, Name, name_problem

    for name in names:
        for kind, limit in ((Name, 200), (LabellerId, 64)):
            problem = name_problem(name, limit)
            try:
                TypeAdapter(kind).validate_python(name)
            except ValidationError as exc:
                assert problem is not None, name
                assert problem in str(exc)
            else:
                assert problem is None, name


def test_remembered_names_are_bounded() -> None:
    from pydantic import TypeAdapter

    from casework import names

    slice_name = TypeAdapter(names.Name)
    for i in range(names._NAMES_KEPT + 50):
        slice_name.validate_python(f"slice-{i}")
    assert all(len(seen) <= names._NAMES_KEPT for seen in names._NAMES_SEEN.values())
    slice_name.validate_python(f"slice-{names._NAMES_KEPT + 10}")  # still checked, still valid
    with pytest.raises(ValidationError):
        slice_name.validate_python("bad name")

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casework.dataset import read_cases, write_cases
from casework.errors import InputError
from tests.factories import case_dict, write_lines


def _errors(path: Path) -> str:
    with pytest.raises(InputError) as info:
        read_cases(path, shown="cases.jsonl")
    return str(info.value)


def test_malformed_json_line(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(p, [case_dict("a"), '{"id": "b", "slice": ', case_dict("c")])
    assert _errors(p) == (
        'cases.jsonl:2: invalid JSON: Expecting value at column 22. Got \'{"id": "b", "slice": \'.'
    )


def test_wrong_type_unknown_field_and_bad_outcome_all_reported(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(
        p,
        [
            case_dict("a", frozen="maybe"),
            case_dict("b", colour="red"),
            case_dict("c", label={"outcome": "resolved"}),
        ],
    )
    assert _errors(p).splitlines() == [
        "cases.jsonl:1: frozen: Input should be a valid boolean, unable to interpret input. Got 'maybe'.",
        "cases.jsonl:2: colour: unknown field. Got 'red'.",
        "cases.jsonl:3: label.outcome: Input should be 'resolve', 'clarify', 'refuse' or 'escalate'. Got 'resolved'.",
    ]


def test_duplicate_id(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(p, [case_dict("a"), case_dict("b"), case_dict("a")])
    assert _errors(p) == "cases.jsonl:3: id: duplicate id, first on line 1. Got 'a'."


def test_bom_empty_line_non_object_and_bad_utf8(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    good = json.dumps(case_dict("a")).encode()
    p.write_bytes(b"\xef\xbb\xbf" + good + b"\n\n[1, 2]\n" + b'{"id": "\xff"}\n')
    assert _errors(p).splitlines() == [
        "cases.jsonl:1: file starts with a UTF-8 byte-order mark; save it without one.",
        "cases.jsonl:2: empty line; every line must hold one record.",
        "cases.jsonl:3: line is not a JSON object. Got [1, 2].",
        r"""cases.jsonl:4: invalid UTF-8 at byte 9. Got '{"id": "\xff"}'.""",
    ]


def test_report_is_capped_with_a_count(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(p, ["nope"] * 60)
    lines = _errors(p).splitlines()
    assert len(lines) == 51
    assert lines[-1] == "… and 10 more problems."


def test_write_is_canonical_sorted_and_stable(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(p, [case_dict("b"), case_dict("a")])
    cases = read_cases(p)
    out = tmp_path / "out.jsonl"
    write_cases(out, cases)
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert [json.loads(line)["id"] for line in text.splitlines()] == ["a", "b"]
    assert text.splitlines()[0].startswith('{"schema_version": 1, "id": "a", "slice": "refunds"')
    write_cases(out, read_cases(out))
    assert out.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("where", ["state", "fixture", "argument"])
def test_nan_and_infinity_are_refused_not_rewritten(
    tmp_path: Path, constant: str, where: str
) -> None:
    # json accepts these constants; written back they silently became null.
    case = case_dict("b")
    if where == "state":
        case["situation"]["state"] = {"balance": "@"}
    elif where == "fixture":
        case["situation"]["fixtures"] = [{"tool": "get_order", "response": {"total": "@"}}]
    else:
        case["situation"]["turns"].append(
            {"role": "assistant", "tool_calls": [{"name": "get_order", "arguments": {"n": "@"}}]}
        )
    p = tmp_path / "c.jsonl"
    write_lines(p, [case_dict("a"), json.dumps(case).replace('"@"', constant)])
    message = _errors(p)
    assert message.startswith(f"cases.jsonl:2: {constant} is not a JSON number")
    assert "Got '" in message


def test_case_ids_differing_by_a_trailing_newline_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write_lines(p, [case_dict("x"), case_dict("x\n")])
    assert _errors(p).startswith("cases.jsonl:2: id: must start with a letter or digit")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_case_holding_nan_is_not_written_as_null(tmp_path: Path, value: float) -> None:
    from casework.schema import Case

    data = case_dict("a")
    data["situation"]["state"] = {"orders": [{"total": value}]}
    case = Case.model_validate(data)
    path = tmp_path / "cases.jsonl"
    with pytest.raises(InputError) as info:
        write_cases(path, [case])
    assert str(info.value) == (
        "Case a: situation.state.orders.0.total: NaN and Infinity are not JSON numbers; not written."
    )
    assert not path.exists()

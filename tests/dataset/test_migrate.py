from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from casework.dataset import migrate_cases
from casework.dataset.migrate import load_renames, migrate_dataset
from casework.dataset.tools import ToolDecl
from casework.errors import InputError, InputErrors
from casework.gate import check_project
from casework.project import Project, load_project
from casework.schema import Case
from tests.factories import TOOLS as FACTORY_TOOLS
from tests.factories import case_dict, write_lines

TOOLS = {
    "get_order": ToolDecl("get_order", parameters={"properties": {"order_id": {}}}),
    "issue_refund": ToolDecl(
        "issue_refund", parameters={"properties": {"order_id": {}, "amount": {}}}
    ),
}


def _renames(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "renames.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_rename_rewrites_label_fixtures_conversation_and_arguments(tmp_path: Path) -> None:
    case = Case.model_validate(
        case_dict(
            "a",
            situation={
                "goal": "g",
                "turns": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"name": "lookup_order", "arguments": {"order_number": "1"}}
                        ],
                    },
                ],
                "fixtures": [
                    {
                        "tool": "lookup_order",
                        "match": {"order_number": "1"},
                        "response": {"ok": True},
                    }
                ],
                "injected": [
                    {"kind": "prompt_injection", "location": "tool:lookup_order", "text": "ignore"}
                ],
            },
            label={
                "outcome": "resolve",
                "required_tools": [
                    {"name": "lookup_order", "arguments": {"order_number": {"value": "1"}}}
                ],
                "forbidden_tools": ["refund_order"],
            },
        )
    )
    renames = load_renames(
        _renames(
            tmp_path,
            '[tools]\nlookup_order = "get_order"\nrefund_order = "issue_refund"\n\n[arguments.get_order]\norder_number = "order_id"\n',
        ),
        "renames.toml",
        TOOLS,
    )
    result = migrate_cases([case], renames)
    new = result.cases[0]
    assert new.tool_names() == {"get_order", "issue_refund"}
    assert new.situation.fixtures[0].match == {"order_id": "1"}
    assert new.situation.turns[1].tool_calls[0].arguments == {"order_id": "1"}
    assert new.situation.injected[0].location == "tool:get_order"
    assert new.label is not None and "order_id" in new.label.required_tools[0].arguments
    assert result.changelog() == [
        "renamed in 1 case",
        "lookup_order->get_order: 4 places",
        "refund_order->issue_refund: 1 place",
        "get_order.order_number->order_id: 3 places",
    ]


def test_rename_to_undeclared_tool_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _renames(tmp_path, '[tools]\nlookup_order = "get_order"\nrefund_order = "refund"\n')
    with pytest.raises(InputError) as info:
        load_renames(path, "renames.toml", TOOLS)
    assert (
        str(info.value)
        == "renames.toml:3: tools.refund_order: rename target is not a declared tool. Got 'refund'."
    )


def test_argument_rename_to_undeclared_argument(tmp_path: Path) -> None:
    path = _renames(
        tmp_path, '[arguments.get_order]\norder_number = "id"\n\n[arguments.nope]\nx = "y"\n'
    )
    with pytest.raises(InputErrors) as info:
        load_renames(path, "renames.toml", TOOLS)
    assert str(info.value).splitlines() == [
        "renames.toml:2: arguments.get_order.order_number: rename target is not an argument of 'get_order'. Got 'id'.",
        "renames.toml:4: arguments.nope: not a declared tool. Got 'nope'.",
    ]


def test_unknown_key_in_rename_map(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_renames(_renames(tmp_path, '[tool]\na = "b"\n'), "renames.toml", TOOLS)
    assert str(info.value) == 'renames.toml: tool: unknown field. Got {"a": "b"}.'


# --- many-to-one renames: refused in renames.toml unless `casework dataset check` stays as clean ---------


def _required(case_id: str, *reqs: dict[str, Any]) -> dict[str, Any]:
    return case_dict(case_id, label={"outcome": "resolve", "required_tools": list(reqs)})


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".casework"} & set(p.parts)
    }


def _errors(project: Project, name: str) -> Counter[tuple[str | None, str]]:
    report = check_project(project, name, today=date(2026, 1, 1))
    return Counter((f.case_id, f.check) for f in report.errors)


def test_two_tools_renamed_to_one_with_an_argument_left_undeclared_is_refused(
    project_dir: Path,
) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            _required("a", {"name": "lookup_order", "arguments": {"order_number": {"value": "1"}}}),
            *(
                _required(f"b{i}", {"name": "find_order", "arguments": {"id": {"value": "2"}}})
                for i in range(4)
            ),
        ],
    )
    renames = _renames(
        project_dir,
        '[tools]\nlookup_order = "get_order"\nfind_order = "get_order"\n\n'
        '[arguments.get_order]\norder_number = "order_id"\n',
    )
    before = _snapshot(project_dir)
    with pytest.raises(InputErrors) as info:
        migrate_dataset(load_project(project_dir), "refunds", renames, "merge lookups")
    assert str(info.value).splitlines() == [
        "renames.toml:3: tools.find_order: cases 'b0', 'b1', 'b2' and 1 more would fail "
        "the dataset check after the rename: required tool 'get_order' declares no argument 'id' "
        "(rename the argument under [arguments.get_order] too). Got 'get_order'."
    ]
    assert _snapshot(project_dir) == before


def test_two_tools_renamed_to_one_with_every_argument_renamed_checks_clean(
    project_dir: Path,
) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            _required("a", {"name": "lookup_order", "arguments": {"order_number": {"value": "1"}}}),
            _required("b", {"name": "find_order", "arguments": {"id": {"value": "2"}}}),
        ],
    )
    renames = _renames(
        project_dir,
        '[tools]\nlookup_order = "get_order"\nfind_order = "get_order"\n\n'
        '[arguments.get_order]\norder_number = "order_id"\nid = "order_id"\n',
    )
    project = load_project(project_dir)
    result, record = migrate_dataset(project, "refunds", renames, "merge lookups")
    assert record is not None and result.cases_changed == 2
    assert _errors(project, "refunds") == Counter()


def test_two_arguments_of_one_call_renamed_to_one_are_refused(project_dir: Path) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            case_dict(
                "a",
                situation={
                    "goal": "g",
                    "turns": [{"role": "user", "content": "hi"}],
                    "fixtures": [
                        {
                            "tool": "get_order",
                            "match": {"order_number": "1", "id": "2"},
                            "response": {"ok": True},
                        }
                    ],
                },
            )
        ],
    )
    renames = _renames(
        project_dir, '[arguments.get_order]\norder_number = "order_id"\nid = "order_id"\n'
    )
    before = _snapshot(project_dir)
    with pytest.raises(InputErrors) as info:
        migrate_dataset(load_project(project_dir), "refunds", renames, "one id")
    assert str(info.value).splitlines() == [
        "renames.toml:3: arguments.get_order.id: case 'a' would call 'get_order' with "
        "'id' and 'order_number' renamed to one argument 'order_id', losing a value (fix the "
        "cases or the renames). Got 'order_id'."
    ]
    assert _snapshot(project_dir) == before


def test_golden_actions_and_offered_tools_are_renamed(tmp_path: Path) -> None:
    case = Case.model_validate(
        case_dict(
            "a",
            situation={
                "goal": "g",
                "turns": [{"role": "user", "content": "hi"}],
                "tools": ["lookup_order", "find_order", "issue_refund"],
            },
            oracle={
                "class": "state_assertion",
                "golden_actions": [{"name": "lookup_order", "arguments": {"order_number": "1"}}],
            },
        )
    )
    renames = load_renames(
        _renames(
            tmp_path,
            '[tools]\nlookup_order = "get_order"\nfind_order = "get_order"\n\n'
            '[arguments.get_order]\norder_number = "order_id"\n',
        ),
        "renames.toml",
        TOOLS,
    )
    new = migrate_cases([case], renames).cases[0]
    assert new.situation.tools == ["get_order", "issue_refund"]
    assert new.oracle.golden_actions[0].model_dump() == {
        "name": "get_order",
        "arguments": {"order_id": "1"},
        "optional": False,
    }


_OLD_TOOLS = ["lookup_order", "find_order", "refund_order", "get_order", "issue_refund"]
_ARGS = ["order_number", "id", "order_id", "amount"]


@st.composite
def _requirement(draw: st.DrawFn) -> dict[str, Any]:
    args = draw(st.lists(st.sampled_from(_ARGS), max_size=2, unique=True))
    return {
        "name": draw(st.sampled_from(_OLD_TOOLS)),
        "arguments": {a: {"value": "1"} for a in args},
    }


@st.composite
def _case(draw: st.DrawFn, case_id: str) -> dict[str, Any]:
    required = draw(st.lists(_requirement(), max_size=2))
    forbidden = draw(st.lists(_requirement(), max_size=1))
    fixtures = [
        {"tool": r["name"], "match": {a: "1" for a in r["arguments"]}, "response": {"ok": True}}
        for r in draw(st.lists(_requirement(), max_size=2))
    ]
    golden = [
        {"name": r["name"], "arguments": {a: "1" for a in r["arguments"]}}
        for r in draw(st.lists(_requirement(), max_size=1))
    ]
    return case_dict(
        case_id,
        situation={"goal": "g", "turns": [{"role": "user", "content": "hi"}], "fixtures": fixtures},
        label={"outcome": "resolve", "required_tools": required, "forbidden_tools": forbidden},
        oracle={"class": "state_assertion", "golden_actions": golden} if golden else {},
    )


def _toml(renames: dict[str, Any]) -> str:
    lines = ["[tools]", *(f'{k} = "{v}"' for k, v in renames["tools"].items())]
    for tool, mapping in renames["arguments"].items():
        lines += ["", f"[arguments.{tool}]", *(f'{k} = "{v}"' for k, v in mapping.items())]
    return "\n".join(lines) + "\n"


_RENAME_MAPS = st.fixed_dictionaries(
    {
        "tools": st.dictionaries(
            st.sampled_from(["lookup_order", "find_order", "refund_order"]),
            st.sampled_from(["get_order", "issue_refund", "escalate_to_human"]),
        ),
        "arguments": st.dictionaries(
            st.sampled_from(["get_order", "issue_refund"]),
            st.dictionaries(st.sampled_from(_ARGS), st.sampled_from(["order_id", "amount"])),
        ),
    }
)


def _argument_counts(case: Case) -> list[int]:
    """How many arguments each place naming a tool has (a lost value shows as one fewer)."""
    label = case.label
    reqs = [*label.required_tools, *label.forbidden_tools] if label is not None else []
    return [
        *sorted({len(r.arguments) for r in reqs}),  # renamed equal, two requirements become one
        *(len(f.match) for f in case.situation.fixtures),
        *(len(a.arguments) for a in case.oracle.golden_actions),
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), renames=_RENAME_MAPS)
def test_an_accepted_migration_never_adds_a_check_error(
    data: st.DataObject, renames: dict[str, Any]
) -> None:
    cases = []
    for i in range(3):
        raw = data.draw(_case(f"c{i}"))
        try:
            cases.append(Case.model_validate(raw))
        except ValidationError:  # a label the schema refuses anyway (requires and forbids)
            continue
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "agent").mkdir()
        (root / "casework.toml").write_text('name = "t"\n', encoding="utf-8")
        (root / "agent" / "tools.json").write_text(json.dumps(FACTORY_TOOLS), encoding="utf-8")
        write_lines(
            root / "datasets" / "d" / "cases.jsonl",
            [c.model_dump(mode="json", by_alias=True) for c in cases],
        )
        path = root / "renames.toml"
        path.write_text(_toml(renames), encoding="utf-8")
        project = load_project(root)
        before, files = _errors(project, "d"), _snapshot(root)
        try:
            result, _ = migrate_dataset(project, "d", path, "rename")
        except InputError:
            assert _snapshot(root) == files  # refused: nothing written
            event("refused")
            return
        event(f"accepted, {result.cases_changed} case(s) changed")
        after = _errors(project, "d")
        assert all(after[key] <= before[key] for key in after), (before, after)
        assert [_argument_counts(c) for c in result.cases] == [
            _argument_counts(c) for c in cases
        ]  # no argument value lost


def test_cli_refuses_a_many_to_one_rename_on_stderr_and_writes_nothing(
    project_dir: Path, run_cli: Callable[..., Result]
) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            _required("a", {"name": "lookup_order", "arguments": {"order_number": {"value": "1"}}}),
            _required("b", {"name": "find_order", "arguments": {"id": {"value": "2"}}}),
        ],
    )
    _renames(project_dir, '[tools]\nlookup_order = "get_order"\nfind_order = "get_order"\n')
    before = _snapshot(project_dir)
    result = run_cli("dataset", "migrate", "refunds", "-m", "merge lookups")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "renames.toml:2: tools.lookup_order: case 'a' would fail the dataset check after the "
        "rename: required tool 'get_order' declares no argument 'order_number' (rename the "
        "argument under [arguments.get_order] too). Got 'get_order'.",
        "renames.toml:3: tools.find_order: case 'b' would fail the dataset check after the "
        "rename: required tool 'get_order' declares no argument 'id' (rename the argument under "
        "[arguments.get_order] too). Got 'get_order'.",
    ]
    assert _snapshot(project_dir) == before


def test_a_rename_making_a_label_require_and_forbid_plainly_is_refused(project_dir: Path) -> None:
    # Found by the property above: it was a pydantic traceback.
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            case_dict(
                "a",
                label={
                    "outcome": "resolve",
                    "required_tools": [
                        "find_order",
                        {"name": "issue_refund", "arguments": {"amount": {"value": 5}}},
                    ],
                    "forbidden_tools": ["issue_refund"],
                },
            )
        ],
    )
    renames = _renames(project_dir, '[tools]\nfind_order = "issue_refund"\n')
    before = _snapshot(project_dir)
    with pytest.raises(InputErrors) as info:
        migrate_dataset(load_project(project_dir), "refunds", renames, "merge")
    assert str(info.value).splitlines() == [
        "renames.toml:2: tools.find_order: case 'a' requires one of find_order, issue_refund and "
        "forbids another; renamed to one tool, the case would require and forbid 'issue_refund' "
        "(fix the case's label first). Got 'issue_refund'."
    ]
    assert _snapshot(project_dir) == before

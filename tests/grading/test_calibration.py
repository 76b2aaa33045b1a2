"""Judge calibration shows the judge what a labeller's blind sheet shows, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casework.dataset.tools import parse_tool_declarations
from casework.errors import InputError
from casework.grading import Judge, calibrate_judge
from casework.grading.calibration import LABELLER_VIEW, labeller_view
from casework.labelling.sheets import sheet_line
from casework.project import Project, load_project
from casework.schema import Case
from tests.factories import TOOLS
from tests.grading.fakes import FakeLLM
from tests.runner.builders import make_project, refund_case, refuse_case

#: Sheet fields that are bookkeeping, not information about the case.
BOOKKEEPING = {"schema_version", "sheet", "dataset", "labeller", "case_id", "signature"}
#: Sheet fields the labeller fills in (empty on an exported sheet).
ANSWERS = {"outcome", "required", "forbidden", "answer_facts"}

GUIDELINE = (
    "---\nversion: refunds-g4\nslice: refunds\n---\n\n# Refunds\n\nVISIBLE-GUIDELINE rule.\n"
)


def _hidden_case() -> dict[str, Any]:
    """A case whose label, oracle, satisfiable flag and provenance all carry marked strings."""
    data = refuse_case("u-1", "o9")
    situation = data["situation"]
    situation["goal"] = "VISIBLE-GOAL refund too early"
    situation["fixtures"][0]["response"]["note"] = "VISIBLE-FIXTURE"
    situation["fixtures"].append({"tool": "get_order", "error": "VISIBLE-NOT-FOUND"})
    situation["state"] = {"orders": {"o9": {"note": "VISIBLE-STATE"}}}
    situation["injected"] = [
        {"kind": "prompt_injection", "location": "tool:get_order", "text": "VISIBLE-INJECTED"}
    ]
    situation["turns"] = [
        {"role": "user", "content": "please refund order o9"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"name": "get_order", "arguments": {"order_id": "o9"}, "result": "VISIBLE-RESULT"}
            ],
        },
        {"role": "user", "content": "well?"},
    ]
    data["label"].update(
        answer_facts=["HIDDEN-FACT"],
        labellers=["HIDDEN-LABELLER"],
        guideline_version="HIDDEN-VERSION",
    )
    data["oracle"] = {
        "class": "rubric_judge",
        "rubric": "HIDDEN-RUBRIC",
        "assertions": [{"expr": "orders.o9", "op": "exists", "description": "HIDDEN-ASSERT"}],
    }
    data["provenance"] = {
        "unsatisfiable_kind": "outside_policy",
        "shape": "HIDDEN-SHAPE",
        "transform": "HIDDEN-TRANSFORM",
        "source_trace": "HIDDEN-TRACE",
        "signals": ["HIDDEN-SIGNAL"],
    }
    return data


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "proj", cases=[refund_case("r-1", "o1", 12.0), _hidden_case()])
    (root / "guidelines").mkdir()
    (root / "guidelines" / "refunds.md").write_text(GUIDELINE, encoding="utf-8")
    monkeypatch.chdir(root)
    return load_project(root)


def _judge() -> tuple[Judge, FakeLLM]:
    def answer(prompt: str) -> dict[str, Any]:
        # Reads the fixtures: o9 is still processing, so no refund yet.
        return {"outcome": "refuse" if '"processing"' in prompt else "resolve", "reason": "fake"}

    llm = FakeLLM(answer)
    return Judge(llm), llm


def test_the_judge_view_is_the_sheet_line_without_bookkeeping_and_answers() -> None:
    case = Case.model_validate(_hidden_case())
    decls = parse_tool_declarations(TOOLS, "agent/tools.json")
    line = sheet_line("label", "refunds", "ann", case, "refunds-g4", decls)
    # Every part of the sheet that tells a labeller about the case is in the judge's view.
    assert set(line) - BOOKKEEPING - ANSWERS == set(LABELLER_VIEW)
    view = labeller_view(case, decls, "refunds-g4")
    assert view == {key: line[key] for key in LABELLER_VIEW}
    assert view["tools"] == [{"name": t["name"], "description": t["description"]} for t in TOOLS]
    hidden = json.dumps(view)
    assert "HIDDEN" not in hidden and "satisfiable" not in hidden and "outside_policy" not in hidden


def test_calibration_prompt_shows_the_situation_and_never_the_label(project: Project) -> None:
    judge, llm = _judge()
    report = calibrate_judge(project, "refunds", "refunds", judge=judge, save=False)
    assert report.calibration.n == 2 and report.calibration.kappa == 1.0
    assert len(llm.prompts) == 2
    prompt = next(p for p in llm.prompts if "o9" in p)
    for shown in (
        "VISIBLE-GUIDELINE",
        "<case>\nslice refunds, guideline refunds-g4\n</case>",
        "<goal>\nVISIBLE-GOAL refund too early\n</goal>",
        "USER: please refund order o9",
        'ASSISTANT: Let me look. [tool calls: get_order({"order_id": "o9"}) => "VISIBLE-RESULT"]',
        "USER: well?",
        '{"tool": "get_order", "match": {"order_id": "o9"}, "response": {"id": "o9", '
        '"status": "processing", "total": 30, "note": "VISIBLE-FIXTURE"}}',
        '{"tool": "get_order", "error": "VISIBLE-NOT-FOUND"}',
        '"effects": [{"op": "add", "path": "/orders/o9/refunded", "value": "${args.amount}"}]',
        '<data_state>\n{"orders": {"o9": {"note": "VISIBLE-STATE"}}}\n</data_state>',
        '<injected>\n{"kind": "prompt_injection", "location": "tool:get_order", '
        '"text": "VISIBLE-INJECTED"}\n</injected>',
        "- get_order: Fetch an order by id.",
        "- escalate_to_human: Hand the conversation to a person.",
    ):
        assert shown in prompt, shown
    for hidden in ("HIDDEN", "satisfiable", "outside_policy", "u-1", "rubric_judge"):
        assert hidden not in prompt, hidden
    other = next(p for p in llm.prompts if "o9" not in p)
    assert "<data_state>\n" in other and "<injected>\n(none)\n</injected>" in other


def test_the_classify_prompt_is_unchanged_by_calibration_views() -> None:
    # Grading prompts still show the conversation without earlier tool results.
    judge, llm = _judge()
    case = Case.model_validate(_hidden_case())
    judge.classify_outcome(case.situation.turns, "No refund yet.", [])
    assert '[tool calls: get_order({"order_id": "o9"})]' in llm.prompts[0]
    assert "VISIBLE-RESULT" not in llm.prompts[0]


def test_a_slice_without_a_guideline_still_calibrates(project: Project) -> None:
    (project.root / "guidelines" / "refunds.md").unlink()
    judge, llm = _judge()
    report = calibrate_judge(project, "refunds", "refunds", judge=judge, save=False)
    assert report.calibration.n == 2
    assert all("<guideline>" not in p for p in llm.prompts)
    assert all("<case>\nslice refunds\n</case>" in p for p in llm.prompts)


def test_a_guideline_without_a_version_is_reported(project: Project) -> None:
    (project.root / "guidelines" / "refunds.md").write_text("# Refunds\n", encoding="utf-8")
    judge, _ = _judge()
    with pytest.raises(InputError) as err:
        calibrate_judge(project, "refunds", "refunds", judge=judge, save=False)
    assert str(err.value) == (
        "guidelines/refunds.md:1: version: a guideline starts with front matter: a '---' line, "
        "'version: <slice>-g1', a '---' line. Got '# Refunds'."
    )


@pytest.mark.parametrize("private", [False, True])
def test_frozen_cases_reach_only_a_private_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: bool
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    frozen = refund_case("r-9", "o99", 9.0, frozen=True)
    public = '[models.judge]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
    config = public + ("private = true\n" if private else "")
    root = make_project(
        tmp_path / "f", cases=[refund_case("r-1", "o1", 12.0), frozen], config=config
    )
    monkeypatch.chdir(root)
    judge, llm = _judge()
    report = calibrate_judge(load_project(root), "refunds", "refunds", judge=judge, save=False)
    assert report.calibration.n == (2 if private else 1)
    assert any("o99" in p for p in llm.prompts) is private

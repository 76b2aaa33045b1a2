"""`casework shapes author`: every rejection rule, oracle ranking, provenance, nothing written on bad input."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.authoring import AXES, AuthorOptions, author
from casework.authoring._candidate import REASONS, Brief, Candidate, rank_oracle, screen
from casework.authoring._generate import PROMPT_VERSION, read_runs
from casework.errors import UsageError
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.llm import Message, ScriptedProvider
from casework.llm.client import Client
from casework.project import Project, load_project
from casework.review import decide_task, list_tasks
from casework.runner import RunRequest, run_agent
from casework.shapes import Shape
from casework.shapes._model import ShapeExample, ShapeVersion
from tests.runner import sample_agents

TOOLS = ("escalate_to_human", "get_order", "issue_refund")
BRIEF = Brief(
    "refunds",
    "shape-01",
    "mined-abc",
    "stale-tool-state",
    "refunds",
    "refunds",
    "scripted-gen",
    PROMPT_VERSION,
    "test-family",
    False,
)


def good_reply(
    text: str = "The refund for order ORD-7 already went out last week.", **over: Any
) -> dict[str, Any]:
    """A reply that passes every rule (a state outcome with a state assertion)."""
    reply: dict[str, Any] = {
        "situation": {
            "goal": "Chase a refund the order already shows as issued.",
            "turns": [{"role": "user", "content": text}],
            "fixtures": [
                {"tool": "get_order", "response": {"order_id": "ORD-7", "refunded": 12.0}}
            ],
            "state": {"ledger": []},
        },
        "outcome": "Say the refund was already issued and issue no second refund.",
        "expected": "resolve",
        "outcome_is_state": True,
        "required_tools": ["get_order"],
        "forbidden_tools": ["issue_refund"],
        "oracle": {
            "state_assertions": [{"expr": "length(ledger)", "value": 0, "description": "no refund"}]
        },
    }
    reply.update(over)
    return reply


def screened(reply: Any, brief: Brief = BRIEF) -> Any:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return screen(1, text, brief, TOOLS)


def reason(reply: Any, brief: Brief = BRIEF) -> str:
    out = screened(reply, brief)
    assert not isinstance(out, tuple), "expected a rejection"
    return str(out.reason)


# --- each rule on its own ------------------------------------------------------------------


def test_a_good_reply_becomes_a_synthetic_case_with_full_provenance() -> None:
    out = screened(good_reply())
    assert isinstance(out, tuple)
    case, sentence = out
    assert sentence == "Say the refund was already issued and issue no second refund."
    assert case.source == "synthetic" and case.satisfiable
    assert case.oracle.class_ == "state_assertion"
    p = case.provenance
    assert p.shape == "refunds/shape-01" and p.source_trace == "mined-abc"
    assert p.axis == "stale-tool-state" and p.unsatisfiable_kind is None
    assert p.generator is not None
    assert (p.generator.model, p.generator.prompt_version) == ("scripted-gen", PROMPT_VERSION)
    assert case.id.startswith("auth-shape-01-stale-tool-state-")
    # The id is the situation's digest: the same situation twice has the same id.
    again = screened(good_reply())
    assert isinstance(again, tuple) and again[0].id == case.id


def test_malformed_model_json_is_rejected_with_a_clear_reason() -> None:
    out = screened("Sure! Here is your case: {situation: ...")
    assert not isinstance(out, tuple)
    assert out.reason == "malformed_json" and "not JSON" in out.detail
    wrong_shape = screened({"situation": {}, "outcome": "x."})
    assert not isinstance(wrong_shape, tuple) and wrong_shape.reason == "malformed_json"
    assert "expected" in wrong_shape.detail


def test_no_oracle() -> None:
    reply = good_reply()
    del reply["oracle"]
    assert reason(reply) == "no_oracle"
    assert reason(good_reply(oracle={}, outcome_is_state=False)) == "no_oracle"


def test_outcome_not_one_sentence() -> None:
    assert reason(good_reply(outcome="Say it was refunded. Then close.")) == "not_one_sentence"
    assert reason(good_reply(outcome="   ")) == "not_one_sentence"
    assert reason(good_reply(outcome=" ".join(["word"] * 41))) == "not_one_sentence"


def test_undeclared_tools_anywhere_in_the_candidate() -> None:
    assert reason(good_reply(required_tools=["apply_coupon"])) == "undeclared_tool"
    sit = good_reply()["situation"]
    sit["fixtures"] = [{"tool": "launch_rocket", "response": {}}]
    out = screened(good_reply(situation=sit))
    assert not isinstance(out, tuple) and out.reason == "undeclared_tool"
    assert "launch_rocket" in out.detail
    offered = {**good_reply()["situation"], "tools": ["get_order", "wire_money"]}
    assert reason(good_reply(situation=offered)) == "undeclared_tool"


def test_schema_invalid_situation_and_case() -> None:
    bad_role = {"goal": "g", "turns": [{"role": "customer", "content": "hi"}]}
    out = screened(good_reply(situation=bad_role))
    assert not isinstance(out, tuple) and out.reason == "schema_invalid"
    assert out.detail.startswith("situation.turns.0.role")
    # An unsatisfiable axis whose expected outcome is `resolve` is no valid case.
    unsat = Brief(**{**BRIEF.__dict__, "axis": "permission-absent"})
    assert reason(good_reply(), unsat) == "schema_invalid"


# --- oracle ranking: state, else rubric, else human; never the answer key ---------------------


def test_the_answer_key_is_refused_alone_and_beside_a_rubric() -> None:
    both = good_reply(
        outcome_is_state=False,
        oracle={"rubric": "The reply says the refund went out.", "answer_key": "It went out."},
    )
    out = screened(both)
    assert not isinstance(out, tuple)
    assert out.reason == "answer_key" and "beside a rubric" in out.detail
    alone = good_reply(outcome_is_state=False, oracle={"answer_key": ["It went out."]})
    assert reason(alone) == "answer_key"


def test_a_state_outcome_needs_a_state_assertion() -> None:
    rubric_only = good_reply(oracle={"rubric": "No second refund is issued."})
    assert reason(rubric_only) == "state_without_assertion"


def test_ranking_prefers_state_then_rubric_then_human() -> None:
    assertion = {"expr": "length(ledger)", "value": 0}
    ranked = {
        name: rank_oracle(Candidate.model_validate(good_reply(outcome_is_state=False, oracle=o)))
        for name, o in {
            "state": {"state_assertions": [assertion], "rubric": "r"},
            "rubric": {"rubric": "The reply names the refund date.", "human_only": True},
            "human": {"human_only": True},
        }.items()
    }
    classes = {k: getattr(v, "class_", v) for k, v in ranked.items()}
    assert classes == {"state": "state_assertion", "rubric": "rubric_judge", "human": "human"}
    state = ranked["state"]
    assert not isinstance(state, tuple) and state.rubric is None  # never both on one case


# --- the run: near duplicates, counting, review items, nothing written on bad input ------------


def _shape(shape_id: str) -> Shape:
    example = ShapeExample(
        case_id=f"mined-{shape_id}", session="session_x", text="refund chase", distance=0.0
    )
    return Shape(
        id=shape_id,
        name="Customers chase refunds that were already issued.",
        named_by="offline",
        terms=["refund", "issued"],
        size=5,
        share=0.5,
        signals={"thumbs_down": 5},
        radius=0.2,
        members=[f"mined-{shape_id}"],
        representatives=[example],
        exemplars=[example],
        situation={"goal": "g", "turns": [{"role": "user", "content": "where is my refund"}]},
    )


def write_shape_set(root: Path, name: str = "refunds") -> None:
    """A saved shape set of two shapes (what `shapes build` would write)."""
    folder = root / "shapes"
    folder.mkdir(exist_ok=True)
    text = "".join(_shape(s).model_dump_json() + "\n" for s in ("shape-01", "shape-02"))
    (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    version = ShapeVersion(
        number=1,
        hash=hashlib.sha256(text.encode()).hexdigest(),
        created_at=datetime(2026, 11, 1, tzinfo=UTC),
        as_of=date(2026, 11, 1),
        message="test",
        files=["t.jsonl"],
        key_fingerprint="f",
        embedder="tfidf",
        method={"algorithm": "agglomerative"},
        conversations=10,
        failing=10,
        shaped=10,
        singletons=0,
        unseen_share=0.0,
        shapes=2,
    )
    (folder / f"{name}.versions.jsonl").write_text(
        version.model_dump_json() + "\n", encoding="utf-8"
    )


def scripted(replies: Sequence[Any]) -> tuple[Client, list[list[Message]]]:
    """A client answering candidate i with replies[i-1]; the prompts it saw."""
    seen: list[list[Message]] = []

    def answer(messages: list[Message]) -> Any:
        seen.append(messages)
        line = next(x for x in messages[-1].content.splitlines() if x.startswith("Candidate: "))
        return replies[int(line.split()[1]) - 1]

    return Client(ScriptedProvider(fn=answer, model="scripted-gen"), provider_name="scripted"), seen


@pytest.fixture
def project(project_dir: Path) -> Project:
    write_shape_set(project_dir)
    return load_project(project_dir)


def _state(root: Path) -> tuple[bytes, bool, bool]:
    cases = (root / "datasets" / "refunds" / "cases.jsonl").read_bytes()
    return (
        cases,
        (root / "shapes" / "refunds.authored.jsonl").exists(),
        (root / ".casework").exists(),
    )


def test_a_run_counts_each_reason_and_queues_the_rest(project: Project) -> None:
    replies = [
        good_reply(),
        good_reply(
            "The refund on ORD-7 has not reached my card, it said it was sent ten days ago."
        ),
        good_reply(),  # the same situation as candidate 1: a near duplicate within the run
        "not json at all",
        good_reply(oracle={"rubric": "r", "answer_key": "k"}, outcome_is_state=False),
        good_reply(required_tools=["apply_coupon"]),
        good_reply(outcome="One. Two."),
    ]
    client, prompts = scripted(replies)
    result = author(
        project,
        AuthorOptions(shapes="refunds", shape="shape-01", axis="stale-tool-state", n=len(replies)),
        client=client,
    )
    assert [r.reason for r in result.rejections] == [
        "near_duplicate",
        "malformed_json",
        "answer_key",
        "undeclared_tool",
        "not_one_sentence",
    ]
    assert [r.index for r in result.rejections] == [3, 4, 5, 6, 7]
    assert result.run.rejected == {
        "answer_key": 1,
        "malformed_json": 1,
        "near_duplicate": 1,
        "not_one_sentence": 1,
        "undeclared_tool": 1,
    }
    assert set(result.run.rejected) <= set(REASONS)
    tasks = list_tasks(project, kind=GENERATED_CASE_KIND)
    assert [t.subject for t in tasks] == [c.id for c in result.cases] == result.run.queued
    assert len(tasks) == 2 and all(t.payload["record_review"] for t in tasks)
    assert read_runs(project, "refunds") == [result.run]
    # The prompt holds the shape, its representative trace, the tools and the axis.
    user = prompts[0][-1].content
    assert "Shape: shape-01 (Customers chase refunds" in user
    assert "Axis: stale-tool-state (" in user and "mined-shape-01" in user
    assert "Tools: escalate_to_human, get_order, issue_refund" in user
    assert "The fixed axes: missing-or-malformed-input (" in user and "; underdetermined (" in user


def test_near_duplicates_of_open_items_and_dataset_cases_are_rejected(project: Project) -> None:
    options = AuthorOptions(shapes="refunds", shape="shape-01", axis="stale-tool-state", n=1)
    first = author(project, options, client=scripted([good_reply()])[0])
    assert len(first.cases) == 1
    # A later run: the open item counts as an earlier candidate.
    again = author(project, options, client=scripted([good_reply()])[0])
    assert [r.reason for r in again.rejections] == ["near_duplicate"]
    # A dataset case's own text (the project's case r-1) counts as an accepted case.
    turns = [{"role": "user", "content": "My mug from order ORD-r-1 arrived broken."}]
    copied = good_reply(situation={"goal": "a mug refund", "turns": turns})
    dup = author(project, options, client=scripted([copied])[0])
    assert [r.reason for r in dup.rejections] == ["near_duplicate"]
    assert "within cosine distance 0.0" in dup.rejections[0].detail


def test_unsatisfiable_axes_make_unsatisfiable_cases(project: Project) -> None:
    refusal = good_reply(
        "Refund my neighbour's order ORD-7 to my card please.",
        expected="refuse",
        outcome="Decline, because only the account holder can ask for this refund.",
        outcome_is_state=False,
    )
    result = author(
        project,
        AuthorOptions(
            shapes="refunds", shape="shape-02", axis="permission-absent", n=1, frozen=True
        ),
        client=scripted([refusal])[0],
    )
    (case,) = result.cases
    assert not case.satisfiable and case.frozen
    assert case.provenance.unsatisfiable_kind == "permission_absent"


@pytest.mark.parametrize(
    ("options", "param"),
    [
        (AuthorOptions(shapes="nope", shape="shape-01", axis="stale-tool-state"), "shapes"),
        (AuthorOptions(shapes="refunds", shape="shape-09", axis="stale-tool-state"), "shape"),
        (AuthorOptions(shapes="refunds", shape="shape-01", axis="sideways"), "axis"),
        (AuthorOptions(shapes="refunds", shape="shape-01", axis="stale-tool-state", n=0), "n"),
        (
            AuthorOptions(shapes="refunds", shape="shape-01", axis="stale-tool-state", slice="a/b"),
            "slice",
        ),
    ],
)
def test_bad_options_are_usage_errors_and_write_nothing(
    project: Project, options: AuthorOptions, param: str
) -> None:
    before = _state(project.root)
    client, prompts = scripted([good_reply()])
    with pytest.raises(UsageError) as caught:
        author(project, options, client=client)
    assert caught.value.param == param
    assert prompts == [] and _state(project.root) == before


def test_every_axis_is_listed_once_and_unknown_axes_are_named(project: Project) -> None:
    assert len(AXES) == len(set(AXES)) == 10
    with pytest.raises(UsageError, match="missing-or-malformed-input, two-defensible-readings"):
        author(project, AuthorOptions(shapes="x", shape="y", axis="z"))


def test_cli_author_unknown_axis_and_shape(
    project: Project, run_cli: Callable[..., Result]
) -> None:
    before = _state(project.root)
    axis = run_cli("shapes", "author", "--shape", "shape-01", "--axis", "sideways")
    assert axis.exit_code == 2
    assert axis.stderr.startswith("--axis: must be one of missing-or-malformed-input, ")
    shape = run_cli("shapes", "author", "--shape", "shape-07", "--axis", "contradictory")
    assert shape.exit_code == 2
    assert (
        shape.stderr
        == "--shape: shape set 'refunds' has no shape 'shape-07' (it has shape-01, shape-02).\n"
    )
    none = run_cli("shapes", "author")
    assert none.exit_code == 2 and none.stderr.startswith("--shape: name a shape and an axis")
    assert _state(project.root) == before


def test_an_accepted_authored_case_reaches_the_agent_blind(project: Project) -> None:
    """Blindness: the agent gets the situation's turns and tools, never `satisfiable` or provenance."""
    refusal = good_reply(
        "I bought the kettle 90 days ago, refund it to my card.",
        expected="refuse",
        outcome="Decline, because the kettle is past every refund window.",
        outcome_is_state=False,
    )
    (case,) = author(
        project,
        AuthorOptions(shapes="refunds", shape="shape-02", axis="outside-policy", n=1),
        client=scripted([refusal])[0],
    ).cases
    (task,) = list_tasks(project, kind=GENERATED_CASE_KIND)
    decide_task(project, task.id, "accept", reviewer="rev-1", seconds=30)
    sample_agents.RECEIVED.clear()
    run_agent(
        project,
        RunRequest(
            dataset="refunds", agent="python:tests.runner.sample_agents:spy", k=1, use_judge=False
        ),
    )
    (payload,) = [p for p in sample_agents.RECEIVED if "kettle" in json.dumps(p["turns"])]
    assert set(payload) == {"schema_version", "trial_id", "turns", "tools", "tool_server", "seed"}
    text = json.dumps(payload)
    for hidden in (
        "satisfiable",
        "outside_policy",
        "outside-policy",
        "shape-02",
        case.id,
        "mined-",
    ):
        assert hidden not in text
    assert "Decline" not in text and "ledger" not in text

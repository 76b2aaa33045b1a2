"""The bundled example project `examples/refunds/` loads and has the properties it promises.

The measures here (3-shingle Jaccard and containment, Cohen's kappa) are computed from scratch, not
with casework's own implementations, so the example also checks them.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jmespath
import jsonpatch
import pytest

from casework.dataset import declared_tools, label_sort_key, read_cases
from casework.dataset.jsonl import canonical_bytes, read_records
from casework.project import Project, load_project
from casework.schema import OUTCOMES, Case, LabelRecord, ToolFixture, ToolRequirement

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "refunds"
DATASET = PROJECT / "datasets" / "refunds"
BUILD = PROJECT / "build" / "make_dataset.py"
TODAY = date(2026, 11, 30)
SLICES = ("refunds", "order_status", "account")
CURRENT = {"refunds": "refunds-g7", "order_status": "order_status-g3", "account": "account-g2"}


@pytest.fixture(scope="module")
def project() -> Project:
    return load_project(PROJECT)


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return read_cases(DATASET / "cases.jsonl")


@pytest.fixture(scope="module")
def labels() -> list[LabelRecord]:
    return read_records(DATASET / "labels.jsonl", LabelRecord).records


@pytest.fixture(scope="module")
def by_id(cases: list[Case]) -> dict[str, Case]:
    return {c.id: c for c in cases}


def shingles(text: str, k: int = 3) -> set[tuple[str, ...]]:
    words = re.sub(r"[\W_]+", " ", text.lower()).split()
    if len(words) < k:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    return len(a & b) / len(a | b)


def kappa(pairs: list[tuple[str, str]]) -> float:
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_e = sum(first[c] * second[c] for c in OUTCOMES) / n**2
    return (p_o - p_e) / (1 - p_e)


# ---------------------------------------------------------------------------------------------
# Project files


def test_config_names_the_agent_files(project: Project) -> None:
    agent = project.config.agent
    assert agent.tools == "agent/tools.json"
    assert agent.prompt_files == ["agent/prompt.md", "agent/few_shot.md"]
    assert agent.family
    for name in [agent.tools, *agent.prompt_files]:
        assert (PROJECT / name).is_file(), name
    assert project.dataset_names() == ["refunds"]
    assert ".casework/" in (PROJECT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_tools_are_declared_with_json_schema_parameters(project: Project) -> None:
    raw = json.loads((PROJECT / "agent" / "tools.json").read_text(encoding="utf-8"))
    assert isinstance(raw, list)
    assert len(raw) >= 8
    for tool in raw:
        assert set(tool) == {"name", "description", "parameters"}
        params = tool["parameters"]
        assert params["type"] == "object"
        assert set(params.get("required", [])) <= set(params["properties"])
    assert set(declared_tools(project)) == {t["name"] for t in raw}


def test_guidelines_carry_versioned_front_matter(labels: list[LabelRecord]) -> None:
    for slice_name in SLICES:
        text = (PROJECT / "guidelines" / f"{slice_name}.md").read_text(encoding="utf-8")
        head = text.split("---\n")
        assert head[0] == ""
        assert head[1] == f"version: {CURRENT[slice_name]}\nslice: {slice_name}\n"
        for outcome in OUTCOMES:
            assert f"**{outcome}**" in text
    versions = {r.guideline_version for r in labels}
    assert versions == {*CURRENT.values(), "refunds-g6"}


# ---------------------------------------------------------------------------------------------
# Cases


def test_files_are_canonical(cases: list[Case], labels: list[LabelRecord]) -> None:
    assert (DATASET / "cases.jsonl").read_bytes() == canonical_bytes(cases, sort_key=lambda c: c.id)
    assert (DATASET / "labels.jsonl").read_bytes() == canonical_bytes(
        labels, sort_key=label_sort_key
    )


def test_size_slices_outcomes_and_splits(cases: list[Case]) -> None:
    assert len(cases) >= 180
    assert {c.slice for c in cases} == set(SLICES)
    for slice_name in SLICES:
        mine = [c for c in cases if c.slice == slice_name]
        assert {c.label.outcome for c in mine if c.label} == set(OUTCOMES), slice_name
        holdout = sum(c.split == "holdout" for c in mine) / len(mine)
        assert 0.25 <= holdout <= 0.4, (slice_name, holdout)
    assert {c.split for c in cases} == {"dev", "holdout"}


def test_sources_and_synthetic_share(cases: list[Case], by_id: dict[str, Case]) -> None:
    for slice_name in SLICES:
        mix = Counter(c.source for c in cases if c.slice == slice_name)
        assert set(mix) == {"mined", "hand", "synthetic"}
        assert mix["synthetic"] <= 0.25 * sum(mix.values())
    for case in cases:
        p = case.provenance
        if case.source == "synthetic":
            assert p.parent_id and p.transform and p.generator
            assert p.generator.model and p.generator.prompt_version
            parent = by_id[p.parent_id]
            assert case.id == f"{parent.id}~{p.transform}"
            assert (parent.slice, parent.split) == (case.slice, case.split)
            assert parent.source != "synthetic" and not parent.frozen
            if p.transform == "drop_identifier":
                assert case.label is None  # information-changing: back to labelling
        else:
            assert p.parent_id is None and p.generator is None


def test_mined_rows_are_scrubbed_and_dated(cases: list[Case]) -> None:
    mined = [c for c in cases if c.source == "mined"]
    assert len(mined) >= 60
    for case in mined:
        p = case.provenance
        assert p.source_trace and p.source_session and p.subjects and p.scrub
        assert re.fullmatch(r"session_[0-9a-f]{12}", p.source_session)
        assert p.mined_at is not None and p.mined_at.utcoffset() is not None
        assert p.retain_until is not None and p.retain_until > p.mined_at.date()
        text = case.model_dump_json()
        assert not re.search(r"ORD-\d{6}|CUS-\d{5}|@example\.com", text), case.id
        assert all(s in text for s in p.subjects)
    expired = [
        c.id for c in mined if c.provenance.retain_until and c.provenance.retain_until < TODAY
    ]
    assert len(expired) == 2
    assert not any(c.provenance.parent_id in expired for c in cases)


def test_unsatisfiable_cases(cases: list[Case]) -> None:
    unsat = [c for c in cases if not c.satisfiable]
    assert 0.15 <= len(unsat) / len(cases) <= 0.25
    for case in unsat:
        assert case.provenance.unsatisfiable_kind is not None
        assert case.label is not None and case.label.outcome != "resolve"
    kinds = {c.provenance.unsatisfiable_kind for c in unsat}
    assert kinds == {
        "permission_absent",
        "referent_absent",
        "contradictory",
        "outside_policy",
        "underdetermined",
    }
    assert {c.slice for c in unsat} == set(SLICES)


def test_frozen_cases_are_private_holdout_rows(cases: list[Case]) -> None:
    frozen = [c for c in cases if c.frozen]
    assert 3 <= len(frozen) <= 8
    assert all(c.split == "holdout" and c.source == "hand" for c in frozen)


def test_situations_have_prefixes_fixtures_state_and_adversity(cases: list[Case]) -> None:
    with_calls = [c for c in cases if any(t.tool_calls for t in c.situation.turns)]
    assert len(with_calls) >= 8
    assert all(
        call.result is not None
        for c in with_calls
        for t in c.situation.turns
        for call in t.tool_calls
    )
    assert all(c.situation.fixtures and c.situation.state for c in cases)
    kinds = Counter(i.kind for c in cases for i in c.situation.injected)
    assert kinds["prompt_injection"] >= 5 and kinds["stale_state"] >= 2
    writes = [f for c in cases for f in c.situation.fixtures if f.effects]
    assert any(e.path == "/ledger/-" for f in writes for e in f.effects)
    aged = [o["age_days"] for c in cases for o in c.situation.state.get("orders", {}).values()]
    assert min(aged) <= 2 and max(aged) > 60


def test_every_tool_named_is_declared(cases: list[Case], project: Project) -> None:
    declared = set(declared_tools(project))
    for case in cases:
        assert case.tool_names() <= declared, case.id
        for req in case.label.required_tools + case.label.forbidden_tools if case.label else []:
            params = declared_tools(project)[req.name].parameters["properties"]
            assert set(req.arguments) <= set(params), (case.id, req.name)


# ---------------------------------------------------------------------------------------------
# Oracles: a trajectory that makes the required calls passes, one that does nothing fails.


def _serve(fixtures: list[ToolFixture], name: str, args: dict[str, Any]) -> ToolFixture | None:
    matching = [
        f for f in fixtures if f.tool == name and all(args.get(k) == v for k, v in f.match.items())
    ]
    return max(matching, key=lambda f: len(f.match)) if matching else None


def _substitute(value: Any, args: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("${args.") and value.endswith("}"):
        return args[value[7:-1]]
    if isinstance(value, dict):
        return {k: _substitute(v, args) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, args) for v in value]
    return value


_DECLARED = {
    t["name"]: t for t in json.loads((PROJECT / "agent" / "tools.json").read_text(encoding="utf-8"))
}


def _call_args(case: Case, req: ToolRequirement) -> dict[str, Any]:
    """The label's argument values, plus plausible values for required arguments it leaves open."""
    state = case.situation.state
    fillers = {
        "reason": "other",
        "summary": "see the conversation",
        "queue": "general",
        "order_id": next(iter(state.get("orders", {})), None),
        "customer_id": next(iter(state.get("customers", {})), None),
    }
    args = {k: m.value for k, m in req.arguments.items()}
    for name in _DECLARED[req.name]["parameters"].get("required", []):
        args.setdefault(name, fillers.get(name))
    return args


def _golden_state(case: Case, required: list[ToolRequirement]) -> dict[str, Any]:
    state = copy.deepcopy(case.situation.state)
    for req in required:
        args = _call_args(case, req)
        fixture = _serve(case.situation.fixtures, req.name, args)
        assert fixture is not None, (case.id, req.name)
        ops = [
            {"op": e.op, "path": e.path, "value": _substitute(e.value, args)}
            for e in fixture.effects
        ]
        state = jsonpatch.apply_patch(state, ops)
    return state


def _holds(case: Case, state: dict[str, Any]) -> bool:
    ops = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
    return all(ops[a.op](jmespath.search(a.expr, state), a.value) for a in case.oracle.assertions)


def test_oracle_classes_are_mixed(cases: list[Case]) -> None:
    classes = Counter(c.oracle.class_ for c in cases)
    assert classes["state_assertion"] >= 0.4 * len(cases)
    assert classes["rubric_judge"] >= 0.15 * len(cases)
    assert classes["human"] >= 3
    for case in cases:
        if case.oracle.class_ == "human":
            assert case.oracle.ref and (PROJECT / case.oracle.ref).is_file(), case.id
        for assertion in case.oracle.assertions:
            jmespath.compile(assertion.expr)


def test_state_assertions_pass_the_labelled_path_and_can_fail(cases: list[Case]) -> None:
    can_fail = caught = 0
    for case in cases:
        if case.oracle.class_ != "state_assertion" or case.label is None:
            continue
        assert _holds(case, _golden_state(case, case.label.required_tools)), case.id
        if not _holds(case, case.situation.state):
            can_fail += 1
        forbidden = [
            r for r in case.label.forbidden_tools if r.name in ("issue_refund", "update_address")
        ]
        for req in forbidden:
            # A forbidden write with plausible arguments must be caught by the oracle.
            order = next(iter(case.situation.state.get("orders", {})), None)
            args = (
                {"order_id": order, "amount": 10.0}
                if req.name == "issue_refund"
                else {"order_id": order}
            )
            fixture = _serve(case.situation.fixtures, req.name, args)
            if fixture is not None and fixture.effects:
                bad = ToolRequirement.model_validate(
                    {"name": req.name, "arguments": {k: {"value": v} for k, v in args.items()}}
                )
                if req.name == "update_address":
                    bad.arguments["address"] = bad.arguments["order_id"].model_copy(
                        update={"value": "1 Wrong St"}
                    )
                assert not _holds(case, _golden_state(case, [bad])), (case.id, req.name)
                caught += 1
    assert can_fail >= 60 and caught >= 30


# ---------------------------------------------------------------------------------------------
# Labels


def _key(x: Any) -> tuple[str, list[Any], list[Any]]:
    return (
        x.outcome,
        [t.model_dump(mode="json") for t in x.required_tools],
        [t.model_dump(mode="json") for t in x.forbidden_tools],
    )


def _records(labels: list[LabelRecord]) -> Iterator[tuple[str, dict[str, LabelRecord]]]:
    grouped: dict[str, dict[str, LabelRecord]] = {}
    for r in labels:
        assert r.role not in grouped.setdefault(r.case_id, {}), (r.case_id, r.role)
        grouped[r.case_id][r.role] = r
    yield from grouped.items()


def test_final_labels_follow_the_raw_labels(
    cases: list[Case], labels: list[LabelRecord], by_id: dict[str, Case]
) -> None:
    seen = set()
    counts: Counter[str] = Counter()
    for case_id, roles in _records(labels):
        case = by_id[case_id]
        seen.add(case_id)
        assert case.label is not None
        first, second, judge = roles["first"], roles.get("second"), roles.get("adjudicator")
        assert first.overlap_reason is None
        assert {r.guideline_version for r in roles.values()} == {case.label.guideline_version}
        assert case.label.guideline_version is not None
        assert case.label.guideline_version.startswith(f"{case.slice}-g")
        assert all(r.labelled_at >= first.labelled_at for r in roles.values())
        if judge is not None:
            assert second is not None and _key(first) != _key(second)
            assert judge.overlap_reason == "disagreement"
            assert judge.labeller not in (first.labeller, second.labeller)
            assert _key(case.label) == _key(judge)
            assert case.label.labellers == [first.labeller, second.labeller, judge.labeller]
            assert case.label.adjudicated
            counts["adjudicated"] += 1
        elif second is not None and _key(first) == _key(second):
            assert second.overlap_reason in ("calibration", "audit")
            assert second.labeller != first.labeller
            assert _key(case.label) == _key(first)
            assert case.label.labellers == [first.labeller, second.labeller]
            counts["agreed"] += 1
        else:
            # Single label, or a disagreement still waiting for its adjudicator.
            assert _key(case.label) == _key(first)
            assert case.label.labellers == [first.labeller] and not case.label.adjudicated
            counts["pending" if second else "single"] += 1
    assert seen == {c.id for c in cases if c.label is not None}
    assert counts["adjudicated"] >= 15 and counts["pending"] >= 10 and counts["single"] >= 10


def _overlap(
    labels: list[LabelRecord], slice_of: dict[str, str], slice_name: str
) -> list[tuple[LabelRecord, LabelRecord]]:
    first = {r.case_id: r for r in labels if r.role == "first"}
    return [
        (first[r.case_id], r)
        for r in labels
        if r.role == "second"
        and r.overlap_reason in ("calibration", "audit")
        and slice_of[r.case_id] == slice_name
        and r.guideline_version == CURRENT[slice_name]
    ]


def test_agreement_per_slice(cases: list[Case], labels: list[LabelRecord]) -> None:
    slice_of = {c.id: c.slice for c in cases}
    for slice_name in SLICES:
        pairs = _overlap(labels, slice_of, slice_name)
        assert len(pairs) >= 50, slice_name
        k = kappa([(a.outcome, b.outcome) for a, b in pairs])
        if slice_name == "refunds":
            assert 0.45 <= k <= 0.55, k
        else:
            assert k > 0.8, (slice_name, k)
    audits = Counter(slice_of[r.case_id] for r in labels if r.overlap_reason == "audit")
    assert audits["order_status"] >= 1 and audits["account"] >= 1 and audits["refunds"] == 0


def test_refunds_disagreements_cluster_on_old_partial_shipments(
    cases: list[Case], labels: list[LabelRecord], by_id: dict[str, Case]
) -> None:
    slice_of = {c.id: c.slice for c in cases}
    split = [(a, b) for a, b in _overlap(labels, slice_of, "refunds") if a.outcome != b.outcome]

    def old_partial(case: Case) -> bool:
        orders = case.situation.state["orders"].values()
        return any(o["age_days"] > 30 and o["status"] == "partially_shipped" for o in orders)

    clustered = [(a, b) for a, b in split if old_partial(by_id[a.case_id])]
    assert len(clustered) >= 0.66 * len(split)
    assert all({a.outcome, b.outcome} == {"escalate", "clarify"} for a, b in clustered)


def test_order_status_labellers_split_on_get_order(
    cases: list[Case], labels: list[LabelRecord]
) -> None:
    slice_of = {c.id: c.slice for c in cases}
    pairs = _overlap(labels, slice_of, "order_status")

    def needs_get_order(r: LabelRecord) -> bool:
        return any(t.name == "get_order" for t in r.required_tools)

    split = [(a, b) for a, b in pairs if needs_get_order(a) != needs_get_order(b)]
    assert len(split) >= 5
    assert sum(a.outcome == b.outcome for a, b in split) >= 5


# ---------------------------------------------------------------------------------------------
# Leakage plants


def test_cross_split_near_duplicates_are_exactly_the_planted_ones(cases: list[Case]) -> None:
    dev = [(c, shingles(c.situation.user_text())) for c in cases if c.split == "dev"]
    hold = [(c, shingles(c.situation.user_text())) for c in cases if c.split == "holdout"]
    flagged = [(d, h, jaccard(ds, hs)) for h, hs in hold for d, ds in dev if jaccard(ds, hs) >= 0.8]
    incidents = [(d, h, j) for d, h, j in flagged if len(d.situation.user_text().split()) >= 60]
    templates = [(d, h, j) for d, h, j in flagged if len(d.situation.user_text().split()) <= 8]
    assert len(flagged) == 6
    assert len(incidents) == 4 and len(templates) == 2
    for d, h, j in incidents:
        assert j > 0.85 and d.slice == h.slice and d.source == h.source == "mined"
        assert d.provenance.source_session != h.provenance.source_session
        assert d.situation.user_text() != h.situation.user_text()
    assert {d.slice for d, _, _ in incidents} == set(SLICES)


def test_one_case_is_copied_into_the_few_shot_file(cases: list[Case], project: Project) -> None:
    pool: set[tuple[str, ...]] = set()
    for name in project.config.agent.prompt_files:
        pool |= shingles((PROJECT / name).read_text(encoding="utf-8"))

    def contained(case: Case) -> float:
        s = shingles(case.situation.user_text())
        return len(s & pool) / len(s)

    over = [c for c in cases if contained(c) > 0.5]
    assert len(over) == 1
    copied = over[0]
    assert not copied.frozen and copied.split == "holdout"
    few_shot = shingles((PROJECT / "agent" / "few_shot.md").read_text(encoding="utf-8"))
    assert (
        len(shingles(copied.situation.user_text()) & few_shot)
        / len(shingles(copied.situation.user_text()))
        > 0.8
    )
    assert all(contained(c) < 0.2 for c in cases if c.frozen)


# ---------------------------------------------------------------------------------------------
# Reproducibility


def test_build_script_reproduces_the_committed_files(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BUILD), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for name in ("cases.jsonl", "labels.jsonl"):
        assert (tmp_path / name).read_bytes() == (DATASET / name).read_bytes(), name


def test_labelled_at_is_utc(labels: list[LabelRecord]) -> None:
    assert all(
        isinstance(r.labelled_at, datetime) and r.labelled_at.utcoffset() is not None
        for r in labels
    )
    assert max(r.labelled_at.date() for r in labels) <= TODAY

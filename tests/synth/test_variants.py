"""Assembling variant cases: ids, the label rule, inherited and reset provenance."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from casework.schema import Case, Generator, Situation
from casework.synth import TransformContext, transform_table
from casework.synth.registry import get_transform
from casework.synth.variants import build_variant, check_variant, variant_id
from tests.synth.conftest import seed_case

GEN = Generator(model="rules", prompt_version=1)


def seed(**overrides: object) -> Case:
    body = seed_case(1)
    body["provenance"] = {
        "source_trace": "trace-1",
        "subjects": ["email_0123456789ab"],
        "retain_until": "2027-01-01",
        "reviewer": "rev_1",
        "reviewed_at": "2026-01-02T00:00:00Z",
        "discriminates": ["v2 > v1"],
        "shape": "broken-item",
    }
    body["oracle"] = {
        "class": "state_assertion",
        "assertions": [{"expr": "refunds[0].amount", "value": 24.5}],
    }
    body.update(overrides)
    return Case.model_validate(body)


def changed(case: Case, text: str) -> Situation:
    turns = [case.situation.turns[0].model_copy(update={"content": text})]
    return case.situation.model_copy(update={"turns": turns})


def test_variant_ids() -> None:
    assert variant_id("r-1", "typos", 1) == "r-1~typos"
    assert variant_id("r-1", "typos", 3) == "r-1~typos-3"


def test_preserving_variant_keeps_label_oracle_split_and_supply_chain() -> None:
    s = seed(split="holdout", frozen=True)
    spec = get_transform("typos").spec
    v = build_variant(s, changed(s, "Refund ORD-1001 now, it broke."), spec, 2, GEN)
    assert v.id == "r-01~typos-2"
    assert (v.source, v.split, v.frozen, v.slice) == ("synthetic", "holdout", True, "refunds")
    assert v.label == s.label and v.oracle == s.oracle
    p = v.provenance
    assert (p.parent_id, p.transform, p.generator) == ("r-01", "typos", GEN)
    assert (p.source_trace, p.subjects, p.shape) == (
        "trace-1",
        ["email_0123456789ab"],
        "broken-item",
    )
    assert p.retain_until is not None and p.retain_until.isoformat() == "2027-01-01"
    assert (p.reviewer, p.reviewed_at, p.discriminates) == (None, None, [])


def test_information_changing_variant_goes_back_to_labelling() -> None:
    s = seed()
    v = build_variant(
        s, changed(s, "Refund my order now."), get_transform("drop_identifier").spec, 1, GEN
    )
    assert v.label is None
    assert v.oracle.class_ == "human" and v.oracle.assertions == []


def test_too_long_id_is_not_a_valid_case() -> None:
    s = seed(id="r" * 195)
    with pytest.raises(ValidationError) as info:
        build_variant(s, changed(s, "x y z"), get_transform("typos").spec, 1, GEN)
    assert info.value.errors()[0]["loc"] == ("id",)


def test_check_variant_reasons() -> None:
    s = seed()
    spec = get_transform("paraphrase").spec
    same = changed(s, s.situation.turns[0].content + " ")
    assert check_variant(s, same, spec, {}) == (
        "near-duplicate of its seed (3-shingle Jaccard 1.00): nothing changed"
    )
    text = "Could you refund ORD-1001? The mug I bought is broken, it's useless to me now."
    ok = changed(s, text)
    assert check_variant(s, ok, spec, {}) is None
    assert check_variant(s, ok, spec, {"r-01~paraphrase": ok}) == (
        "near-duplicate of r-01~paraphrase (3-shingle Jaccard 1.00)"
    )
    lost = changed(s, "Could you refund my order? The mug I bought is broken, useless to me now.")
    assert check_variant(s, lost, spec, {}) == (
        "lost 'ORD-1001' from the seed's messages, so the seed's label might not hold"
    )
    # The same loss is the point of an information-changing transform.
    assert check_variant(s, lost, get_transform("drop_identifier").spec, {}) is None
    tool_spec = get_transform("injected_tool_text").spec
    assert check_variant(s, s.situation, tool_spec, {}) == "identical to its seed: nothing changed"


words = st.sampled_from(
    ["refund", "order", "broken", "please", "mug", "I", "would", "like", "a", "the"]
)
ids = st.from_regex(r"ORD-\d{4}", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(
    prefix=st.lists(words, min_size=3, max_size=12),
    ident=ids,
    suffix=st.lists(words, min_size=0, max_size=8),
    n=st.integers(min_value=1, max_value=3),
)
def test_information_changing_rule_variants_never_carry_a_label(
    prefix: list[str], ident: str, suffix: list[str], n: int
) -> None:
    text = " ".join([*prefix, "order", ident, *suffix]) + "."
    body = seed_case(1)
    body["situation"]["turns"] = [{"role": "user", "content": text}]
    s = Case.model_validate(body)
    for spec in transform_table():
        if spec.preserves_label or spec.method != "rule":
            continue
        for item in get_transform(spec.name).make(s, [n], TransformContext(seed=7)):
            if isinstance(item, Situation):
                assert build_variant(s, item, spec, n, GEN).label is None

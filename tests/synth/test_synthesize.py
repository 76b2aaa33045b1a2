"""`synthesize`: ids, provenance, labels, the cap, rejections, releases and reproducibility."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from casework.dataset import load_dataset, read_versions
from casework.errors import UsageError
from casework.llm import Message, ScriptedProvider
from casework.llm.client import Client
from casework.schema import Case
from casework.synth import synthesize
from casework.synth.cap import synthetic_cap_violations
from tests.synth.conftest import MakeProject, seed_case


def request_of(messages: list[Message]) -> tuple[int, list[str]]:
    prompt = messages[-1].content
    count = int(re.search(r"Write (\d+) variant", prompt).group(1))  # type: ignore[union-attr]
    texts = json.loads(prompt.split("Customer messages:\n", 1)[1].split("\n", 1)[0])
    return count, texts


def rewording(messages: list[Message]) -> dict[str, Any]:
    count, texts = request_of(messages)
    return {
        "variants": [
            [
                f"Variant {i}, put differently: " + t.replace("refund", "reimbursement")
                for t in texts
            ]
            for i in range(1, count + 1)
        ]
    }


def scripted(fn: Any, family: str | None = None) -> Client:
    return Client(ScriptedProvider(fn=fn), provider_name="scripted", family=family)


def test_preserving_variants_inherit_label_and_get_provenance(make_project: MakeProject) -> None:
    project = make_project()
    result = synthesize(project, "refunds", ["typos"], slice_name="refunds", per_case=1, limit=2)

    assert [c.id for c in result.created] == ["r-01~typos", "r-02~typos"]
    seeds = {c.id: c for c in load_dataset(project, "refunds").cases}
    for variant in result.created:
        seed = seeds[variant.provenance.parent_id or ""]
        assert variant.source == "synthetic"
        assert variant.label == seed.label and variant.label is not None
        assert variant.oracle == seed.oracle
        assert (variant.slice, variant.split) == (seed.slice, seed.split)
        assert variant.provenance.transform == "typos"
        assert variant.provenance.generator is not None
        assert variant.provenance.generator.model_dump() == {
            "model": "rules",
            "prompt_version": 1,
            "family": None,
        }
        assert seeds[variant.id] == variant
    assert result.to_labelling == []
    assert result.limited == 5
    assert result.version is not None and result.version.number == 2
    assert result.version.changes == [
        "+2 synthetic typos variant(s) in slice refunds (label kept from the seed)"
    ]
    assert result.version.message == "synth: typos variants of slice refunds"


def test_information_changing_variants_never_carry_a_label(make_project: MakeProject) -> None:
    project = make_project(config="[thresholds]\nsynthetic_cap = 1.0\n")
    result = synthesize(
        project, "refunds", ["drop_identifier", "injected_tool_text"], per_case=1, limit=4
    )

    assert [c.id for c in result.created] == [
        "r-01~drop_identifier",
        "r-01~injected_tool_text",
        "r-02~drop_identifier",
        "r-02~injected_tool_text",
    ]
    assert all(c.label is None for c in result.created)
    assert all(c.oracle.class_ == "human" for c in result.created)
    assert result.to_labelling == [c.id for c in result.created]
    injected = next(c for c in result.created if c.provenance.transform == "injected_tool_text")
    assert [i.kind for i in injected.situation.injected] == ["prompt_injection"]
    on_disk = load_dataset(project, "refunds")
    assert all(c.label is None for c in on_disk.cases if c.source == "synthetic")
    assert result.version is not None
    assert result.version.counts.by_outcome == {"resolve": 7, "unlabelled": 4}


def test_generation_stops_at_the_cap_and_check_agrees(make_project: MakeProject) -> None:
    project = make_project()
    result = synthesize(project, "refunds", ["typos", "informal_register"], per_case=2)

    assert len(result.created) == 3  # 3 of 10 = 30%
    assert result.capped == {"refunds": 25}
    assert result.warnings == [
        "slice 'refunds' reached the synthetic cap of 30% (thresholds.synthetic_cap): "
        "25 variant(s) not generated"
    ]
    cases = load_dataset(project, "refunds").cases
    assert synthetic_cap_violations(cases, 0.3) == []
    one_more = Case.model_validate(seed_case(99, source="synthetic"))
    assert [v.slice for v in synthetic_cap_violations([*cases, one_more], 0.3)] == ["refunds"]

    again = synthesize(project, "refunds", ["typos"], per_case=2)
    assert again.created == [] and again.version is None
    assert again.capped == {"refunds": 12}


def test_cap_from_config(make_project: MakeProject) -> None:
    project = make_project(config="[thresholds]\nsynthetic_cap = 0.5\n")
    result = synthesize(project, "refunds", ["typos"], per_case=3)
    assert len(result.created) == 7


def test_rerun_keeps_existing_variants_and_adds_only_missing_indices(
    make_project: MakeProject,
) -> None:
    project = make_project(config="[thresholds]\nsynthetic_cap = 1.0\n")
    first = synthesize(project, "refunds", ["typos"], slice_name="refunds", per_case=1)
    second = synthesize(project, "refunds", ["typos"], slice_name="refunds", per_case=2)
    third = synthesize(project, "refunds", ["typos"], slice_name="refunds", per_case=2)

    assert [c.id for c in first.created][:2] == ["r-01~typos", "r-02~typos"]
    assert [c.id for c in second.created][:2] == ["r-01~typos-2", "r-02~typos-2"]
    assert third.created == [] and third.version is None
    versions = read_versions(project.dataset_dir("refunds"), "versions.jsonl")
    assert [v.number for v in versions] == [1, 2, 3]


def test_llm_variants_are_checked_before_they_are_kept(make_project: MakeProject) -> None:
    def mixed(messages: list[Message]) -> dict[str, Any]:
        count, texts = request_of(messages)
        text = texts[0]
        if "ORD-1001" in text:
            return {"variants": [[text]] * count}  # nothing changed
        if "ORD-1002" in text:
            return {"variants": [[re.sub(r"ORD-\d+", "my order", text) + " Thanks a lot!"]] * count}
        return rewording(messages)

    project = make_project(config="[thresholds]\nsynthetic_cap = 1.0\n")
    result = synthesize(
        project, "refunds", ["paraphrase"], per_case=1, limit=3, client=scripted(mixed)
    )

    # Rejected variants do not count against --limit: later seeds take their place.
    assert [c.id for c in result.created] == [
        "r-03~paraphrase",
        "r-04~paraphrase",
        "r-05~paraphrase",
    ]
    assert [(r.variant_id, r.reason) for r in result.rejected] == [
        ("r-01~paraphrase", "near-duplicate of its seed (3-shingle Jaccard 1.00): nothing changed"),
        (
            "r-02~paraphrase",
            "lost 'ORD-1002' from the seed's messages, so the seed's label might not hold",
        ),
    ]
    # One request per seed: three in the first wave, two more after the two rejections.
    assert result.ledger.summary_lines() == [
        "generator (scripted): 5 requests, 0 from cache, tokens not reported by the provider"
    ]
    variant = result.created[0]
    assert variant.provenance.generator is not None
    assert variant.provenance.generator.model == "scripted"
    assert variant.situation.turns[0].content.startswith("Variant 1, put differently: ")
    assert variant.label is not None


def test_sibling_variants_must_differ(make_project: MakeProject) -> None:
    def same_twice(messages: list[Message]) -> dict[str, Any]:
        count, texts = request_of(messages)
        return {"variants": [["Put differently: " + texts[0].replace("refund", "payback")]] * count}

    project = make_project(config="[thresholds]\nsynthetic_cap = 1.0\n")
    result = synthesize(
        project, "refunds", ["paraphrase"], per_case=2, limit=2, client=scripted(same_twice)
    )
    assert [c.id for c in result.created] == ["r-01~paraphrase", "r-03~paraphrase"]
    assert [(r.variant_id, r.reason) for r in result.rejected] == [
        ("r-01~paraphrase-2", "near-duplicate of r-01~paraphrase (3-shingle Jaccard 1.00)"),
        # r-02's message has no "refund" to replace: two added words are not a paraphrase.
        ("r-02~paraphrase", "near-duplicate of its seed (3-shingle Jaccard 0.92): nothing changed"),
        (
            "r-02~paraphrase-2",
            "near-duplicate of its seed (3-shingle Jaccard 0.92): nothing changed",
        ),
    ]


def test_second_run_shows_the_model_the_variants_it_already_wrote(
    make_project: MakeProject,
) -> None:
    prompts: list[str] = []

    def record(messages: list[Message]) -> dict[str, Any]:
        prompts.append(messages[-1].content)
        return rewording(messages)

    project = make_project(config="[thresholds]\nsynthetic_cap = 1.0\n")
    synthesize(
        project,
        "refunds",
        ["paraphrase"],
        slice_name="refunds",
        per_case=1,
        limit=1,
        client=scripted(record),
    )
    synthesize(project, "refunds", ["paraphrase"], per_case=2, limit=1, client=scripted(record))

    assert "Variants already written" not in prompts[0]
    assert (
        'Variants already written (write different ones):\n[["Variant 1, put differently'
        in prompts[1]
    )
    assert "Write 1 variant(s)" in prompts[1]


def test_frozen_and_unlabelled_and_retired_seeds(make_project: MakeProject) -> None:
    cases = [
        seed_case(1, frozen=True),
        seed_case(2, label=None),
        seed_case(3, split="smoke"),
        seed_case(4),
    ]
    project = make_project(cases=cases, config="[thresholds]\nsynthetic_cap = 1.0\n")
    result = synthesize(project, "refunds", ["paraphrase", "typos"], client=scripted(rewording))

    assert sorted(c.id for c in result.created) == ["r-01~typos", "r-04~paraphrase", "r-04~typos"]
    frozen_variant = next(c for c in result.created if c.id == "r-01~typos")
    assert frozen_variant.frozen
    assert sorted((r.variant_id, r.reason) for r in result.rejected) == [
        ("r-01~paraphrase", "frozen case: never sent to a model"),
        ("r-02~paraphrase", "seed is unlabelled: nothing to preserve (label it first)"),
        ("r-02~typos", "seed is unlabelled: nothing to preserve (label it first)"),
    ]


def test_holdout_seeds_make_holdout_variants(make_project: MakeProject) -> None:
    project = make_project(
        cases=[seed_case(1, split="holdout"), seed_case(2)],
        config="[thresholds]\nsynthetic_cap = 1.0\n",
    )
    result = synthesize(project, "refunds", ["typos"])
    assert {c.id: c.split for c in result.created} == {"r-01~typos": "holdout", "r-02~typos": "dev"}


def test_family_warning(make_project: MakeProject) -> None:
    project = make_project(config='[agent]\nfamily = "Llama"\n')
    result = synthesize(
        project, "refunds", ["paraphrase"], limit=1, client=scripted(rewording, family="llama")
    )
    assert result.warnings == [
        "the generator model's family 'llama' is the agent's own ([agent] family): its rewrites "
        "read easier to the agent than real users do; prefer a generator from another family"
    ]
    assert result.created[0].provenance.generator is not None
    assert result.created[0].provenance.generator.family == "llama"


def test_dry_run_writes_nothing(make_project: MakeProject) -> None:
    project = make_project()
    before = (project.dataset_dir("refunds") / "cases.jsonl").read_bytes()
    result = synthesize(project, "refunds", ["typos"], dry_run=True)
    assert len(result.created) == 3 and result.version is None
    assert (project.dataset_dir("refunds") / "cases.jsonl").read_bytes() == before


def test_same_seed_and_script_give_the_same_bytes(make_project: MakeProject) -> None:
    script = [
        {
            "when": ["Task: paraphrase", f"ORD-{1000 + n}"],
            "reply": {
                "variants": [[f"Put simply: order ORD-{1000 + n} needs a refund, number {n}."]]
            },
        }
        for n in range(1, 8)
    ]
    config = (
        '[models.generator]\nprovider = "scripted"\nscript = "llm/responses.jsonl"\n'
        "[thresholds]\nsynthetic_cap = 1.0\n"
    )
    outputs = []
    for _ in range(2):
        project = make_project(config=config, script=script)
        synthesize(
            project, "refunds", ["paraphrase", "typos", "drop_identifier", "injected_tool_text"]
        )
        outputs.append((project.dataset_dir("refunds") / "cases.jsonl").read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n") == 7 * 5


def test_usage_errors(make_project: MakeProject) -> None:
    project = make_project()
    with pytest.raises(UsageError) as info:
        synthesize(project, "refunds", ["typos"], slice_name="billing")
    assert str(info.value) == "slice: dataset 'refunds' has no slice 'billing' (slices: refunds)."
    with pytest.raises(UsageError) as info:
        synthesize(project, "refunds@1", ["typos"])
    assert str(info.value) == (
        "'refunds@1': synth adds a release on top of the working tree; name the dataset without "
        "@version."
    )
    with pytest.raises(UsageError) as info:
        synthesize(project, "refunds", [])
    assert str(info.value) == "transform: name at least one transform."

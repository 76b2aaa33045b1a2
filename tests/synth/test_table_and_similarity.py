"""The label-preservation table, the near-duplicate measure and the cap arithmetic."""

from __future__ import annotations

import pytest

from casework.errors import UsageError
from casework.schema import Case
from casework.shingling import jaccard, shingles
from casework.synth import transform_table
from casework.synth.cap import CapViolation, synthetic_budget, synthetic_cap_violations
from casework.synth.registry import get_transform
from casework.synth.similarity import near_duplicate
from tests.factories import case_dict


def test_label_preservation_table() -> None:
    table = {(s.name, s.preserves_label, s.method) for s in transform_table()}
    assert table == {
        ("paraphrase", True, "llm"),
        ("typos", True, "rule"),
        ("informal_register", True, "rule"),
        ("noise_detail", True, "llm"),
        ("drop_identifier", False, "rule"),
        ("multi_intent", False, "llm"),
        ("injected_tool_text", False, "rule"),
    }
    assert [s.name for s in transform_table()][:4] == [
        "paraphrase",
        "typos",
        "informal_register",
        "noise_detail",
    ]


def test_unknown_transform() -> None:
    with pytest.raises(UsageError) as info:
        get_transform("shuffle")
    assert str(info.value) == (
        "transform: unknown transform. Got 'shuffle'. Known: paraphrase, typos, "
        "informal_register, noise_detail, drop_identifier, multi_intent, injected_tool_text."
    )


def test_broder_shingling_example() -> None:
    # Broder (1997) §2: the 4-shingling of "a rose is a rose is a rose".
    assert shingles("a rose is a rose is a rose", k=4) == {
        "a rose is a",
        "rose is a rose",
        "is a rose is",
    }


def j(a: str, b: str) -> float:
    return jaccard(shingles(a), shingles(b))


def test_jaccard_values() -> None:
    assert j("a rose is a rose is a rose", "a rose is a flower which is a rose") == 3 / 7
    assert j("Refund ORD-1 please", "refund ord-1 please.") == 1.0
    assert j("one two", "three four") == 0.0
    # One definition with the leakage scan: nothing to compare scores 0 ...
    assert j("", "") == 0.0 and j("?!", "...") == 0.0
    # ... while for a variant, no word changed is "nothing changed".
    assert near_duplicate("?!", "...") == (True, 1.0)
    assert near_duplicate("", "") == (True, 1.0)


def test_near_duplicate_threshold() -> None:
    base = " ".join(f"w{i}" for i in range(40))
    one_word_changed = base.replace("w39", "x39")
    dup, score = near_duplicate(base, one_word_changed)
    assert dup and score == 37 / 39
    dup, score = near_duplicate(base, base.replace("w20", "x20"))
    assert not dup and score == 35 / 41
    assert near_duplicate("same", "same") == (True, 1.0)


@pytest.mark.parametrize(
    ("synthetic", "total", "cap", "budget"),
    [
        (0, 7, 0.3, 3),  # 3/10 = cap exactly; 4/11 would exceed
        (0, 10, 0.3, 4),  # 4/14 ≈ 0.29; 5/15 ≈ 0.33
        (3, 10, 0.3, 0),
        (4, 10, 0.3, 0),  # already over: nothing more
        (0, 5, 0.0, 0),
        (0, 5, 0.5, 5),
        (2, 2, 1.0, None),
    ],
)
def test_synthetic_budget(synthetic: int, total: int, cap: float, budget: int | None) -> None:
    assert synthetic_budget(synthetic, total, cap) == budget
    if budget is not None:
        assert (synthetic + budget) / (total + budget) <= cap or budget == 0
        assert (synthetic + budget + 1) / (total + budget + 1) > cap


def _cases(real: int, synthetic: int, slice_name: str = "refunds") -> list[Case]:
    out = [
        Case.model_validate(case_dict(f"{slice_name}-r{i}", slice=slice_name)) for i in range(real)
    ]
    out += [
        Case.model_validate(case_dict(f"{slice_name}-s{i}", slice=slice_name, source="synthetic"))
        for i in range(synthetic)
    ]
    return out


def test_cap_violations() -> None:
    cases = _cases(7, 3) + _cases(6, 4, "status") + _cases(2, 0, "billing")
    assert synthetic_cap_violations(cases, 0.3) == [CapViolation("status", 4, 10, 0.3)]
    violation = synthetic_cap_violations(cases, 0.3)[0]
    assert str(violation) == (
        "slice 'status': 4 of 10 cases are synthetic (40%), above the cap of 30% "
        "(thresholds.synthetic_cap); add real cases or remove variants"
    )
    finding = violation.finding()
    assert (finding.check, finding.severity, finding.subject) == (
        "synthetic_cap",
        "error",
        "status",
    )
    assert synthetic_cap_violations(cases, 0.4) == []

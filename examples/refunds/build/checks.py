"""Properties the generated example must have; the build refuses to write files that lack them.

Measures are the plain, exact ones: word 3-shingles (lower case, non-alphanumerics to spaces, user
turns joined), Jaccard, containment, and Cohen's kappa on the outcome class.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

from history import GUIDELINES

from casework.schema import Case, LabelRecord

_NON_ALNUM = re.compile(r"[\W_]+")
#: What a raw identifier of the example world looks like (mined rows must hold none).
RAW_IDENTIFIER = re.compile(r"ORD-\d{6}|CUS-\d{5}|[\w.*]+@example\.com|\+1 541 555 01\d\d")


def shingles(text: str, k: int = 3) -> frozenset[tuple[str, ...]]:
    """Word k-shingles of ``text``; a text shorter than k words is one shingle."""
    words = _NON_ALNUM.sub(" ", text.lower()).split()
    if len(words) < k:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i : i + k]) for i in range(len(words) - k + 1))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def containment(a: frozenset[tuple[str, ...]], pool: frozenset[tuple[str, ...]]) -> float:
    """Share of ``a``'s shingles found in ``pool``."""
    return len(a & pool) / len(a) if a else 0.0


def cross_split_pairs(cases: Sequence[Case], threshold: float) -> list[tuple[str, str, float]]:
    """(dev id, holdout id, Jaccard) of every cross-split pair at or above ``threshold``."""
    dev = [(c.id, shingles(c.situation.user_text())) for c in cases if c.split == "dev"]
    hold = [(c.id, shingles(c.situation.user_text())) for c in cases if c.split == "holdout"]
    out = []
    for hid, hs in hold:
        for did, ds in dev:
            j = jaccard(ds, hs)
            if j >= threshold:
                out.append((did, hid, j))
    return sorted(out)


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> float:
    """Cohen's kappa of two raters' labels: (p_o - p_e) / (1 - p_e)."""
    items = list(pairs)
    n = len(items)
    p_o = sum(a == b for a, b in items) / n
    first = Counter(a for a, _ in items)
    second = Counter(b for _, b in items)
    p_e = sum(first[c] * second[c] for c in first) / (n * n)
    return (p_o - p_e) / (1 - p_e)


def outcome_pairs(
    labels: Sequence[LabelRecord], slice_of: dict[str, str], slice_name: str, guideline: str
) -> list[tuple[str, str]]:
    """(first, second) outcomes of a slice's calibration and audit overlap under one guideline."""
    first = {r.case_id: r for r in labels if r.role == "first"}
    return [
        (first[r.case_id].outcome, r.outcome)
        for r in labels
        if r.role == "second"
        and r.overlap_reason in ("calibration", "audit")
        and slice_of[r.case_id] == slice_name
        and r.guideline_version == guideline
    ]


def verify(
    cases: list[Case], labels: list[LabelRecord], *, prompt_files: list[Path], today: date
) -> list[str]:
    """Every promised property the example lacks (empty: all hold)."""
    problems = []
    by_id = {c.id: c for c in cases}
    slice_of = {c.id: c.slice for c in cases}
    for slice_name, version in GUIDELINES.items():
        k = cohen_kappa(outcome_pairs(labels, slice_of, slice_name, version))
        lo, hi = (0.45, 0.55) if slice_name == "refunds" else (0.8, 1.0)
        if not lo <= k <= hi:
            problems.append(f"{slice_name}: outcome kappa {k:.3f} outside [{lo}, {hi}]")
        mix = Counter(c.source for c in cases if c.slice == slice_name)
        if mix["synthetic"] > 0.25 * sum(mix.values()):
            problems.append(f"{slice_name}: synthetic share {mix['synthetic']}/{sum(mix.values())}")
    flagged = cross_split_pairs(cases, 0.8)
    if len(flagged) != 6:
        problems.append(
            f"expected 6 cross-split pairs at J >= 0.8, found {len(flagged)}: {flagged}"
        )
    pool: frozenset[tuple[str, ...]] = frozenset()
    for path in prompt_files:
        pool |= shingles(path.read_text(encoding="utf-8"))
    contained = sorted(
        c.id for c in cases if containment(shingles(c.situation.user_text()), pool) > 0.5
    )
    if len(contained) != 1 or by_id[contained[0]].frozen:
        problems.append(
            f"expected exactly one non-frozen case copied into the prompt files, found {contained}"
        )
    expired = [
        c.id
        for c in cases
        if c.source == "mined" and c.provenance.retain_until and c.provenance.retain_until < today
    ]
    if len(expired) != 2:
        problems.append(f"expected 2 expired mined rows, found {expired}")
    for c in cases:
        if c.provenance.parent_id:
            parent = by_id[c.provenance.parent_id]
            if (
                jaccard(shingles(parent.situation.user_text()), shingles(c.situation.user_text()))
                == 1.0
            ):
                problems.append(f"{c.id}: variant text equals its seed's")
    for c in cases:
        if c.source == "mined" or c.provenance.retain_until:
            raw = RAW_IDENTIFIER.findall(c.model_dump_json())
            if raw:
                problems.append(f"{c.id}: raw identifiers survived scrubbing: {sorted(set(raw))}")
    return problems

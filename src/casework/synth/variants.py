"""From a seed and a new situation to a variant case: id, label rule, provenance, acceptance checks.

Entry points: :func:`variant_id`, :func:`build_variant`, :func:`check_variant`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from casework.dataset import dump_record
from casework.schema import Case, Generator, Oracle, Situation
from casework.synth.identifiers import facts_of
from casework.synth.similarity import near_duplicate
from casework.synth.transforms import TransformSpec

__all__ = ["build_variant", "check_variant", "surface", "variant_id"]


def variant_id(seed_id: str, transform: str, n: int) -> str:
    """`<seed>~<transform>` for the first variant, `<seed>~<transform>-<n>` for later ones.

    The first keeps its id when ``--per-case`` later grows.
    """
    base = f"{seed_id}~{transform}"
    return base if n == 1 else f"{base}-{n}"


def surface(situation: Situation, spec: TransformSpec) -> str:
    """The part of a situation a transform changes: the user's text, or the tool outputs."""
    if spec.surface == "user_text":
        return situation.user_text()
    return json.dumps(
        [dump_record(f) for f in situation.fixtures], sort_keys=True, ensure_ascii=False
    )


def check_variant(
    seed: Case,
    situation: Situation,
    spec: TransformSpec,
    siblings: Mapping[str, Situation],
    id_patterns: Mapping[str, str] | None = None,
) -> str | None:
    """Why this variant must be rejected, or ``None`` when it may be kept.

    Rejected: nothing changed (identical surface, or for user text a 3-shingle Jaccard ≥ 0.9 with
    the seed); a near-duplicate of a sibling variant of the same transform; for a label-preserving
    transform, an identifier or number of the seed's user text that the variant lost (the seed's
    label might no longer hold).
    """
    old, new = surface(seed.situation, spec), surface(situation, spec)
    if spec.surface == "user_text":
        dup, score = near_duplicate(old, new)
        if dup:
            return f"near-duplicate of its seed (3-shingle Jaccard {score:.2f}): nothing changed"
    elif old == new:
        return "identical to its seed: nothing changed"
    for sibling_id, other in sorted(siblings.items()):
        sib = surface(other, spec)
        dup, score = near_duplicate(sib, new) if spec.surface == "user_text" else (sib == new, 1.0)
        if dup:
            return f"near-duplicate of {sibling_id} (3-shingle Jaccard {score:.2f})"
    if spec.preserves_label:
        text = situation.user_text()
        lost = [f for f in facts_of(seed.situation.user_text(), id_patterns) if f not in text]
        if lost:
            shown = ", ".join(f"'{f}'" for f in lost[:3])
            return f"lost {shown} from the seed's messages, so the seed's label might not hold"
    return None


def build_variant(
    seed: Case, situation: Situation, spec: TransformSpec, n: int, generator: Generator
) -> Case:
    """The variant case, validated.

    Label-preserving transforms copy the seed's label and oracle. Information-changing ones leave
    the label empty and the oracle to a human (`class: human`): both are for labellers to decide.
    Split, slice and frozen are inherited (a variant of a holdout case stays in holdout, or it
    would leak the seed into dev), and so is the seed's provenance (subjects and retention apply
    to variants too); review and discrimination records are not.

    Raises:
        ValidationError: The variant is not a valid case (e.g. its id would be too long).
    """
    provenance = seed.provenance.model_copy(
        update={
            "generator": generator,
            "transform": spec.name,
            "parent_id": seed.id,
            "reviewer": None,
            "reviewed_at": None,
            "discriminates": [],
        }
    )
    body = {
        **dump_record(seed),
        "id": variant_id(seed.id, spec.name, n),
        "source": "synthetic",
        "situation": dump_record(situation),
        "provenance": dump_record(provenance),
    }
    if spec.preserves_label:
        body["label"] = dump_record(seed.label) if seed.label is not None else None
    else:
        body.pop("label", None)
        body["oracle"] = dump_record(Oracle())
    return Case.model_validate(body)


def validation_reason(exc: ValidationError) -> str:
    """One line from a variant's validation error."""
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"])
    return f"not a valid case: {loc}: {err['msg']}"


def siblings_of(seed_id: str, transform: str, cases: Sequence[Case]) -> dict[str, Situation]:
    """Existing variants of this seed made by this transform, by id."""
    return {
        c.id: c.situation
        for c in cases
        if c.provenance.parent_id == seed_id and c.provenance.transform == transform
    }

"""Synthetic variants of seed cases: transforms with a label-preservation table, caps, releases.

Entry points: :func:`synthesize` (`casework synth`), :func:`transform_table`,
:func:`synthetic_cap_violations` (for `casework dataset check`), :func:`family_warning`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.synth.cap import CapViolation, synthetic_budget, synthetic_cap_violations
    from casework.synth.generate import Rejection, SynthResult, family_warning, synthesize
    from casework.synth.identifiers import DropIdentifier, facts_of, find_identifiers
    from casework.synth.injection import PLANTED_INSTRUCTIONS, InjectedToolText
    from casework.synth.registry import get_transform, transform_names, transform_table
    from casework.synth.rules import InformalRegister, Typos
    from casework.synth.similarity import NEAR_DUPLICATE, near_duplicate
    from casework.synth.transforms import Skip, Transform, TransformContext, TransformSpec
    from casework.synth.variants import build_variant, check_variant, variant_id

__all__ = [
    "NEAR_DUPLICATE",
    "PLANTED_INSTRUCTIONS",
    "CapViolation",
    "DropIdentifier",
    "InformalRegister",
    "InjectedToolText",
    "Rejection",
    "Skip",
    "SynthResult",
    "Transform",
    "TransformContext",
    "TransformSpec",
    "Typos",
    "build_variant",
    "check_variant",
    "facts_of",
    "family_warning",
    "find_identifiers",
    "get_transform",
    "near_duplicate",
    "synthesize",
    "synthetic_budget",
    "synthetic_cap_violations",
    "transform_names",
    "transform_table",
    "variant_id",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.synth.cap": (
                "CapViolation",
                "synthetic_budget",
                "synthetic_cap_violations",
            ),
            "casework.synth.generate": (
                "Rejection",
                "SynthResult",
                "family_warning",
                "synthesize",
            ),
            "casework.synth.identifiers": (
                "DropIdentifier",
                "facts_of",
                "find_identifiers",
            ),
            "casework.synth.injection": (
                "PLANTED_INSTRUCTIONS",
                "InjectedToolText",
            ),
            "casework.synth.registry": (
                "get_transform",
                "transform_names",
                "transform_table",
            ),
            "casework.synth.rules": (
                "InformalRegister",
                "Typos",
            ),
            "casework.synth.similarity": (
                "NEAR_DUPLICATE",
                "near_duplicate",
            ),
            "casework.synth.transforms": (
                "Skip",
                "Transform",
                "TransformContext",
                "TransformSpec",
            ),
            "casework.synth.variants": (
                "build_variant",
                "check_variant",
                "variant_id",
            ),
        },
    )

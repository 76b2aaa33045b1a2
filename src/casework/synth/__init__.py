"""Synthetic variants of seed cases: transforms with a label-preservation table, caps, releases.

Entry points: :func:`synthesize` (`casework synth`), :func:`transform_table`,
:func:`synthetic_cap_violations` (for `casework dataset check`), :func:`family_warning`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.synth.generate import SynthResult, synthesize
    from casework.synth.registry import transform_names, transform_table
    from casework.synth.transforms import Transform, TransformContext

__all__ = [
    "SynthResult",
    "Transform",
    "TransformContext",
    "synthesize",
    "transform_names",
    "transform_table",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.synth.generate": (
                "SynthResult",
                "synthesize",
            ),
            "casework.synth.registry": (
                "transform_names",
                "transform_table",
            ),
            "casework.synth.transforms": (
                "Transform",
                "TransformContext",
            ),
        },
    )

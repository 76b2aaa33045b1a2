"""Every transform by name, in the order of the label-preservation table.

Entry points: :func:`get_transform`, :func:`transform_names`, :func:`transform_table`.
"""

from __future__ import annotations

from casework.errors import UsageError
from casework.synth.identifiers import DropIdentifier
from casework.synth.injection import InjectedToolText
from casework.synth.rewrite import LLM_TRANSFORMS
from casework.synth.rules import InformalRegister, Typos
from casework.synth.transforms import Transform, TransformSpec

__all__ = ["get_transform", "transform_names", "transform_table"]


def _registry() -> dict[str, Transform]:
    ordered: list[Transform] = [
        Typos(),
        InformalRegister(),
        DropIdentifier(),
        InjectedToolText(),
        *LLM_TRANSFORMS,
    ]
    by_name = {t.spec.name: t for t in ordered}
    order = [
        "paraphrase",
        "typos",
        "informal_register",
        "noise_detail",
        "drop_identifier",
        "multi_intent",
        "injected_tool_text",
    ]
    return {name: by_name[name] for name in order}


def transform_names() -> list[str]:
    """Every transform, preserving ones first (the order of the table)."""
    return list(_registry())


def get_transform(name: str) -> Transform:
    """The transform called ``name``.

    Raises:
        UsageError: No such transform (the message lists them).
    """
    registry = _registry()
    if name not in registry:
        raise UsageError(
            f"unknown transform. Got '{name}'. Known: {', '.join(registry)}.", param="transform"
        )
    return registry[name]


def transform_table() -> list[TransformSpec]:
    """The label-preservation table, one row per transform."""
    return [t.spec for t in _registry().values()]

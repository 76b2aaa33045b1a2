"""The JSON output of `casework synth`, as a documented model."""

from __future__ import annotations

from typing import Literal

from casework.schema.output import CommandOutput, OutputPart

__all__ = ["RejectedVariant", "SynthOutput", "VariantOutput"]


class VariantOutput(OutputPart):
    """A new variant case."""

    id: str
    """Its case id."""
    parent_id: str | None
    """The seed case it was made from."""
    transform: str | None
    """The transform that made it."""
    slice: str
    """Its slice."""
    split: str
    """Its split."""
    labelled: bool
    """Whether it inherited its seed's label (else it waits in the labelling queue)."""


class RejectedVariant(OutputPart):
    """A variant not kept."""

    id: str
    """The id it would have had."""
    reason: str
    """Why it was rejected."""


class SynthOutput(CommandOutput):
    """`casework synth`: the variants made from seed cases, and the release that holds them."""

    output: Literal["synth"] = "synth"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    version: int | None
    """The release written (null: dry run, or nothing new)."""
    hash: str | None
    """Its content hash."""
    created: list[VariantOutput]
    """New variant cases, in id order."""
    to_labelling: list[str]
    """Ids of new variants created without a label: they wait in the labelling queue."""
    rejected: list[RejectedVariant]
    """Variants not kept, with the reason."""
    capped: dict[str, int]
    """Per slice, variants not generated because the slice reached the synthetic cap."""
    limited: int
    """Variants not generated because of `--limit`."""
    warnings: list[str]
    """Sentences for the user (family match, cap reached)."""
    usage: list[str]
    """Model requests, tokens and cost: one line per role and model."""

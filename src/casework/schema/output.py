"""The base of every command's JSON output: a documented model naming its kind, with a version.

Each package defines the outputs of its own nouns (``casework.gate.outputs``,
``casework.runner.outputs`` …) on these bases; the CLI prints them in one place and
``casework schema output KIND`` prints their JSON Schema.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["OUTPUT_SCHEMA_VERSION", "CommandOutput", "OutputPart"]

#: Version of the command output formats; a field is only ever added within a version.
OUTPUT_SCHEMA_VERSION: Literal[1] = 1


class OutputPart(BaseModel):
    """A part of a command's output: unknown fields are errors, docstrings document fields."""

    # Output models load only when a command prints JSON, so pydantic's own docstring reading
    # (per class, at import) costs no command's start-up.
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)

    #: Fields printed only when they hold a value (a key that appears only in some outputs,
    #: such as a judge-corrected rate, is left out rather than printed as null).
    omit_when_none: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.omit_when_none:
                if name in data and data[name] is None:
                    del data[name]
        return data


class CommandOutput(OutputPart):
    """The whole JSON output of a command: ``output`` names its kind, then its fields."""

    output: str
    """Which output this is: its KIND (`casework schema output KIND` prints its JSON Schema).

    Named ``output``, not ``kind``: several outputs carry a ``kind`` of their own (a review
    item's kind, a run log record's kind)."""
    schema_version: Literal[1] = OUTPUT_SCHEMA_VERSION
    """Version of this output format: fields are only added within a version."""

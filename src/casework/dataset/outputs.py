"""The JSON outputs of `casework dataset check|versions|diff|cases`, as documented models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, RootModel

from casework.schema import VersionRecord
from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "CaseIdList",
    "ChangedCaseOutput",
    "CheckFinding",
    "DatasetCheck",
    "DatasetDiff",
    "VersionList",
]


class CheckFinding(OutputPart):
    """One problem a dataset check found."""

    check: str
    """Which check (`undeclared_tool`, `stale_forbidden_tool`, `unknown_argument`, `expired` …)."""
    severity: Literal["error", "warning"]
    """`error` fails the check and the gate; `warning` is shown only."""
    case_id: str | None
    """The case concerned, if any."""
    subject: str
    """What is wrong in it (a tool name, `tool.argument`, a date)."""
    message: str
    """A sentence for people."""
    next: str | None = None
    """The command that fixes it (`casework dataset expire`), or null."""


class DatasetCheck(CommandOutput):
    """`casework dataset check`: every finding of the dataset's checks."""

    output: Literal["dataset-check"] = "dataset-check"
    """Which output this is."""
    dataset: str
    """The dataset checked (`name` or `name@version`)."""
    cases: int
    """Cases checked."""
    checks: list[str]
    """The checks that ran."""
    ok: bool
    """No error-level finding (the command exits 1 when false)."""
    findings: list[CheckFinding]
    """Every finding."""
    notes: list[str]
    """Figures reported beside the findings (the unsatisfiable share of each slice)."""


class VersionList(RootModel[list[VersionRecord]]):
    """`casework dataset versions`: the release log, oldest first (a JSON list of its lines)."""


class ChangedCaseOutput(OutputPart):
    """A case present in both versions whose content differs."""

    id: str
    """The case id."""
    fields: list[str]
    """Top-level fields that differ."""
    relabelled: bool
    """Whether its label changed."""
    split: list[str] | None
    """[old split, new split] when the case moved split, else null."""


class DatasetDiff(CommandOutput):
    """`casework dataset diff`: the cases added, removed and changed between two versions."""

    output: Literal["dataset-diff"] = "dataset-diff"
    """Which output this is."""
    from_: str = Field(alias="from")
    """The older version compared."""
    to: str
    """The newer version compared (`working` for the working tree)."""
    added: list[str]
    """Ids of cases only in the newer version."""
    removed: list[str]
    """Ids of cases only in the older version."""
    changed: list[ChangedCaseOutput]
    """Cases in both whose content differs."""


class CaseIdList(RootModel[list[str]]):
    """`casework dataset cases`: the ids of the matching cases (a JSON list)."""

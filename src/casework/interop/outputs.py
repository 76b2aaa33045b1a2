"""The JSON outputs of `casework import …` and `casework export …`, as documented models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from casework.schema import VersionRecord
from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "AdkExport",
    "AdkImport",
    "AgentDojoImport",
    "CasesImport",
    "FncallImport",
    "RunImport",
    "SkippedTrial",
    "SuggestedTool",
    "Tau2Import",
    "ToolSuggestions",
    "VerdictExport",
]


class CasesImport(CommandOutput):
    """`casework import jsonl|inspect-samples`: the cases read and the release made."""

    output: Literal["cases-import"] = "cases-import"
    """Which output this is."""
    dataset: str
    """The dataset the cases were added to."""
    file: str
    """The file read."""
    imported: list[str]
    """Ids of the new cases."""
    version: VersionRecord | None
    """The release (its line of `versions.jsonl`); null: content unchanged, no release."""


class FncallImport(CommandOutput):
    """`casework import fncall`: the function-calling rows read as cases and the release made."""

    output: Literal["fncall-import"] = "fncall-import"
    """Which output this is."""
    dataset: str
    """The dataset the cases were added to."""
    file: str
    """The file read."""
    imported: list[str]
    """Ids of the new cases."""
    outcomes: dict[str, int]
    """Cases per expected outcome (`resolve`, `clarify`, `refuse`)."""
    catalogues: list[str]
    """Tool catalogue files written (one per distinct offered tool set, and one reference
    document per BFCL multi-turn row)."""
    version: VersionRecord | None
    """The release; null: content unchanged, no release."""
    not_gradable: dict[str, str]
    """Cases imported without a label, by id, with what of the benchmark's scoring is lost
    (BFCL multi-turn rows: `casework dataset check` fails them)."""


class Tau2Import(CommandOutput):
    """`casework import tau2`: a τ²-bench domain read as a slice of cases."""

    output: Literal["tau2-import"] = "tau2-import"
    """Which output this is."""
    dataset: str
    """The dataset."""
    slice: str
    """The slice the domain's cases make up (replaced as a whole)."""
    imported: list[str]
    """Ids of the cases."""
    renamed: dict[str, str]
    """Original task id to case id, for the ids the name rule refuses."""
    state: str | None
    """The database copied into the project; null: the domain has none."""
    tools: str | None
    """The tools file written; null: the domain declares no tools."""
    tools_source: str | None
    """Where the tools were read (`tau2.domains.airline.tools`, a file)."""
    user_tools: str | None
    """The user's own tools file written (telecom's device), or null."""
    evaluator: str | None
    """The τ² domain whose evaluator scores the cases; null: a domain τ² does not know."""
    lost: dict[str, list[str]]
    """Per task (original id), the parts of τ²'s reward basis nothing can score: those cases are
    not gradable."""
    not_carried: dict[str, int]
    """What the tasks held that casework's own checks leave out, per kind."""
    version: VersionRecord | None
    """The release; null: content unchanged, no release."""


class AgentDojoImport(CommandOutput):
    """`casework import agentdojo`: an AgentDojo suite read as a slice of cases."""

    output: Literal["agentdojo-import"] = "agentdojo-import"
    """Which output this is."""
    dataset: str
    """The dataset."""
    suite: str
    """The suite (also the slice, replaced as a whole)."""
    version: str
    """AgentDojo benchmark version (`v1.2.2`)."""
    user_tasks: int
    """User tasks imported (one utility case each)."""
    injection_tasks: int
    """Injection tasks of the suite."""
    security_cases: int
    """User × injection security cases (0 without an attack)."""
    state: str
    """The shared base state file."""
    tools: str
    """The tools file."""
    environment: str
    """What serves the slice's tools in `casework run`: AgentDojo's own, which the cases'
    oracle brings."""
    release: VersionRecord | None
    """The release; null: content unchanged, no release."""


class AdkImport(CommandOutput):
    """`casework import adk`: ADK eval files read as cases and the release made."""

    output: Literal["adk-import"] = "adk-import"
    """Which output this is."""
    dataset: str
    """The dataset the cases were added to."""
    files: list[str]
    """The files read."""
    formats: dict[Literal["eval_set", "query_list", "named_list"], int]
    """Files per ADK format (`eval_set`, or the legacy `query_list` and `named_list`)."""
    imported: list[str]
    """Ids of the new cases."""
    version: VersionRecord | None
    """The release; null: content unchanged, no release."""
    notes: list[str]
    """What the files hold that casework did not import."""
    undeclared_tools: list[str] | None
    """Tools the imported cases name that the agent does not declare; null: unknown (the
    declarations could not be read)."""


class RunImport(CommandOutput):
    """`casework import run`: another tool's per-trial results written as a casework run log."""

    output: Literal["run-import"] = "run-import"
    """Which output this is."""
    run_id: str
    """The run's id."""
    path: str
    """The run log written."""
    dataset_ref: str
    """`name@N` the run is pinned to, or `external@<file>` standing alone."""
    trials: int
    """Trials imported."""
    passed: int
    """Trials that passed."""
    cases: int
    """Distinct tasks."""
    k: int
    """Most trials of one task."""
    notes: list[str]
    """What the import could not carry or had to assume, one sentence each."""


class SuggestedTool(OutputPart):
    """One suggested tool declaration and where it was seen."""

    declaration: dict[str, Any]
    """`{name, description, parameters}` as agent/tools.json holds it."""
    seen_in: list[str]
    """Where it was found (files, span origins), at most five."""


class ToolSuggestions(CommandOutput):
    """`casework import tools`: declarations for the tools the files use and the agent lacks."""

    output: Literal["tool-suggestions"] = "tool-suggestions"
    """Which output this is."""
    suggested: list[SuggestedTool]
    """New declarations, by name order."""
    already_declared: list[str]
    """Tools found that the agent already declares."""
    target: str | None
    """The declarations file the patch edits; null: the agent declares tools with `tools_from`
    (add the declarations there)."""
    patch: str
    """A unified diff of `target` adding the suggestions (empty when nothing is new)."""


class AdkExport(CommandOutput):
    """`casework export adk`: a dataset version written as an ADK EvalSet file."""

    output: Literal["adk-export"] = "adk-export"
    """Which output this is."""
    ref: str
    """The dataset version exported (`name@N`)."""
    out: str
    """The EvalSet file written."""
    eval_set_id: str
    """The EvalSet's id."""
    exported: list[str]
    """Ids of the cases exported."""
    frozen: int
    """Frozen cases skipped (never exported)."""
    unlabelled: int
    """Unlabelled cases skipped."""
    unshaped: list[str]
    """Cases skipped for not starting and ending with a user turn."""
    left_out: dict[str, int]
    """Exported cases holding something ADK cannot express, by what it is."""


class SkippedTrial(OutputPart):
    """A trial whose annotations were not sent to Phoenix, and why."""

    case_id: str
    """The trial's case."""
    trial: int
    """The trial's number."""
    span_id: str
    """The span its annotations name (hex)."""
    evaluations: int
    """Annotations left out."""
    reason: str
    """Why: the agent reported no span id, or Phoenix's project does not hold the span."""


class VerdictExport(CommandOutput):
    """`casework export junit|otel|openinference`: a run's verdicts written for another tool."""

    output: Literal["verdict-export"] = "verdict-export"
    """Which output this is."""
    run_id: str
    """The run exported."""
    format: Literal["junit", "otel", "openinference"]
    """The format written."""
    out: str
    """The file written."""
    cases: int
    """Cases of the run."""
    records: int
    """Test cases (JUnit) or evaluations (OTLP, OpenInference) written."""
    posted: str | None
    """The URL the OTLP request or the annotations were posted to (credentials shown as `***`);
    null: not posted."""
    status: int | None
    """The endpoint's HTTP status; null: not posted."""
    sent: int | None = None
    """Annotations Phoenix stored (`openinference --endpoint`); null: not posted to Phoenix."""
    skipped: list[SkippedTrial] = Field(default_factory=list)
    """Trials whose annotations were not sent to Phoenix: no span reported, or span absent."""

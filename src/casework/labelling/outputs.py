"""The JSON outputs of `casework label assign|status` and `label guideline gaps|list`, as models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, RootModel

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "AdjudicationDecided",
    "AdjudicationEntryOutput",
    "AdjudicationQueue",
    "DisagreementList",
    "DisagreementOutput",
    "FinalLabelOutput",
    "GuidelineGapList",
    "GuidelineGapOutput",
    "GuidelineList",
    "GuidelineOutput",
    "LabelAssign",
    "LabelDashboard",
    "LabelStatus",
    "LabellerDashboardOutput",
    "LabellerLoadOutput",
    "PlannedAssignmentOutput",
    "RelabelRuleOutput",
    "RuleDashboardOutput",
    "ShownLabelOutput",
    "SkippedOutput",
    "SliceCalibrationOutput",
    "SliceDashboardOutput",
    "SliceStatusOutput",
    "ToolNameOutput",
]


class PlannedAssignmentOutput(OutputPart):
    """One assignment the policy decided."""

    case_id: str
    """The case."""
    slice: str
    """Its slice."""
    labeller: str
    """Who gets it."""
    role: Literal["first", "second", "adjudicator"]
    """`first`, `second` or `adjudicator`."""
    overlap_reason: Literal["calibration", "audit", "disagreement"] | None
    """`calibration` or `audit` for a second label, `disagreement` for an adjudicator, null for a first label."""


class SkippedOutput(OutputPart):
    """A case the policy could not assign, and why."""

    case_id: str
    """The case."""
    reason: str
    """One sentence."""


class SliceCalibrationOutput(OutputPart):
    """Whether a slice still needs every row double-labelled."""

    slice: str
    """The slice."""
    guideline_version: str
    """Its current guideline version (kappa is never pooled across versions)."""
    rows: int
    """Double-labelled rows (calibration or audit overlap) under that version."""
    kappa: float | None
    """Cohen's kappa on the outcome over those rows (null when undefined)."""
    calibrated: bool
    """`rows >= min_rows` and `kappa >= gate`: one labeller plus audits from now on."""


class RelabelRuleOutput(OutputPart):
    """A selector stored with a guideline version: the rows its rule touches."""

    version: str
    """The guideline version that introduced the rule."""
    selector: str
    """The JMESPath expression over the case."""


class LabelAssign(CommandOutput):
    """`casework label assign`: what it assigned (or, with `--dry-run`, would)."""

    output: Literal["label-assign"] = "label-assign"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    assignments: list[PlannedAssignmentOutput]
    """New assignments, in case-id order."""
    skipped: list[SkippedOutput]
    """Cases that could not be assigned, and why."""
    cancelled: int
    """Open assignments dropped because their guideline was superseded."""
    calibration: dict[str, SliceCalibrationOutput]
    """Per slice: kappa, rows and whether it left full double labelling."""
    relabel: int
    """Cases sent back for relabelling (with `relabel_under`)."""
    relabel_labelled: int = 0
    """Cases labelled under `relabel_under`, sent back or not."""
    relabel_rules: list[RelabelRuleOutput] = Field(default_factory=list)
    """The selectors stored with the guideline versions since `relabel_under` that chose which cases go back (empty: a version came without one, so all went back)."""
    relabel_sample: list[str] = Field(default_factory=list)
    """The first ids sent back by those rules."""
    waiting: int
    """Cases already decided but not released (`casework dataset apply` lands them)."""
    dry_run: bool
    """Nothing was written."""
    by_labeller: dict[str, dict[str, int]]
    """New assignments per labeller and role."""


class SliceStatusOutput(OutputPart):
    """One slice's labelling progress."""

    slice: str
    """The slice."""
    guideline_version: str
    """Its current guideline version."""
    cases: int
    """Cases in the slice."""
    counts: dict[str, int]
    """Cases per status (`queued`, `labelling`, `outdated`, `contested`, `adjudicating`, `ready`, `done`, `stale`)."""
    calibration: SliceCalibrationOutput
    """Kappa under the current guideline and whether the slice left full overlap."""
    seconds_per_label: float | None
    """Labelling cost: seconds on screen per timed raw label (null: n/a)."""


class LabellerLoadOutput(OutputPart):
    """One person's work in this dataset."""

    labeller: str
    """Who."""
    open_labels: int
    """First or second labels assigned, not yet imported."""
    open_adjudications: int
    """Adjudications assigned, not yet imported."""
    done: int
    """Labels imported."""


class LabelStatus(CommandOutput):
    """`casework label status`: where a dataset stands in labelling."""

    output: Literal["label-status"] = "label-status"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    slices: list[SliceStatusOutput]
    """One entry per slice."""
    labellers: list[LabellerLoadOutput]
    """One entry per person with assignments."""
    gate: float
    """`thresholds.kappa_gate`."""
    min_rows: int
    """`labelling.calibration_min_rows`."""
    totals: dict[str, int]
    """Cases per status over every slice."""
    minutes_per_accepted_case: float | None
    """Human minutes reviewing generated cases per accepted one (null: n/a, nothing accepted or timed)."""


class RuleDashboardOutput(OutputPart):
    """A guideline rule's selector and the rows it sent back."""

    version: str
    """The guideline version that introduced the rule."""
    selector: str
    """The JMESPath expression over the case."""
    rows: int
    """Cases it touches that were labelled under an older version."""
    open: int
    """Of those, cases not decided under the slice's current guideline yet."""


class SliceDashboardOutput(OutputPart):
    """One slice's figures."""

    slice: str
    """The slice."""
    guideline_version: str
    """Its current guideline version."""
    rows: int
    """Cases in the slice."""
    labelled_once: int
    """Cases with exactly one blind label under that version."""
    labelled_twice: int
    """Cases with two or more."""
    kappa_rows: int
    """Double-labelled rows kappa is computed on (agreement report rules)."""
    kappa: float | None
    """Cohen's kappa on the outcome (null: no rows, or every label in one class)."""
    kappa_low: float | None
    """Lower end of its asymptotic interval (clipped to [-1, 1])."""
    kappa_high: float | None
    """Upper end."""
    band: str | None
    """`ambiguous`, `review` or `dependable` (null with too few rows)."""
    provisional: bool
    """True when an interval crosses a band edge."""
    band_reason: str
    """One sentence saying why the band is what it is."""
    open_disagreements: int
    """Contested cases plus cases an adjudicator holds."""
    open_review_items: int
    """Open review items counted under the slice."""
    seconds_per_label: float | None
    """Labelling cost: seconds on screen per timed label (null: n/a)."""
    sent_back_by_rule: list[RuleDashboardOutput] = Field(default_factory=list)
    """The rules stored with the slice's guideline versions, newest first, with the rows each touches."""


class LabellerDashboardOutput(OutputPart):
    """One person's figures."""

    labeller: str
    """Who."""
    done: int
    """Assignments done (labels stored)."""
    assigned: int
    """Assignments held, done or not."""
    median_seconds: float | None
    """Median seconds on screen per timed label (null: n/a)."""


class LabelDashboard(CommandOutput):
    """`casework label status --dashboard`: the labelling dashboard of one dataset."""

    output: Literal["label-dashboard"] = "label-dashboard"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    slices: list[SliceDashboardOutput]
    """One entry per slice, by name."""
    labellers: list[LabellerDashboardOutput]
    """One entry per person with assignments, by id."""
    minutes_per_accepted_case: float | None
    """Human minutes per accepted generated case (null: n/a)."""


class GuidelineGapOutput(OutputPart):
    """One guideline gap note."""

    id: int
    """Its id."""
    slice: str
    """The slice whose guideline has the gap."""
    guideline_version: str
    """The version in force when the note was written."""
    note: str
    """What the guideline did not settle."""
    author: str
    """Who wrote it (pseudonymous id)."""
    dataset: str | None
    """The dataset of the case that showed the gap, if any."""
    case_id: str | None
    """That case, if any."""
    created_at: str
    """When (ISO 8601, UTC)."""
    addressed_version: str | None
    """The version whose bump addressed it (null while open)."""
    open: bool
    """True until a bump addressed the note."""


class GuidelineGapList(RootModel[list[GuidelineGapOutput]]):
    """`casework label guideline gaps`: guideline gap notes (a JSON list)."""


class GuidelineOutput(OutputPart):
    """One slice's guideline."""

    slice: str
    """The slice."""
    version: str
    """Its current version (`refunds-g7`)."""
    path: str
    """Its file, relative to the project."""
    changelog: list[str]
    """Its change notes, newest first."""


class GuidelineList(RootModel[list[GuidelineOutput]]):
    """`casework label guideline list`: every slice's guideline (a JSON list)."""


class ShownLabelOutput(OutputPart):
    """One blind label as the adjudicator sees it (no labeller id, no timestamp)."""

    name: Literal["A", "B"]
    """`A` or `B` (role order: first, then second)."""
    outcome: str
    """The outcome class."""
    required_tools: list[str]
    """Tools marked required, sorted."""
    forbidden_tools: list[str]
    """Tools marked forbidden, sorted."""
    answer_facts: list[str]
    """Facts the labeller expects in the reply."""


class AdjudicationEntryOutput(OutputPart):
    """One disagreement waiting for an adjudicator."""

    omit_when_none = frozenset({"names"})

    case_id: str
    """The case."""
    slice: str
    """Its slice."""
    guideline_version: str
    """The round's (current) guideline version."""
    slice_kappa: float | None
    """The slice's Cohen kappa under that version (null: undefined)."""
    slice_rows: int
    """Double-labelled rows that kappa is computed on."""
    differs: list[str]
    """Fields the labels differ on."""
    labels: list[ShownLabelOutput]
    """The blind labels, A then B."""
    situation: dict[str, Any]
    """The case's situation, as the labellers saw it (`casework schema case`)."""
    assigned: bool
    """True when an adjudicator holds the case."""
    names: dict[str, str] | None = None
    """Only with `--reveal-names`: `A`, `B` and `adjudicator` to people's ids."""


class ToolNameOutput(OutputPart):
    """A declared tool, for writing a final label."""

    name: str
    """The tool's name."""
    description: str
    """Its description."""


class AdjudicationQueue(CommandOutput):
    """`casework adjudicate queue` (old spelling of `review list --kind disagreement`)."""

    output: Literal["adjudication-queue"] = "adjudication-queue"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    tools: list[ToolNameOutput]
    """Declared tools, for writing a final label."""
    entries: list[AdjudicationEntryOutput]
    """The open disagreements, lowest-agreement slice first."""


class FinalLabelOutput(OutputPart):
    """The label an adjudicator decided (tools by name)."""

    outcome: str
    """The outcome class."""
    required_tools: list[str]
    """Required tools."""
    forbidden_tools: list[str]
    """Forbidden tools."""
    answer_facts: list[str]
    """Expected facts."""


class AdjudicationDecided(CommandOutput):
    """`casework adjudicate decide` (old spelling of `review decide`): what was stored."""

    output: Literal["adjudication-decided"] = "adjudication-decided"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    case_id: str
    """The case."""
    slice: str
    """Its slice."""
    guideline_version: str
    """The round."""
    label: FinalLabelOutput
    """The final label, stored as the adjudicator's raw label."""
    assigned_now: bool
    """True when the case had no adjudicator and was assigned to this one."""
    gap: GuidelineGapOutput | None
    """The guideline gap note stored with it (null: none)."""


class DisagreementOutput(OutputPart):
    """A case whose blind labels differ, under its newest guideline version."""

    case_id: str
    """The case."""
    slice: str
    """Its slice."""
    guideline_version: str
    """The round's guideline version."""
    differs: list[str]
    """Fields the labels differ on."""
    adjudicator: str | None
    """Who holds the adjudication (null: not assigned)."""
    labels: list[dict[str, Any]]
    """The blind labels, first then second, as lines of `labels.jsonl` (`casework schema label`)."""


class DisagreementList(RootModel[list[DisagreementOutput]]):
    """`casework adjudicate list` (old spelling of `review list --kind disagreement`): a JSON list."""

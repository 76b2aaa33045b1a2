"""The JSON outputs of `casework review …`, `dataset apply` and `judge sample`, as documented models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import RootModel

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "AppliedGenerated",
    "AppliedLabels",
    "AppliedLeakage",
    "DatasetApply",
    "HeldLabel",
    "HumanAgreementOutput",
    "JudgeSample",
    "JudgeVerdictsImport",
    "NamedReviewItem",
    "ReviewAdd",
    "ReviewAgreement",
    "ReviewImport",
    "ReviewItem",
    "ReviewItemList",
    "ReviewSheets",
    "ReviewSync",
    "SheetsStored",
    "SyncedKind",
    "VerdictsStored",
]


class _ItemFields(OutputPart):
    id: int
    """Its id (what `casework review show|decide` take)."""
    kind: str
    """Its kind (`leakage-pair`, `generated-case`, `disagreement`, `judge-verdict`)."""
    dataset: str
    """Its dataset."""
    subject: str
    """What it is about (unique per kind and dataset among open items)."""
    slice: str | None
    """The slice it counts under, if any."""
    payload: dict[str, Any]
    """What a page renders: the kind's own content (blind: never an agent's output or a name)."""
    status: Literal["open", "decided", "withdrawn"]
    """`open`, `decided` or `withdrawn`."""
    decision: str | None
    """The decision, once decided."""
    reason: str | None
    """The reviewer's reason (or why it was withdrawn)."""
    data: dict[str, Any] | None
    """What the decision carried besides its name (an edited case, an adjudicated label)."""
    reviewer: str | None
    """Who decided."""
    seconds_on_screen: float | None
    """Seconds the item was on screen when decided."""
    created_at: str
    """When it was built (ISO 8601, UTC)."""
    decided_at: str | None
    """When it was decided or withdrawn (ISO 8601, UTC)."""


class ReviewItem(_ItemFields, CommandOutput):
    """`casework review show|decide`: one review item."""

    output: Literal["review-item"] = "review-item"
    """Which output this is."""


class ListedItem(_ItemFields):
    """One review item in a listing."""


class NamedReviewItem(ListedItem):
    """A listed disagreement item with who labelled it (`--reveal-names` only)."""

    names: dict[str, str] | None
    """Who gave labels A and B (and who holds the case); null when the item has none."""


class ReviewItemList(RootModel[list[NamedReviewItem | ListedItem]]):
    """`casework review list`, `review decide --decisions`: review items (a JSON list)."""


class ReviewAdd(CommandOutput):
    """`casework review add-cases`: the generated-case items queued."""

    output: Literal["review-add"] = "review-add"
    """Which output this is."""
    created: list[int]
    """Ids of the items created."""
    existing: list[int]
    """Ids of open items that already stood for the same cases (nothing added)."""


class SyncedKind(OutputPart):
    """What a sync did for one kind of item."""

    dataset: str
    """Dataset name."""
    created: list[int]
    """Ids of items created."""
    existing: list[int]
    """Ids of open items already standing for what is open."""
    withdrawn: list[int]
    """Ids of open items withdrawn (settled outside the queue)."""


class ReviewSync(CommandOutput):
    """`casework review sync`: the items built, kept and withdrawn, over all kinds and per kind."""

    output: Literal["review-sync"] = "review-sync"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    created: list[int]
    """Ids of items created, every kind."""
    existing: list[int]
    """Ids of open items kept, every kind."""
    withdrawn: list[int]
    """Ids of open items withdrawn, every kind."""
    kinds: dict[str, SyncedKind]
    """The same per kind of item."""


class ReviewSheets(RootModel[dict[str, list[str]]]):
    """`casework review export`: the sheet files written, by person (a JSON object)."""


class SheetsStored(OutputPart):
    """Adjudication sheets stored."""

    sheets: int
    """Sheets read."""
    stored: dict[str, int]
    """Adjudications stored per adjudicator."""
    unanswered: int
    """Lines left blank (nothing stored for them)."""


class HumanAgreementOutput(OutputPart):
    """How often two people agree on the pass/fail of the same judge-graded reply."""

    items: int
    """Items answered by two people."""
    agreeing: int
    """Of them, items where both give the same pass/fail."""
    share: float | None
    """`agreeing / items` (null with no items)."""
    kappa: float | None
    """Cohen's kappa of the two people's pass/fail (null: undefined or no items)."""
    kappa_low: float | None = None
    """Lower end of kappa's 95% interval, clustered by case (null: undefined)."""
    kappa_high: float | None = None
    """Upper end of kappa's 95% interval."""
    kappa_interval: str | None = None
    """How the interval was made: `clustered by case (N cases)` — several trials of one case
    count as one case's evidence."""


class VerdictsStored(OutputPart):
    """Judge-verdict sheets stored."""

    stored: int
    """Answers stored (new or replacing an earlier answer of the same person)."""
    replaced: int
    """Of them, answers that replaced an earlier one."""
    unanswered: int
    """Lines left blank (nothing stored for them)."""
    human_agreement: HumanAgreementOutput
    """Human–human agreement over every stored overlapped item."""


class JudgeVerdictsImport(CommandOutput):
    """`casework judge verdicts import` (old spelling of `review import`): what the sheets stored."""

    output: Literal["judge-verdicts-import"] = "judge-verdicts-import"
    """Which output this is."""
    stored: int
    """Answers stored (new or replacing an earlier answer of the same person)."""
    replaced: int
    """Of them, answers that replaced an earlier one."""
    unanswered: int
    """Lines left blank (nothing stored for them)."""
    human_agreement: HumanAgreementOutput
    """Human–human agreement over every stored overlapped item."""


class ReviewImport(CommandOutput):
    """`casework review import`: what the returned sheets stored, per kind."""

    output: Literal["review-import"] = "review-import"
    """Which output this is."""
    disagreement: SheetsStored | None
    """The adjudication sheets' import (null: there were none)."""
    judge_verdict: VerdictsStored | None
    """The verdict sheets' import (null: there were none)."""
    synced: list[SyncedKind]
    """Disagreement items synced after adjudications landed, per dataset."""


class AppliedGenerated(OutputPart):
    """Generated cases applied."""

    released: list[str]
    """Ids of generated cases accepted in review and released now."""


class HeldLabel(OutputPart):
    """A decided label left out, and why."""

    case_id: str
    """The case."""
    reason: str
    """One sentence."""


class AppliedLabels(OutputPart):
    """Labels and adjudications applied."""

    labelled: int
    """Cases that got their first label."""
    relabelled: int
    """Cases whose label was replaced."""
    adjudicated: int
    """Of those, cases an adjudicator decided."""
    raw_labels: int
    """Raw labels added to `labels.jsonl`."""
    held: list[HeldLabel]
    """Decided labels left out, with reasons."""


class AppliedLeakage(OutputPart):
    """Leakage pairs applied."""

    moved: list[str]
    """Rows moved to dev by decided leakage flags."""
    kept: int
    """Leakage pairs kept as they are."""
    templates: int
    """Leakage pairs marked template-like."""
    superseded: int
    """Other open flags whose pair no longer crosses splits."""


class DatasetApply(CommandOutput):
    """`casework dataset apply`: the version released from decided work, per kind of decision."""

    output: Literal["dataset-apply"] = "dataset-apply"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    version: int | None
    """The new version's number (null when no case or label changed)."""
    hash: str | None
    """The new version's content hash (null with no new version)."""
    changes: list[str]
    """The new version's changelog lines."""
    generated_case: AppliedGenerated
    """Generated cases released."""
    labels: AppliedLabels
    """Labels and adjudications released."""
    leakage_pair: AppliedLeakage
    """Leakage decisions applied."""


class JudgeSample(CommandOutput):
    """`casework judge sample`: the judge verdicts drawn onto blind sheets."""

    output: Literal["judge-sample"] = "judge-sample"
    """Which output this is."""
    candidates: int
    """Judge-decided findings in the runs (after slice filters)."""
    excluded: int
    """Of them, left out as tuning records or sampled before."""
    sampled: int
    """Items drawn."""
    overlapped: int
    """Of them, items given to two reviewers."""
    strata: dict[str, int]
    """Drawn items per `slice/kind/judge verdict`."""
    sheets: dict[str, str]
    """The sheet written for each reviewer."""


class ReviewAgreement(CommandOutput):
    """`casework review agreement`: step-level agreement of doubled trajectory reviews."""

    output: Literal["review-agreement"] = "review-agreement"
    """Which output this is."""
    pairs: int
    """Doubled trials both reviewers decided."""
    tolerance: int
    """Steps two first failing steps may differ by and still agree."""
    step_kappa: float | None
    """Cohen's kappa on the first failing step (``none`` a category; None: undefined)."""
    step_agreement: float | None
    """Observed agreement on the first failing step."""
    category_kappa: float | None
    """Cohen's kappa on the category (``none`` a category; None: undefined)."""
    category_agreement: float | None
    """Observed agreement on the category."""

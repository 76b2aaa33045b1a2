"""The JSON outputs of `casework leakage scan|prompt|corpus`, as documented models."""

from __future__ import annotations

from typing import Literal

from pydantic import RootModel

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "CorpusHitOutput",
    "FlagOutput",
    "LeakageCorpus",
    "LeakageFlag",
    "LeakageFlagList",
    "LeakagePrompt",
    "LeakageResolve",
    "LeakageScan",
    "LshOutput",
    "PromptHitOutput",
    "RecallPoint",
]


class FlagOutput(OutputPart):
    """A leakage flag: two rows in different splits that look alike (a `leakage-pair` item)."""

    id: int
    """The flag's id."""
    dataset: str
    """Dataset name."""
    left_id: str
    """One row's case id."""
    right_id: str
    """The other row's case id."""
    left_split: str
    """The first row's split."""
    right_split: str
    """The second row's split."""
    jaccard: float
    """Jaccard similarity of the two rows' shingle sets."""
    shared_count: int
    """Shingles the rows share."""
    shared: list[str]
    """Some of the shared shingles, for people."""
    status: str
    """`open`, `decided`, `resolved` or `gone`."""
    decision: str | None
    """The decision taken, once decided (`move`, `keep`, `template`)."""
    move_id: str | None
    """The row to move to dev, with decision `move`."""
    reviewer: str | None
    """Who decided."""
    note: str | None
    """The reviewer's note."""
    resolved_version: int | None
    """The dataset version that carried the decision out, once resolved."""


class LshOutput(OutputPart):
    """MinHash-LSH banding parameters."""

    bands: int
    """Bands."""
    rows: int
    """Rows per band."""
    num_perm: int
    """MinHash permutations (`bands × rows`)."""


class RecallPoint(OutputPart):
    """A point of the scan's theoretical recall curve."""

    jaccard: float
    """A similarity."""
    recall: float
    """The chance a pair that similar is found (1 for the exact join)."""


class LeakageScan(CommandOutput):
    """`casework leakage scan`: near-duplicate rows across splits, flagged for review."""

    output: Literal["leakage-scan"] = "leakage-scan"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    rows: int
    """Rows scanned."""
    by_split: dict[str, int]
    """Rows per split."""
    threshold: float
    """Jaccard threshold of the scan."""
    method: Literal["exact", "lsh"]
    """Join used."""
    engine: Literal["local", "ray"]
    """Where shingling (and MinHash) ran."""
    seconds: float
    """Wall-clock time of the scan (rounded to milliseconds)."""
    lsh: LshOutput | None
    """Banding parameters (null for the exact join)."""
    recall_curve: list[RecallPoint]
    """Theoretical recall at similarities from the threshold up."""
    pairs: int
    """Verified cross-split pairs."""
    no_text: list[str]
    """Ids of rows with no words to compare (they cannot be found as near-duplicates)."""
    notes: list[str]
    """What `[leakage] memory_mb` changed: the exact join handed over to LSH, or LSH streamed
    through disk (same pairs)."""
    new: int
    """Flags opened by this scan."""
    reopened: int
    """Flags opened again (a decided pair that changed)."""
    gone: int
    """Open flags whose pair no longer crosses splits or looks alike."""
    configured_threshold: float
    """`leakage.threshold` of the project (a scan at a lower one holds its extra pairs)."""
    flags: list[FlagOutput]
    """Open flags."""
    held: list[FlagOutput]
    """Pairs found below the configured threshold, held rather than flagged."""
    suppressed: list[FlagOutput]
    """Pairs decided before and unchanged (not flagged again)."""


class PromptHitOutput(OutputPart):
    """An eval row found in a prompt file."""

    dataset: str
    """Dataset of the row."""
    case_id: str
    """The row's case id."""
    split: str
    """Its split."""
    frozen: bool
    """Whether it is a frozen row."""
    file: str
    """Prompt file with the highest score for this row."""
    plain: float
    """Share of the row's shingles found in the file."""
    weighted: float
    """Share of the row's IDF weight found (template phrases count little)."""
    long: float
    """Share of the row's long n-grams found."""
    violation: bool
    """True for holdout, smoke and frozen rows; dev rows in few-shot examples are allowed."""


class LeakagePrompt(CommandOutput):
    """`casework leakage prompt`: eval rows found in the prompt files (exits 1 on a violation)."""

    output: Literal["leakage-prompt"] = "leakage-prompt"
    """Which output this is."""
    files: list[str]
    """Prompt files checked."""
    threshold: float
    """Score above which a row counts as found."""
    rows: int
    """Rows checked."""
    hits: list[PromptHitOutput]
    """Rows found."""
    violations: int
    """Hits that fail the check."""


class CorpusHitOutput(OutputPart):
    """An eval row found in a corpus document."""

    file: str
    """Corpus file (local path or URL)."""
    doc: int
    """1-based line (JSONL, text) or row (Parquet) of the document in its file."""
    dataset: str
    """Dataset of the eval row."""
    case_id: str
    """Id of the eval row."""
    split: str
    """Its split."""
    long_shared: int
    """Long n-grams (13 words) of the row found in the document."""
    long_fraction: float
    """Share of the row's long n-grams found (0 for rows shorter than 13 words)."""
    containment: float
    """Share of the row's shingles found in the document."""
    weighted: float
    """Share of the row's IDF weight found in the document (template phrases count little)."""
    jaccard: float
    """Jaccard similarity of row and document shingle sets."""
    ref: str
    """Document reference: `path:line` (JSONL, text) or `path#row` (Parquet)."""


class LeakageCorpus(CommandOutput):
    """`casework leakage corpus`: eval rows found in training corpora (exits 1 on a hit)."""

    output: Literal["leakage-corpus"] = "leakage-corpus"
    """Which output this is."""
    datasets: list[str]
    """Datasets whose rows were looked for."""
    files: list[str]
    """Corpus files read."""
    documents: int
    """Documents read."""
    rows_indexed: int
    """Eval rows indexed."""
    engine: Literal["local", "ray"]
    """Where the scan ran."""
    bar: float
    """Containment at which a row counts as found."""
    rows_found: list[str]
    """Distinct eval rows found (`dataset:case_id`)."""
    hits: list[CorpusHitOutput]
    """Every row found, per document."""
    skipped: list[str]
    """Problems with corpus input, located (`path:line: …`), skipped."""


class LeakageFlagList(RootModel[list[FlagOutput]]):
    """`casework leakage review` (old spelling of `review list --kind leakage-pair`): a JSON list."""


class LeakageFlag(RootModel[FlagOutput]):
    """`casework leakage decide` (old spelling of `review decide`): the flag as decided."""


class LeakageResolve(CommandOutput):
    """`casework leakage resolve` (old spelling of `dataset apply`): what the decisions did."""

    output: Literal["leakage-resolve"] = "leakage-resolve"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    version: int | None
    """The new release's number (null: no row had to move)."""
    hash: str | None
    """Its content hash (null: no release)."""
    moved: list[str]
    """Ids of rows moved to dev."""
    kept: int
    """Pairs kept as they are."""
    templates: int
    """Pairs marked template-like (suppressed until a row changes)."""
    superseded: int
    """Other unresolved flags whose pair no longer crosses splits after the moves."""

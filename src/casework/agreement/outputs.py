"""The JSON output of `casework agreement`, as a documented model."""

from __future__ import annotations

from typing import Literal

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "Agreement",
    "AgreementSettingsOutput",
    "BandEdgesOutput",
    "BandVerdictOutput",
    "BinaryAgreementOutput",
    "BootstrapCIOutput",
    "ClassKappaOutput",
    "CohenKappaOutput",
    "ConfusionMatrixOutput",
    "ExclusionsOutput",
    "FeatureClusterOutput",
    "FleissKappaOutput",
    "GwetACOutput",
    "KrippendorffAlphaOutput",
    "MultiRaterOutput",
    "SliceAgreementOutput",
    "ToolAgreementOutput",
]


class BandEdgesOutput(OutputPart):
    """Edges between bands (`thresholds.kappa_gate` and `thresholds.kappa_dependable`)."""

    gate: float
    """Below this a slice is `ambiguous` and may not gate a release (default 0.6)."""
    dependable: float
    """At or above this labels are `dependable` (default 0.8)."""


class AgreementSettingsOutput(OutputPart):
    """Knobs of the report (the CLI fills them from `[thresholds]` and its options)."""

    edges: BandEdgesOutput
    """Band edges (`kappa_gate`, `kappa_dependable`)."""
    min_rows: int
    """Fewest double-labelled rows for a band (`kappa_min_rows`)."""
    min_positives: int
    """Fewest rows with a "yes" for a per-tool status `ok` (`kappa_min_positives`)."""
    bootstrap: int
    """Bootstrap resamples for the kappa interval (0: none)."""
    seed: int
    """Seed of the bootstrap."""
    confidence: float
    """Confidence level of every interval."""
    top_clusters: int
    """Disagreement clusters listed per slice."""


class CohenKappaOutput(OutputPart):
    """Cohen's kappa of two raters, with the quantities it is made of."""

    n: int
    """Rows rated by both raters."""
    p_o: float | None
    """Observed agreement: share of rows on which the raters agree."""
    p_e: float | None
    """Chance agreement from the raters' own category rates."""
    kappa: float | None
    """`(p_o - p_e) / (1 - p_e)`."""
    kappa_max: float | None
    """Largest kappa the two raters' marginal rates allow."""
    se: float | None
    """Asymptotic standard error of kappa (Fleiss, Cohen & Everitt 1969), used for the CI."""
    se0: float | None
    """Standard error under the null hypothesis kappa = 0, used for `z`."""
    ci_low: float | None
    """Lower end of the asymptotic confidence interval `kappa - z * se` (not clipped)."""
    ci_high: float | None
    """Upper end `kappa + z * se` (not clipped to 1, as in statsmodels)."""
    z: float | None
    """`kappa / se0`, the test statistic of kappa = 0."""
    p_value: float | None
    """Two-sided p-value of that test."""
    confidence: float
    """Confidence level of the interval."""
    status: Literal["ok", "undefined_single_category", "insufficient_rows"]
    """`ok`, `undefined_single_category` or `insufficient_rows`."""


class BootstrapCIOutput(OutputPart):
    """Percentile bootstrap interval of a statistic."""

    low: float | None
    """Lower percentile of the defined replicates, or null if none was defined."""
    high: float | None
    """Upper percentile, or null."""
    confidence: float
    """Confidence level (the interval holds this share of replicates)."""
    n_resamples: int
    """Resamples drawn."""
    n_undefined: int
    """Resamples where the statistic was undefined (all ratings in one category); they are left out of the percentiles, so a large count means the interval is optimistic."""
    seed: int
    """Seed of the `numpy.random.Generator` that drew the resamples."""


class GwetACOutput(OutputPart):
    """Gwet's agreement coefficient AC1 (identity weights) or AC2 (other weights)."""

    name: Literal["AC1", "AC2"]
    """`AC1` or `AC2`."""
    n_units: int
    """Units with at least one rating."""
    n_pairable: int
    """Units with at least two ratings (the ones that can show agreement)."""
    q: int
    """Number of categories on the scale."""
    p_a: float | None
    """Observed (weighted) agreement over pairable units."""
    p_e: float | None
    """Chance agreement: the propensity to agree on a hard-to-rate unit."""
    coefficient: float | None
    """`(p_a - p_e) / (1 - p_e)`."""
    se: float | None
    """Standard error (Gwet 2008, linearised; no finite-population correction)."""
    ci_low: float | None
    """Lower end of the t-interval with `n_units - 1` degrees of freedom."""
    ci_high: float | None
    """Upper end, capped at 1 (as Gwet's irrCAC does)."""
    confidence: float
    """Confidence level of the interval."""
    status: Literal["ok", "undefined_single_category", "insufficient_rows"]
    """`ok`, `undefined_single_category` (a one-category scale) or `insufficient_rows` (no unit with two ratings)."""


class BandVerdictOutput(OutputPart):
    """What a slice's agreement means for the gate."""

    status: Literal[
        "ok", "undefined_single_category", "insufficient_rows", "insufficient_positives"
    ]
    """`ok` or why there is no band."""
    band: Literal["ambiguous", "review", "dependable"] | None
    """The band of the point estimate, or null when `status` is not `ok`."""
    provisional: bool
    """True when a confidence interval reaches across a band edge, so more rows could move the slice to another band."""
    gate_eligible: bool
    """True when the slice may gate a release (status `ok` and band `review` or `dependable`)."""
    reason: str
    """One sentence saying why, for people."""


class ClassKappaOutput(OutputPart):
    """Kappa of one class against all the others (the raters' "is it this class?" agreement)."""

    category: str
    """The class."""
    first: int
    """Rows the first rater put in the class."""
    second: int
    """Rows the second rater put in the class."""
    both: int
    """Rows both raters put in the class."""
    kappa: CohenKappaOutput
    """Binary Cohen's kappa of "in the class" versus "not in the class"."""


class ConfusionMatrixOutput(OutputPart):
    """Counts of (first rating, second rating) pairs: rows are the first rater, columns the second."""

    categories: list[str]
    """Category of each row and column, in order."""
    counts: list[list[int]]
    """`counts[i][j]` rows where the first rater chose `categories[i]` and the second `categories[j]`."""


class BinaryAgreementOutput(OutputPart):
    """Two raters' answers to one yes/no question over the same rows."""

    n: int
    """Rows answered by both."""
    both_yes: int
    """Rows where both said yes."""
    only_first: int
    """Rows where only the first rater said yes."""
    only_second: int
    """Rows where only the second rater said yes."""
    both_no: int
    """Rows where both said no."""
    p_o: float | None
    """Share of rows with the same answer (null without rows)."""
    kappa: CohenKappaOutput
    """Cohen's kappa of the answers."""
    ac1: GwetACOutput
    """Gwet's AC1 of the answers (two categories: yes, no)."""
    status: Literal[
        "ok", "undefined_single_category", "insufficient_rows", "insufficient_positives"
    ]
    """`ok`; `insufficient_rows` (fewer than `min_rows` rows); `insufficient_positives` (fewer than `min_positives` rows where anyone said yes: kappa on a rare event swings on one row); `undefined_single_category` (all answers the same, when the positives guard is off)."""


class ToolAgreementOutput(OutputPart):
    """Agreement on whether one tool is required (or forbidden)."""

    tool: str
    """Tool name."""
    question: Literal["required", "forbidden"]
    """`required` or `forbidden`."""
    agreement: BinaryAgreementOutput
    """Counts, p_o, kappa, AC1 and status of the yes/no answers."""
    disagreeing_case_ids: list[str]
    """Cases where the two labellers answered differently."""


class FleissKappaOutput(OutputPart):
    """Fleiss' kappa and its parts."""

    n_units: int
    """Units with at least one rating."""
    n_pairable: int
    """Units with at least two ratings."""
    n_ratings: int
    """Ratings in all."""
    p_o: float | None
    """Mean share of agreeing rater pairs per pairable unit (Fleiss' `P-bar`)."""
    p_e: float | None
    """Chance agreement `sum over categories of p_j squared`."""
    kappa: float | None
    """`(p_o - p_e) / (1 - p_e)`."""
    status: Literal["ok", "undefined_single_category", "insufficient_rows"]
    """`ok`, `undefined_single_category` (every rating in one category) or `insufficient_rows` (no unit with two ratings)."""


class KrippendorffAlphaOutput(OutputPart):
    """Krippendorff's nominal alpha and its parts."""

    n_units: int
    """Units with at least two ratings (the only pairable ones)."""
    n_values: int
    """Pairable values `n` (ratings in those units)."""
    observed_agreement: float | None
    """`A_o = sum over c of o_{cc} / n`."""
    expected_agreement: float | None
    """`A_e = sum over c of n_c (n_c - 1) / (n (n - 1))`."""
    alpha: float | None
    """`1 - D_o / D_e` (equivalently `(A_o - A_e) / (1 - A_e)`)."""
    status: Literal["ok", "undefined_single_category", "insufficient_rows"]
    """`ok`, `undefined_single_category` (every pairable value equal, so `D_e = 0`) or `insufficient_rows` (no unit with two ratings)."""


class MultiRaterOutput(OutputPart):
    """Agreement over every usable label, when some rows had more than two labellers."""

    rows_over_two: int
    """Rows with three or more usable labels."""
    fleiss: FleissKappaOutput
    """Fleiss' kappa (Gwet's extension to unequal numbers of labels per row)."""
    krippendorff: KrippendorffAlphaOutput
    """Krippendorff's nominal alpha."""


class FeatureClusterOutput(OutputPart):
    """A feature over-represented among disagreeing rows."""

    feature: str
    """The feature (`orders.age_days>30`)."""
    in_disagreements: int
    """Disagreeing rows with the feature."""
    disagreements: int
    """Disagreeing rows."""
    in_rows: int
    """Rows with the feature, agreeing or not."""
    rows: int
    """Rows."""
    lift: float
    """`(in_disagreements / disagreements) / (in_rows / rows)`: how much more common the feature is among disagreements than overall."""
    p_value: float
    """One-sided Fisher exact (hypergeometric) p-value of seeing at least `in_disagreements` such rows by chance; uncorrected for the number of features tried."""


class ExclusionsOutput(OutputPart):
    """Labels and rows left out of a slice's agreement, and why."""

    adjudicator_labels: int
    """Adjudicator labels (not blind: they saw the disagreement)."""
    disagreement_labels: int
    """Labels that exist because of a disagreement."""
    single_label_rows: int
    """Cases with one usable label: nothing to compare."""
    no_overlap_reason_rows: int
    """Cases with two usable labels, none for calibration or audit."""


class SliceAgreementOutput(OutputPart):
    """Agreement of one slice under one guideline version."""

    slice: str
    """The slice."""
    guideline_version: str | None
    """The guideline version, or null when the slice has no usable labels."""
    current: bool
    """True for the slice's latest guideline version (the one that decides gating)."""
    rows: int
    """Double-labelled rows (Cohen pairs)."""
    labellers: int
    """Distinct labellers among the usable labels."""
    kappa: CohenKappaOutput
    """Cohen's kappa on the outcome class."""
    bootstrap: BootstrapCIOutput | None
    """Paired bootstrap interval of kappa, when requested."""
    ac1: GwetACOutput
    """Gwet's AC1 on the outcome (q = the 4 outcome classes)."""
    verdict: BandVerdictOutput
    """Band, provisional mark and gate eligibility."""
    per_class: list[ClassKappaOutput]
    """One-vs-rest kappa per outcome class."""
    confusion: ConfusionMatrixOutput
    """Outcome confusion matrix (rows: first label, columns: second)."""
    disagreeing_case_ids: list[str]
    """Cases whose two labels differ on the outcome."""
    tools: list[ToolAgreementOutput]
    """Per-tool agreement, required and forbidden separately."""
    multi_rater: MultiRaterOutput | None
    """Fleiss and Krippendorff, when a row had more than two labellers."""
    clusters: list[FeatureClusterOutput]
    """Case features over-represented among `disagreeing_case_ids`."""
    tool_disagreement_case_ids: list[str]
    """Cases whose labels differ on any tool's required or forbidden answer."""
    tool_clusters: list[FeatureClusterOutput]
    """Case features over-represented among `tool_disagreement_case_ids`."""
    exclusions: ExclusionsOutput
    """What was left out and why."""


class Agreement(CommandOutput):
    """`casework agreement`: agreement of every slice of a dataset, and which slices may gate."""

    output: Literal["agreement"] = "agreement"
    """Which output this is."""
    dataset: str
    """The dataset reference (`refunds@3`)."""
    hash: str
    """Content hash of that version."""
    slice: str | None
    """The `--slice` filter, if any."""
    guideline: str | None
    """The `--guideline` filter, if any."""
    grouping: str
    """One sentence saying how guideline versions were handled."""
    settings: AgreementSettingsOutput
    """The settings used."""
    slices: list[SliceAgreementOutput]
    """One entry per (slice, guideline version), sorted."""
    notes: list[str]
    """Other things a reader should know (labels left out, and why)."""
    gate_eligibility: dict[str, bool]
    """Per slice, on its current guideline version: whether it may gate a release."""

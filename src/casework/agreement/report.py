"""Agreement report of a dataset's raw labels, per slice and guideline version (never pooled).

Entry points: :func:`agreement_report` (cases and label records in, report out; no I/O),
:func:`report_from_facts` (the same from cases reduced to :class:`CaseFacts` and labels reduced to
:class:`~casework.agreement.grouping.CompactLabel`) and :func:`report_from_partition` (from labels
already grouped into rows as they streamed past, as :func:`casework.labelling.dataset_agreement`
reads them from a dataset; see :mod:`casework.agreement.grouping`).

Which labels count. Adjudicator labels never do (the adjudicator saw the disagreement), nor do
labels whose ``overlap_reason`` is ``disagreement`` (a row doubled because it was contested would
bias kappa). For each case and guideline version the remaining labels are ordered by role, time
and labeller; the row enters agreement when it holds at least two of them and one of them exists
for ``calibration`` or ``audit``. The first two labels form the Cohen pair; rows holding more feed
Fleiss' kappa and Krippendorff's alpha as well.
"""

from __future__ import annotations

import multiprocessing
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, NamedTuple

import numpy as np
import orjson

from casework.agreement.bands import BandEdges, BandVerdict, classify
from casework.agreement.binary import BinaryAgreement, binary_agreement
from casework.agreement.bootstrap import BootstrapCI, bootstrap_kappa
from casework.agreement.clusters import FeatureCluster, Scalar, disagreement_clusters, flatten
from casework.agreement.fleiss import FleissKappa, fleiss_kappa_from_ratings
from casework.agreement.grouping import (
    CompactLabel,
    Group,
    LabelGroups,
    Partition,
    Said,
    compact_label,
)
from casework.agreement.gwet import GwetAC, gwet_ac1
from casework.agreement.kappa import ClassKappa, CohenKappa, cohen_kappa, one_vs_rest_kappa
from casework.agreement.krippendorff import KrippendorffAlpha, krippendorff_alpha_nominal
from casework.agreement.table import ConfusionMatrix, confusion_matrix
from casework.dataset.parallel import parallel_workers
from casework.errors import InputErrors, Problem, UsageError
from casework.schema import OUTCOMES, Case, LabelRecord

__all__ = [
    "AgreementReport",
    "AgreementSettings",
    "CaseFacts",
    "Exclusions",
    "MultiRater",
    "SliceAgreement",
    "ToolAgreement",
    "agreement_report",
    "case_features",
    "check_duplicates",
    "report_from_facts",
    "report_from_partition",
    "version_sort_key",
]

_GUIDELINE_RE = re.compile(r"-g(\d+)$")


def version_sort_key(version: str) -> tuple[str, int, str]:
    """Order guideline versions by slice, then number (``refunds-g10`` after ``refunds-g9``).

    The one ordering of guideline versions; a version of another shape sorts by its name.
    """
    match = _GUIDELINE_RE.search(version)
    if match is None:
        return (version, -1, version)
    return (version[: match.start()], int(match.group(1)), version)


@dataclass(frozen=True)
class AgreementSettings:
    """Knobs of the report (the CLI fills them from ``[thresholds]`` and its options).

    Attributes:
        edges: Band edges (``kappa_gate``, ``kappa_dependable``).
        min_rows: Fewest double-labelled rows for a band (``kappa_min_rows``).
        min_positives: Fewest rows with a "yes" for a per-tool status ``ok`` (``kappa_min_positives``).
        bootstrap: Bootstrap resamples for the kappa interval (0: none).
        seed: Seed of the bootstrap.
        confidence: Confidence level of every interval.
        top_clusters: Disagreement clusters listed per slice.
    """

    edges: BandEdges = field(default_factory=BandEdges)
    min_rows: int = 10
    min_positives: int = 5
    bootstrap: int = 2000
    seed: int = 0
    confidence: float = 0.95
    top_clusters: int = 5


@dataclass(frozen=True)
class Exclusions:
    """Labels and rows left out of a slice's agreement, and why.

    Attributes:
        adjudicator_labels: Adjudicator labels (not blind: they saw the disagreement).
        disagreement_labels: Labels that exist because of a disagreement.
        single_label_rows: Cases with one usable label: nothing to compare.
        no_overlap_reason_rows: Cases with two usable labels, none for calibration or audit.
    """

    adjudicator_labels: int = 0
    disagreement_labels: int = 0
    single_label_rows: int = 0
    no_overlap_reason_rows: int = 0


@dataclass(frozen=True)
class ToolAgreement:
    """Agreement on whether one tool is required (or forbidden).

    Attributes:
        tool: Tool name.
        question: ``required`` or ``forbidden``.
        agreement: Counts, p_o, kappa, AC1 and status of the yes/no answers.
        disagreeing_case_ids: Cases where the two labellers answered differently.
    """

    tool: str
    question: Literal["required", "forbidden"]
    agreement: BinaryAgreement
    disagreeing_case_ids: tuple[str, ...]


@dataclass(frozen=True)
class MultiRater:
    """Agreement over every usable label, when some rows had more than two labellers.

    Attributes:
        rows_over_two: Rows with three or more usable labels.
        fleiss: Fleiss' kappa (Gwet's extension to unequal numbers of labels per row).
        krippendorff: Krippendorff's nominal alpha.
    """

    rows_over_two: int
    fleiss: FleissKappa
    krippendorff: KrippendorffAlpha


@dataclass(frozen=True)
class SliceAgreement:
    """Agreement of one slice under one guideline version.

    Attributes:
        slice: The slice.
        guideline_version: The guideline version, or ``None`` when the slice has no usable labels.
        current: True for the slice's latest guideline version (the one that decides gating).
        rows: Double-labelled rows (Cohen pairs).
        labellers: Distinct labellers among the usable labels.
        kappa: Cohen's kappa on the outcome class.
        bootstrap: Paired bootstrap interval of kappa, when requested.
        ac1: Gwet's AC1 on the outcome (q = the 4 outcome classes).
        verdict: Band, provisional mark and gate eligibility.
        per_class: One-vs-rest kappa per outcome class.
        confusion: Outcome confusion matrix (rows: first label, columns: second).
        disagreeing_case_ids: Cases whose two labels differ on the outcome.
        tools: Per-tool agreement, required and forbidden separately.
        multi_rater: Fleiss and Krippendorff, when a row had more than two labellers.
        clusters: Case features over-represented among ``disagreeing_case_ids``.
        tool_disagreement_case_ids: Cases whose labels differ on any tool's required or
            forbidden answer.
        tool_clusters: Case features over-represented among ``tool_disagreement_case_ids``.
        exclusions: What was left out and why.
    """

    slice: str
    guideline_version: str | None
    current: bool
    rows: int
    labellers: int
    kappa: CohenKappa
    bootstrap: BootstrapCI | None
    ac1: GwetAC
    verdict: BandVerdict
    per_class: tuple[ClassKappa, ...]
    confusion: ConfusionMatrix
    disagreeing_case_ids: tuple[str, ...]
    tools: tuple[ToolAgreement, ...]
    multi_rater: MultiRater | None
    clusters: tuple[FeatureCluster, ...]
    tool_disagreement_case_ids: tuple[str, ...]
    tool_clusters: tuple[FeatureCluster, ...]
    exclusions: Exclusions


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of every slice of a dataset.

    Attributes:
        dataset: The dataset reference (``refunds@3``).
        hash: Content hash of that version.
        slice: The ``--slice`` filter, if any.
        guideline: The ``--guideline`` filter, if any.
        grouping: One sentence saying how guideline versions were handled.
        settings: The settings used.
        slices: One entry per (slice, guideline version), sorted.
        notes: Other things a reader should know (labels left out, and why).
    """

    dataset: str
    hash: str
    slice: str | None
    guideline: str | None
    grouping: str
    settings: AgreementSettings
    slices: tuple[SliceAgreement, ...]
    notes: tuple[str, ...]

    def gate_eligibility(self) -> dict[str, bool]:
        """Whether each slice may gate a release, judged on its current guideline version."""
        return {s.slice: s.verdict.gate_eligible for s in self.slices if s.current}

    def as_json(self) -> dict[str, Any]:
        """The report as plain JSON-ready data."""
        data = asdict(self)
        data["gate_eligibility"] = self.gate_eligibility()
        return data


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def case_features(case: Case) -> dict[str, list[Scalar]]:
    """The values clustering looks at: leaves of ``situation.state`` and other case attributes.

    State leaves keep their path (``orders.age_days``); case attributes are prefixed ``case.``
    (split, source, satisfiable, provenance shape/transform/axis, injected adversity, fixture
    tools and failing fixtures, number of turns).
    """
    values: dict[str, list[Scalar]] = defaultdict(list)
    for path, value in flatten(case.situation.state):
        values[path].append(value)
    attrs: dict[str, Scalar] = {
        "case.split": case.split,
        "case.source": case.source,
        "case.satisfiable": case.satisfiable,
        "case.shape": case.provenance.shape,
        "case.transform": case.provenance.transform,
        "case.axis": case.provenance.axis,
        "case.unsatisfiable_kind": case.provenance.unsatisfiable_kind,
        "case.turns": len(case.situation.turns),
    }
    for key, attr in attrs.items():
        if attr is not None:
            values[key].append(attr)
    values["case.injected"].extend(i.kind for i in case.situation.injected)
    values["case.fixture"].extend(f.tool for f in case.situation.fixtures)
    values["case.fixture_error"].extend(f.tool for f in case.situation.fixtures if f.error)
    return {k: v for k, v in values.items() if v}


def _feature_key(features: Mapping[str, Sequence[Scalar]]) -> tuple[object, ...]:
    """Equal exactly when two cases' features are: ``1``, ``1.0`` and ``True`` stay apart."""
    return tuple(
        (key, tuple(v if type(v) is str else (type(v).__name__, repr(v)) for v in values))
        for key, values in features.items()
    )


def _state_key(case: Case) -> tuple[object, ...] | None:
    """Everything :func:`case_features` reads of a decoded case, as a hashable key."""
    try:
        state = orjson.dumps(case.situation.state, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # e.g. an integer past 64 bits: no key, the features are computed
        return None
    p = case.provenance
    sit = case.situation
    return (
        state,
        case.split,
        case.source,
        case.satisfiable,
        p.shape,
        p.transform,
        p.axis,
        p.unsatisfiable_kind,
        len(sit.turns),
        tuple(i.kind for i in sit.injected),
        tuple((f.tool, bool(f.error)) for f in sit.fixtures),
    )


class CaseFacts:
    """What agreement keeps of each case: its slice and its clustering features.

    Cases with equal features share one features object (copies and variants of a case usually
    have the same state), which keeps memory small and lets clustering work once per distinct
    object (:func:`casework.agreement.disagreement_clusters`). Picklable: a worker of a parallel
    scan fills one, the parent merges them in file order.

    With ``decoded=True`` (cases read from a dataset file, whose JSON holds no NaN, no infinity
    and no integer past 64 bits) a case whose state serialises to the same bytes, and whose other
    attributes are equal, reuses the features found before without walking its state again:
    orjson's serialisation costs a fifth of :func:`case_features` (measured).
    """

    def __init__(self, decoded: bool = False) -> None:
        self.slice_of: dict[str, str] = {}
        self.features_of: dict[str, dict[str, list[Scalar]]] = {}
        self.slices: set[str] = set()
        self._shared: dict[tuple[object, ...], dict[str, list[Scalar]]] = {}
        self._decoded = decoded
        self._by_state: dict[tuple[object, ...], dict[str, list[Scalar]]] = {}

    def add(self, case: Case) -> None:
        """Take one case (a later case with the same id replaces an earlier one)."""
        state_key = _state_key(case) if self._decoded else None
        features = self._by_state.get(state_key) if state_key is not None else None
        if features is None:
            features = case_features(case)
            features = self._shared.setdefault(_feature_key(features), features)
            if state_key is not None:
                self._by_state[state_key] = features
        self.slice_of[case.id] = case.slice
        self.features_of[case.id] = features
        self.slices.add(case.slice)

    def __getstate__(self) -> dict[str, Any]:
        # The state cache only saves work while cases arrive: it does not travel from workers.
        return {**self.__dict__, "_by_state": {}}

    def merge(self, other: CaseFacts) -> None:
        """Take the cases ``other`` saw, after those seen so far."""
        same: dict[int, dict[str, list[Scalar]]] = {}
        for key, features in other._shared.items():
            same[id(features)] = self._shared.setdefault(key, features)
        self.slice_of.update(other.slice_of)
        for case_id, features in other.features_of.items():
            self.features_of[case_id] = same.get(id(features), features)
        self.slices |= other.slices


def check_duplicates(labels: Sequence[LabelRecord | CompactLabel], labels_path: str) -> None:
    """Refuse a labeller's second label of one case under one guideline version.

    Raises:
        InputErrors: Every such label, located at its line of ``labels_path``.
    """
    seen: Counter[tuple[str, str, str]] = Counter()
    problems = []
    for i, rec in enumerate(labels):
        key = (rec.case_id, rec.labeller, rec.guideline_version)
        seen[key] += 1
        if seen[key] == 2:
            problems.append(
                Problem(
                    labels_path,
                    i + 1,
                    "labeller",
                    f"labelled case '{rec.case_id}' twice under guideline "
                    f"'{rec.guideline_version}'; agreement needs one label per person",
                    rec.labeller,
                    has_got=True,
                )
            )
    InputErrors.raise_if_any(problems)


def _tool_rows(
    ids: Sequence[str],
    labels: Sequence[Sequence[Said]],
    tools: Sequence[str],
    settings: AgreementSettings,
) -> tuple[list[ToolAgreement], list[bool]]:
    """Per-tool agreement (required and forbidden apart), and which rows differ on any tool."""
    n = len(ids)
    # Where each (tool, question) is answered yes by the first and by the second label: one pass
    # over the labels' tool names instead of one per tool and question.
    says: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    named: set[str] = set()
    for row, labs in enumerate(labels):
        for who, rec in enumerate(labs):
            named |= rec.required
            named |= rec.forbidden
            if who < 2:
                for name in rec.required:
                    says[name, "required", who].append(row)
                for name in rec.forbidden:
                    says[name, "forbidden", who].append(row)
    tool_rows = []
    tool_disagree = np.zeros(n, dtype=np.bool_)
    question: Literal["required", "forbidden"]
    for tool in sorted(set(tools) | named):
        for question in ("required", "forbidden"):
            a = np.zeros(n, dtype=np.bool_)
            b = np.zeros(n, dtype=np.bool_)
            a[says.get((tool, question, 0), [])] = True
            b[says.get((tool, question, 1), [])] = True
            agreement = binary_agreement(
                a,
                b,
                min_rows=settings.min_rows,
                min_positives=settings.min_positives,
                confidence=settings.confidence,
            )
            differ = a != b
            tool_disagree |= differ
            tool_rows.append(
                ToolAgreement(
                    tool, question, agreement, tuple(ids[i] for i in np.flatnonzero(differ))
                )
            )
    return tool_rows, tool_disagree.tolist()


def _slice_agreement(
    slice_name: str,
    version: str | None,
    group: Group,
    excluded: Exclusions,
    features_of: Mapping[str, Mapping[str, Sequence[Scalar]]],
    tools: Sequence[str],
    settings: AgreementSettings,
) -> SliceAgreement:
    ids = [case_id for case_id, _ in group.rows]
    labels = [labs for _, labs in group.rows]
    first = [r[0].outcome for r in labels]
    second = [r[1].outcome for r in labels]
    conf = settings.confidence
    kappa = _within_range(cohen_kappa(first, second, categories=OUTCOMES, confidence=conf))
    boot = None
    if settings.bootstrap > 0 and len(ids) >= 2:
        boot = bootstrap_kappa(
            first, second, n_resamples=settings.bootstrap, seed=settings.seed, confidence=conf
        )
    ac1 = gwet_ac1(list(zip(first, second, strict=True)), categories=OUTCOMES, confidence=conf)
    status = "insufficient_rows" if len(ids) < settings.min_rows else kappa.status
    intervals = [(kappa.ci_low, kappa.ci_high)] + ([(boot.low, boot.high)] if boot else [])
    verdict = classify(kappa.kappa, intervals, settings.edges, status=status)
    tool_rows, tool_disagree = _tool_rows(ids, labels, tools, settings)
    multi = None
    over_two = sum(1 for labs in labels if len(labs) > 2)
    if over_two:
        ratings = [[rec.outcome for rec in labs] for labs in labels]
        multi = MultiRater(
            over_two,
            fleiss_kappa_from_ratings(ratings, categories=OUTCOMES),
            krippendorff_alpha_nominal(ratings, categories=OUTCOMES),
        )
    outcome_differs = [x != y for x, y in zip(first, second, strict=True)]
    clusters, tool_clusters = disagreement_clusters(
        [features_of[i] for i in ids],
        [outcome_differs, tool_disagree],
        top=settings.top_clusters,
    )
    return SliceAgreement(
        slice=slice_name,
        guideline_version=version,
        current=False,
        rows=len(ids),
        labellers=len(group.labellers),
        kappa=kappa,
        bootstrap=boot,
        ac1=ac1,
        verdict=verdict,
        per_class=one_vs_rest_kappa(first, second, categories=OUTCOMES, confidence=conf),
        confusion=confusion_matrix(first, second, categories=OUTCOMES),
        disagreeing_case_ids=tuple(i for i, d in zip(ids, outcome_differs, strict=True) if d),
        tools=tuple(tool_rows),
        multi_rater=multi,
        clusters=clusters,
        tool_disagreement_case_ids=tuple(i for i, d in zip(ids, tool_disagree, strict=True) if d),
        tool_clusters=tool_clusters,
        exclusions=excluded,
    )


def _within_range(k: CohenKappa) -> CohenKappa:
    """κ with its interval clipped to [-1, 1], where the parameter lives.

    `cohen_kappa` keeps the asymptotic interval unclipped (as statsmodels prints it, and its tests
    compare); a report never shows a κ bound above 1, as `[0.71, 1.09]` did for κ 0.90.
    """
    if k.ci_low is None or k.ci_high is None:
        return k
    return replace(k, ci_low=max(-1.0, k.ci_low), ci_high=min(1.0, k.ci_high))


def agreement_report(
    cases: Sequence[Case],
    labels: Sequence[LabelRecord],
    *,
    dataset: str = "",
    hash: str = "",
    tools: Iterable[str] = (),
    slice: str | None = None,
    guideline: str | None = None,
    settings: AgreementSettings | None = None,
    labels_path: str = "labels.jsonl",
) -> AgreementReport:
    """Agreement per slice and guideline version from a dataset's cases and raw labels.

    Args:
        cases: The dataset's cases (slices and clustering features come from them).
        labels: Raw label records (``labels.jsonl``); labels of unknown cases are ignored.
        dataset: Dataset reference, for the report.
        hash: Content hash, for the report.
        tools: Declared tool names: each gets a required and a forbidden row per slice.
        slice: Report only this slice.
        guideline: Use only labels under this guideline version.
        settings: Thresholds and bootstrap settings.
        labels_path: How to name the labels file in errors.

    Raises:
        InputErrors: A labeller labelled the same case twice under one guideline version.
        UsageError: ``slice`` names no slice of the dataset, or ``guideline`` no label's version.
    """
    check_duplicates(labels, labels_path)
    facts = CaseFacts()
    for case in cases:
        facts.add(case)
    return report_from_facts(
        facts,
        [compact_label(rec) for rec in labels],
        dataset=dataset,
        hash=hash,
        tools=tools,
        slice=slice,
        guideline=guideline,
        settings=settings or AgreementSettings(),
    )


def report_from_facts(
    facts: CaseFacts,
    labels: Sequence[CompactLabel],
    *,
    dataset: str,
    hash: str,
    tools: Iterable[str],
    slice: str | None,
    guideline: str | None,
    settings: AgreementSettings,
) -> AgreementReport:
    """:func:`agreement_report` once the labels are checked and the cases reduced to facts.

    Raises:
        UsageError: ``slice`` names no slice of the cases, or ``guideline`` no label's version.
    """
    groups = LabelGroups(
        facts.slice_of, slice=slice, guideline=guideline, check=False, grouped=False
    )
    for rec in labels:
        groups.add(rec)
    return report_from_partition(
        facts,
        groups.finish(),
        dataset=dataset,
        hash=hash,
        tools=tools,
        slice=slice,
        guideline=guideline,
        settings=settings,
    )


def report_from_partition(
    facts: CaseFacts,
    part: Partition,
    *,
    dataset: str,
    hash: str,
    tools: Iterable[str],
    slice: str | None,
    guideline: str | None,
    settings: AgreementSettings,
) -> AgreementReport:
    """:func:`report_from_facts` of labels already grouped by :class:`LabelGroups`.

    ``part`` must come from a :class:`LabelGroups` given the same ``slice`` and ``guideline``.

    Raises:
        UsageError: ``slice`` names no slice of the cases, or ``guideline`` no label's version.
    """
    slices = sorted(facts.slices)
    if slice is not None and slice not in slices:
        raise UsageError(
            f"no case of {dataset or 'the dataset'} is in slice '{slice}' "
            f"(slices: {', '.join(slices) or 'none'}).",
            param="slice",
        )
    versions = sorted(part.versions, key=version_sort_key)
    if guideline is not None and guideline not in versions:
        raise UsageError(
            f"no label of {dataset or 'the dataset'} is under '{guideline}' "
            f"(versions: {', '.join(versions) or 'none'}).",
            param="guideline",
        )
    notes: list[str] = []
    jobs: list[_SliceJob] = []  # in report order; each is `_slice_agreement`'s arguments
    for slice_name in slices if slice is None else [slice]:
        keys = sorted(
            (k for k in part.groups if k[0] == slice_name), key=lambda k: version_sort_key(k[1])
        )
        if not keys and guideline is None:
            jobs.append(_SliceJob(slice_name, None, Group(), Exclusions(), True))
            notes.append(f"slice '{slice_name}' has no label records: no agreement to measure.")
        for key in keys:
            group = part.groups[key]
            excluded = Exclusions(
                part.adjudicator[key], part.contested[key], group.single, group.no_reason
            )
            jobs.append(_SliceJob(slice_name, key[1], group, excluded, key == keys[-1]))
    results = _slice_results(jobs, facts.features_of, list(tools), settings)
    return AgreementReport(
        dataset,
        hash,
        slice,
        guideline,
        _grouping(part, guideline),
        settings,
        tuple(results),
        tuple(notes + _exclusion_notes(part)),
    )


class _SliceJob(NamedTuple):
    """One (slice, guideline version) group to measure, and whether it is the slice's current one."""

    slice: str
    version: str | None
    group: Group
    excluded: Exclusions
    current: bool


#: Double-labelled rows from which the groups are measured on every core: at 50,000 cases the
#: groups took about 2.5 s in one process after the scan (bootstrap, clusters, per-tool rows).
PARALLEL_MIN_ROWS = 20_000

#: What forked workers measure: the jobs, the case features, the tools and the settings.
_SHARED: (
    tuple[Sequence[_SliceJob], Mapping[str, Mapping[str, Sequence[Scalar]]], list[str], Any] | None
) = None


def _measure(i: int) -> SliceAgreement:
    """Measure job ``i`` of :data:`_SHARED` (in this process or a forked worker)."""
    assert _SHARED is not None
    jobs, features_of, tools, settings = _SHARED
    job = jobs[i]
    result = _slice_agreement(
        job.slice, job.version, job.group, job.excluded, features_of, tools, settings
    )
    return replace(result, current=job.current)


def _slice_results(
    jobs: Sequence[_SliceJob],
    features_of: Mapping[str, Mapping[str, Sequence[Scalar]]],
    tools: list[str],
    settings: AgreementSettings,
) -> list[SliceAgreement]:
    """Every job's result, in order: on every core when there are many rows and several groups.

    Each group is measured alone (its numbers depend on nothing else: the bootstrap seeds its
    own generator), so the workers' results equal one process's. Workers are forked, reading
    the jobs from memory; the largest groups are handed out first, so the cores finish together.
    """
    global _SHARED
    rows = sum(len(job.group.rows) for job in jobs)
    workers = min(parallel_workers(), len(jobs))
    _SHARED = (jobs, features_of, tools, settings)
    try:
        if workers < 2 or rows < PARALLEL_MIN_ROWS:
            return [_measure(i) for i in range(len(jobs))]
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].group.rows))
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {i: pool.submit(_measure, i) for i in order}
            return [futures[i].result() for i in range(len(jobs))]
    finally:
        _SHARED = None


def _grouping(part: Partition, guideline: str | None) -> str:
    if guideline is not None:
        text = f"only labels under guideline '{guideline}'"
        if part.other_version:
            text += f" ({_count(part.other_version, 'label')} under other versions left out)"
        return text
    per_slice = Counter(k[0] for k in part.groups)
    if any(n > 1 for n in per_slice.values()):
        return (
            "grouped by slice and guideline version: versions are never pooled; "
            "the latest version of each slice decides gating"
        )
    return "grouped by slice and guideline version (one version per slice)"


def _exclusion_notes(part: Partition) -> list[str]:
    notes = []
    n_adj, n_dis = sum(part.adjudicator.values()), sum(part.contested.values())
    if n_adj:
        notes.append(f"{_count(n_adj, 'adjudicator label')} left out: adjudicators are not blind.")
    if n_dis:
        notes.append(
            f"{_count(n_dis, 'label')} from disagreement overlap left out: rows doubled because "
            "they were contested would bias kappa."
        )
    return notes

"""What runs say: metrics per slice, split and source; paired comparison; retiring dead cases.

Entry points: :func:`run_results` (`casework results show`), :func:`corrected_pass` (pass@1
corrected for the judge's measured error), :func:`compare_runs` (`casework results compare`, writes
`discriminates` into provenance via a release), :func:`retire_cases` (`casework dataset retire`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from casework.agreement._ppi import PPI_METHOD, PPIStratum, stratified_ppi
from casework.agreement._rates import (
    CLUSTER_BOOTSTRAP,
    ClusteredPart,
    CorrectedRate,
    cluster_corrected_rate,
)
from casework.dataset import load_dataset, release
from casework.dataset.lock import dataset_lock
from casework.errors import CaseworkError, UsageError
from casework.grading import Verdict
from casework.project import Project
from casework.runner.compare import Comparison, Retirement, compare_tallies, retirement
from casework.runner.metrics import (
    RETIRED_SPLIT,
    CaseTally,
    GroupMetrics,
    in_population,
    summarize,
)
from casework.runner.records import CheckCertification, LoadedRun, TrialRecord, tallies
from casework.schema import Case, VersionRecord

__all__ = [
    "CHECK_KIND_OF",
    "RETIRED",
    "SMOKE",
    "CompareResult",
    "CorrectedPass",
    "Estimator",
    "RetireResult",
    "RunResults",
    "TrialDecision",
    "compare_runs",
    "corrected_pass",
    "discriminates_update",
    "ppi_corrected",
    "retire_cases",
    "run_results",
    "trial_decisions",
]

SMOKE = RETIRED_SPLIT
#: Name of the group of retired cases (`results show`, the report), shown apart from the rest.
RETIRED = "retired:smoke"
#: How many system pairs a case's `provenance.discriminates` keeps (newest last).
KEEP_PAIRS = 5


def _source_group(source: str) -> str:
    return "synthetic" if source == "synthetic" else "real"


#: The certified check kind that decides each judged check (`outcome` reads the reply's outcome).
CHECK_KIND_OF: Mapping[str, str] = {
    "outcome": "outcome",
    "unsatisfiable": "outcome",
    "answer_facts": "answer_fact",
    "nl_assertions": "answer_fact",
    "rubric": "answer_fact",
}

#: How the judge-decided share of a pass rate is corrected (`[judge] estimator`).
Estimator = Literal["rogan-gladen", "ppi++"]

Certifications = Mapping[str, Mapping[str, CheckCertification]]
"""Certification counts per slice and check kind, as in the run header's ``judge.certification``."""


@dataclass(frozen=True)
class TrialDecision:
    """What decided one trial's (decided) verdict.

    Attributes:
        case_id: The case.
        slice: The case's slice.
        split: The case's split.
        source: The case's source.
        passed: The verdict.
        kinds: Check kinds of the judged checks the verdict rests on (see :data:`CHECK_KIND_OF`;
            a judged check of another name keeps its name); empty when programmatic checks
            decided it.
        trial: The trial's number (-1: unknown), which matches people's verdicts to it.
    """

    case_id: str
    slice: str
    split: str
    source: str
    passed: bool
    kinds: tuple[str, ...] = ()
    trial: int = -1


def _deciding_kinds(verdict: Verdict) -> tuple[str, ...]:
    """Kinds of the judged checks a verdict rests on, as :func:`casework.grading.combine` decides.

    A failure rests on the judge only when no programmatic check failed; a pass rests on every
    judged check.
    """
    if verdict.passed is False:
        failed = verdict.failures()
        deciding = [] if any(not c.judged for c in failed) else failed
    else:
        deciding = [c for c in verdict.checks if c.judged]
    return tuple(sorted({CHECK_KIND_OF.get(c.name, c.name) for c in deciding}))


def trial_decisions(
    trials: Iterable[TrialRecord], *, admissible_only: bool = False
) -> list[TrialDecision]:
    """What decided each decided trial (undetermined verdicts are left out, as in the tallies).

    Args:
        trials: Trial records.
        admissible_only: Keep only verdicts that may gate.
    """
    return [
        TrialDecision(
            t.case_id,
            t.slice,
            t.split,
            t.source,
            t.verdict.passed,
            _deciding_kinds(t.verdict),
            t.trial,
        )
        for t in trials
        if t.verdict.passed is not None and (t.verdict.admissible or not admissible_only)
    ]


@dataclass(frozen=True)
class CorrectedPass:
    """pass@1 of a group, raw and corrected for the judge's measured error.

    Attributes:
        group: Group name (`all`, `slice:refunds`…).
        rate: Raw and corrected rate with the corrected rate's interval (``corrected`` is
            ``None`` when not certified or not correctable).
        uncertified: ``slice/kind`` pairs whose judge-decided verdicts have no certification.
        uncorrectable: ``slice/kind`` pairs whose certification corrects nothing (a class
            without human verdicts, or a judge no better than chance).
        estimator: The estimator used: ``rogan-gladen`` or ``ppi++``.
        note: Why the configured estimator was not used (PPI++ without people's verdicts on
            the run's replies falls back to Rogan–Gladen); empty when it was.
        reviewed: Trials with people's verdicts the PPI++ estimate used (0 for Rogan–Gladen).
    """

    group: str
    rate: CorrectedRate
    uncertified: tuple[str, ...] = ()
    uncorrectable: tuple[str, ...] = ()
    estimator: Estimator = "rogan-gladen"
    note: str = ""
    reviewed: int = 0

    def describe(self) -> str:
        """One phrase: ``corrected pass@1 0.714 [0.620, 0.800] (raw 0.750)``, or why there is none."""
        raw = "–" if self.rate.raw is None else f"{self.rate.raw:.3f}"
        r = self.rate
        by = ", PPI++" if self.estimator == "ppi++" else ""
        if r.corrected is not None and r.low is not None and r.high is not None:
            return f"corrected pass@1 {r.corrected:.3f} [{r.low:.3f}, {r.high:.3f}] (raw {raw}{by})"
        if self.uncertified:
            return f"pass@1 {raw} (raw; judge not certified for {', '.join(self.uncertified)})"
        return f"pass@1 {raw} (raw; judge no better than chance on {', '.join(self.uncorrectable)})"


def _youden(c: CheckCertification) -> float:
    if c.tp + c.fn == 0 or c.tn + c.fp == 0:
        return float("-inf")  # an empty class: nothing measured, the weakest of all
    return c.tp / (c.tp + c.fn) + c.tn / (c.tn + c.fp) - 1


def _deciding_kind(d: TrialDecision, certs: Certifications) -> str | None:
    """The kind whose certification corrects a judged verdict (``None``: one is not certified).

    A verdict resting on several judged kinds is corrected with the kind whose certification
    has the lowest Youden index (TPR + TNR - 1): the weakest judgement it rests on.
    """
    held = certs.get(d.slice, {})
    if any(k not in held for k in d.kinds):
        return None
    return min(d.kinds, key=lambda k: (_youden(held[k]), k))


def _counts(c: CheckCertification) -> tuple[int, int, int, int]:
    return c.tp, c.fn, c.tn, c.fp


def corrected_pass(
    decisions: Sequence[TrialDecision],
    certification: Certifications,
    *,
    group: str = "all",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    estimator: Estimator = "rogan-gladen",
    reviewed: Mapping[tuple[str, int], bool] | None = None,
) -> CorrectedPass | None:
    """pass@1 of the decisions, with the judge-decided share corrected by Rogan–Gladen or PPI++.

    pass@1 weighs each trial by ``1 / (cases × its case's decided trials)``. Programmatically
    decided trials count as they are; judge-decided ones are grouped by slice and deciding check
    kind and their weighted pass share is corrected with that slice and kind's certification
    counts. With the same number of decided trials per case this is
    ``(programmatic passes + Σ judged_n × RG) / n``.

    The interval is a cluster bootstrap over cases that resamples the certification sample too
    (:func:`casework.agreement._rates.cluster_corrected_rate`): the trials of one case move
    together, so k trials of a case count as the evidence of one case, not of k.

    Args:
        decisions: Decided trials of the group (:func:`trial_decisions`).
        certification: Certification counts per slice and kind (the run header's).
        group: Name of the group.
        confidence: Confidence level of the interval.
        resamples: Bootstrap replicates of the interval.
        seed: Seed of the resampling.
        estimator: ``rogan-gladen`` (the certification's counts) or ``ppi++`` (people's verdicts
            on the run's own trials, :func:`ppi_corrected`; Rogan–Gladen, with a note, when a
            slice and kind the judge decided has none).
        reviewed: People's verdict per ``(case_id, trial)`` of the run
            (:func:`casework.runner.reviewed.reviewed_trials`), for PPI++.

    Returns:
        ``None`` when no judge decided any of the decisions; else the figure, whose
        ``corrected`` is ``None`` when a slice/kind the judge decided on is not certified or
        its certification corrects nothing.
    """
    if not any(d.kinds for d in decisions):
        return None
    note = ""
    if estimator == "ppi++":
        fitted = ppi_corrected(decisions, reviewed or {}, group=group, confidence=confidence)
        if isinstance(fitted, CorrectedPass):
            return fitted
        note = fitted
    figure = _rogan_gladen(decisions, certification, group, confidence, resamples, seed)
    return replace(figure, note=note) if note else figure


def _strata_key(d: TrialDecision) -> tuple[str, str] | None:
    return (d.slice, "+".join(d.kinds)) if d.kinds else None


def ppi_corrected(
    decisions: Sequence[TrialDecision],
    reviewed: Mapping[tuple[str, int], bool],
    *,
    group: str = "all",
    confidence: float = 0.95,
) -> CorrectedPass | str:
    """pass@1 of the decisions by stratified PPI++, or why it cannot be computed.

    One stratum per slice and the judged kinds a trial rests on (programmatic trials an exact
    stratum), pass@1's weights (each case counts once); the labelled sample of a stratum is its
    trials people reviewed (``reviewed``: their verdict, against the trial's own), and the
    variance is clustered by case (:func:`casework.agreement._ppi.stratified_ppi`).

    Returns:
        The figure (``estimator="ppi++"``), or a sentence naming the slices and kinds the judge
        decided without any reviewed trial (PPI++ has nothing to rectify them with).
    """
    per_case: dict[str, int] = defaultdict(int)
    for d in decisions:
        per_case[d.case_id] += 1
    order = {cid: i for i, cid in enumerate(sorted(per_case))}
    cases = len(order)
    weights: dict[tuple[str, str] | None, list[float]] = {}
    passes: dict[tuple[str, str] | None, list[float]] = {}
    trials: dict[tuple[str, str] | None, int] = defaultdict(int)
    labelled: dict[tuple[str, str], tuple[list[float], list[float], list[int]]] = {}
    for d in decisions:
        key = _strata_key(d)
        w = 1 / (cases * per_case[d.case_id])
        i = order[d.case_id]
        weights.setdefault(key, [0.0] * cases)[i] += w
        passes.setdefault(key, [0.0] * cases)[i] += w * d.passed
        trials[key] += 1
        if key is not None and (d.case_id, d.trial) in reviewed:
            y, f, c = labelled.setdefault(key, ([], [], []))
            y.append(float(reviewed[(d.case_id, d.trial)]))
            f.append(float(d.passed))
            c.append(i)
    missing = sorted(f"{k[0]}/{k[1]}" for k in weights if k is not None and k not in labelled)
    if missing:
        return (
            "PPI++ needs people's verdicts on this run's replies and has none for "
            + ", ".join(missing)
            + ": Rogan–Gladen used"
        )
    strata = [
        PPIStratum(weights[key], passes[key], trials[key], exact=True)
        if key is None
        else PPIStratum(weights[key], passes[key], trials[key], *labelled[key])
        for key in sorted(weights, key=str)
    ]
    fit = stratified_ppi(strata, confidence=confidence)
    raw = sum(d.passed / (cases * per_case[d.case_id]) for d in decisions)
    n, judged = len(decisions), sum(1 for d in decisions if d.kinds)
    rate = CorrectedRate(raw, fit.estimate, fit.low, fit.high, n, judged, PPI_METHOD)
    count = sum(len(v[0]) for v in labelled.values())
    return CorrectedPass(group, rate, estimator="ppi++", reviewed=count)


def _rogan_gladen(
    decisions: Sequence[TrialDecision],
    certification: Certifications,
    group: str,
    confidence: float,
    resamples: int,
    seed: int,
) -> CorrectedPass:
    per_case: dict[str, int] = defaultdict(int)
    for d in decisions:
        per_case[d.case_id] += 1
    order = {cid: i for i, cid in enumerate(sorted(per_case))}
    weights: dict[tuple[str, str] | None, list[float]] = {}
    passes: dict[tuple[str, str] | None, list[float]] = {}
    trials: dict[tuple[str, str] | None, int] = defaultdict(int)
    uncertified: set[str] = set()
    for d in decisions:
        key: tuple[str, str] | None = None
        if d.kinds:
            kind = _deciding_kind(d, certification)
            if kind is None:
                held = certification.get(d.slice, {})
                uncertified.update(f"{d.slice}/{k}" for k in d.kinds if k not in held)
                continue
            key = (d.slice, kind)
        w = 1 / (len(per_case) * per_case[d.case_id])
        i = order[d.case_id]
        weights.setdefault(key, [0.0] * len(order))[i] += w
        passes.setdefault(key, [0.0] * len(order))[i] += w * d.passed
        trials[key] += 1
    raw = sum(d.passed / (len(per_case) * per_case[d.case_id]) for d in decisions)
    n, judged = len(decisions), sum(1 for d in decisions if d.kinds)
    method = CLUSTER_BOOTSTRAP.format(resamples=resamples, seed=seed)
    if uncertified:
        blank = CorrectedRate(raw, None, None, None, n, judged, method)
        return CorrectedPass(group, blank, uncertified=tuple(sorted(uncertified)))
    rate = cluster_corrected_rate(
        [
            ClusteredPart(
                weights[key],
                passes[key],
                trials[key],
                None if key is None else _counts(certification[key[0]][key[1]]),
                () if key is None else certification[key[0]][key[1]].cases,
            )
            for key in sorted(weights, key=str)
        ],
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    if rate.corrected is not None:
        return CorrectedPass(group, rate)
    judged_keys = sorted(k for k in weights if k is not None)
    weak = [(s, k) for s, k in judged_keys if _youden(certification[s][k]) <= 0] or judged_keys
    return CorrectedPass(group, rate, uncorrectable=tuple(f"{s}/{k}" for s, k in weak))


@dataclass(frozen=True)
class RunResults:
    """Metrics of one run.

    Every figure but ``retired`` is over the one population the gate counts
    (:func:`casework.runner.in_population`: every case but the retired ones).

    Attributes:
        run: The run.
        overall: Every case of the population (the `all` row, the report's headline).
        by_slice: One group per slice.
        by_split: One group per split.
        by_source: `real` (mined and hand-written) and `synthetic`, separately.
        flaky: Cases whose verdict flips across trials (ids, sorted).
        inadmissible: Trials whose verdict rests on an uncalibrated judge.
        tallies: Per-case tallies (retired cases included).
        corrected: pass@1 corrected for the judge's measured error, per group name (only groups
            with judge-decided verdicts; empty when no judge decided any).
        retired: The retired cases (split `smoke`) that ran, as a group of their own (``None``
            when none ran).
    """

    run: LoadedRun
    overall: GroupMetrics
    by_slice: list[GroupMetrics]
    by_split: list[GroupMetrics]
    by_source: list[GroupMetrics]
    flaky: list[str]
    inadmissible: int
    tallies: dict[str, CaseTally] = field(default_factory=dict)
    corrected: dict[str, CorrectedPass] = field(default_factory=dict)
    retired: GroupMetrics | None = None

    @property
    def k(self) -> int:
        """Trials per case of the run."""
        return self.run.header.k

    def groups(self) -> list[GroupMetrics]:
        """Every group: overall, slices, splits, sources, then the retired cases apart."""
        apart = [self.retired] if self.retired is not None else []
        return [self.overall, *self.by_slice, *self.by_split, *self.by_source, *apart]


def _grouped(
    name: str, key: str, values: dict[str, CaseTally], k: int, seed: int
) -> list[GroupMetrics]:
    buckets: dict[str, list[CaseTally]] = defaultdict(list)
    for t in values.values():
        value = getattr(t, key)
        buckets[_source_group(value) if key == "source" else value].append(t)
    return [summarize(f"{name}:{group}", buckets[group], k, seed=seed) for group in sorted(buckets)]


def _corrected_groups(
    run: LoadedRun, estimator: Estimator, reviewed: Mapping[tuple[str, int], bool]
) -> dict[str, CorrectedPass]:
    """Corrected pass@1 of every group (named as the metrics' groups) a judge decided in."""
    every = trial_decisions(run.trials)
    if not any(d.kinds for d in every):
        return {}
    judge = run.header.judge
    certs = judge.certification if judge is not None else {}
    decisions = [d for d in every if in_population(d.split)]
    groups: dict[str, list[TrialDecision]] = {"all": decisions}
    for d in decisions:
        groups.setdefault(f"slice:{d.slice}", []).append(d)
    for d in decisions:
        groups.setdefault(f"split:{d.split}", []).append(d)
    for d in decisions:
        groups.setdefault(f"source:{_source_group(d.source)}", []).append(d)
    retired = [d for d in every if not in_population(d.split)]
    if retired:
        groups[RETIRED] = retired
    out = {}
    for name, members in groups.items():
        figure = corrected_pass(members, certs, group=name, estimator=estimator, reviewed=reviewed)
        if figure is not None:
            out[name] = figure
    return out


def run_results(
    run: LoadedRun,
    *,
    seed: int = 0,
    estimator: Estimator = "rogan-gladen",
    reviewed: Mapping[tuple[str, int], bool] | None = None,
) -> RunResults:
    """Compute pass@1, pass^k, pass@k, stability and CIs for a run, overall and per group.

    The groups hold the population the gate counts (:func:`casework.runner.in_population`);
    retired cases that ran are one group of their own, :attr:`RunResults.retired`.

    Where a judge decided verdicts, :attr:`RunResults.corrected` holds pass@1 corrected for the
    judge's measured error (:func:`corrected_pass`, with the run header's certification counts,
    or by PPI++ with people's verdicts on the run's trials, ``reviewed``).
    """
    per_case = tallies(run.trials)
    counted = {cid: t for cid, t in per_case.items() if in_population(t.split)}
    retired = [t for t in per_case.values() if not in_population(t.split)]
    k = run.header.k
    return RunResults(
        run=run,
        overall=summarize("all", list(counted.values()), k, seed=seed),
        by_slice=_grouped("slice", "slice", counted, k, seed),
        by_split=_grouped("split", "split", counted, k, seed),
        by_source=_grouped("source", "source", counted, k, seed),
        flaky=sorted(cid for cid, t in counted.items() if t.n >= 2 and 0 < t.c < t.n),
        inadmissible=sum(not t.verdict.admissible for t in run.trials if in_population(t.split)),
        tallies=per_case,
        corrected=_corrected_groups(run, estimator, reviewed or {}),
        retired=summarize(RETIRED, retired, k, seed=seed) if retired else None,
    )


@dataclass(frozen=True)
class CompareResult:
    """A paired comparison and what it wrote.

    Attributes:
        better: Label of the known-better system.
        worse: Label of the known-worse system.
        comparison: Discrimination, inverted cases, paired test.
        by_slice: Comparison restricted to each slice.
        release: The dataset release recording `discriminates`, if one was written.
    """

    better: str
    worse: str
    comparison: Comparison
    by_slice: dict[str, Comparison]
    release: VersionRecord | None = None

    @property
    def pair(self) -> str:
        """``better > worse``, as written into provenance."""
        return f"{self.better} > {self.worse}"


def _same_dataset(runs: Sequence[LoadedRun]) -> None:
    hashes = {r.header.dataset_hash for r in runs}
    if len(hashes) > 1:
        listing = ", ".join(
            f"{r.header.run_id} ({r.header.dataset_ref}, {r.header.dataset_hash[:12]})"
            for r in runs
        )
        raise UsageError(
            f"runs are on different dataset versions; compare runs of one version: {listing}."
        )


def discriminates_update(case: Case, pair: str, separated: bool) -> Case:
    """The case with ``pair`` recorded (newest last, at most 5) or removed from `discriminates`."""
    current = [p for p in case.provenance.discriminates if p != pair]
    if separated:
        current = [*current, pair][-KEEP_PAIRS:]
    if current == case.provenance.discriminates:
        return case
    provenance = case.provenance.model_copy(update={"discriminates": current})
    return case.model_copy(update={"provenance": provenance})


def _measured(case: Case) -> dict[str, object]:
    """What a run measures of a case: everything but provenance (which runs themselves write)."""
    return case.model_dump(mode="json", exclude={"provenance"})


def measures_same(a: Sequence[Case], b: Sequence[Case]) -> bool:
    """Whether two versions' cases measure the same thing: equal but for provenance."""
    return {c.id: _measured(c) for c in a} == {c.id: _measured(c) for c in b}


def _current_cases(project: Project, run: LoadedRun, what: str) -> list[Case]:
    """The dataset's current cases, provided the run measured the same content.

    A newer version whose cases differ from the run's only in provenance (a `compare` release
    recording `discriminates`, say) still counts as the same content.
    """
    name = run.header.dataset
    dataset = load_dataset(project, name)
    if dataset.hash == run.header.dataset_hash:
        return dataset.cases
    try:
        ran = load_dataset(project, f"{name}@{run.header.dataset_hash}").cases
    except CaseworkError:
        ran = None
    if ran is not None and measures_same(dataset.cases, ran):
        return dataset.cases
    hint = " (or do not write, to only compare)" if what == "compare" else ""
    raise UsageError(
        f"{what}: the runs are on {run.header.dataset_ref} ({run.header.dataset_hash[:12]}) but "
        f"datasets/{name} now holds {dataset.hash[:12]} with other cases; run the systems on the "
        f"current version first{hint}."
    )


def compare_runs(
    project: Project, better: LoadedRun, worse: LoadedRun, *, write: bool = True, seed: int = 0
) -> CompareResult:
    """Compare a known-better run with a known-worse run of the same dataset version, per case.

    With ``write``, every case's `provenance.discriminates` gains ``"BETTER > WORSE"`` when it
    separated the two (and loses it when it did not), as a new dataset release.

    Raises:
        UsageError: Runs on different dataset versions, the same system twice, or (with
            ``write``) runs not on the dataset's current content.
    """
    _same_dataset([better, worse])
    if better.label == worse.label:
        raise UsageError(
            f"compare: both runs are of '{better.label}'; compare two different systems "
            "(set `agent_version` when running them).",
            mentions=("agent_version",),
        )
    tb, tw = tallies(better.trials), tallies(worse.trials)
    overall = compare_tallies(tb, tw, seed=seed)
    slices = sorted({t.slice for t in tb.values()})
    by_slice = {
        s: compare_tallies(
            {k: v for k, v in tb.items() if v.slice == s},
            {k: v for k, v in tw.items() if v.slice == s},
            seed=seed,
        )
        for s in slices
    }
    result = CompareResult(better.label, worse.label, overall, by_slice)
    if not write:
        return result
    with dataset_lock(project, better.header.dataset):
        cases = _current_cases(project, better, "compare")
        separated = {d.case_id for d in overall.discriminating}
        compared = {d.case_id for d in (*overall.discriminating, *overall.inverted, *overall.tied)}
        updated = [
            discriminates_update(c, result.pair, c.id in separated) if c.id in compared else c
            for c in cases
        ]
        record = release(
            project,
            better.header.dataset,
            updated,
            f"compare: {result.pair} separates {len(separated)} of {overall.cases} cases",
            changes=[
                f"provenance.discriminates: '{result.pair}' on {len(separated)} case(s) (runs {better.header.run_id}, {worse.header.run_id})"
            ],
        )
    return CompareResult(result.better, result.worse, overall, by_slice, record)


@dataclass(frozen=True)
class RetireResult:
    """What `casework dataset retire` found and did.

    Attributes:
        retirement: Cases every system passes, and cases every system fails.
        moved: Case ids moved to the smoke split in this release.
        release: The new dataset version, if anything moved.
    """

    retirement: Retirement
    moved: list[str]
    release: VersionRecord | None

    @property
    def possible_label_errors(self) -> list[str]:
        """Cases every system failed in every trial: check their labels."""
        return self.retirement.all_fail


def retire_cases(
    project: Project, dataset: str, runs: Sequence[LoadedRun], *, dry_run: bool = False
) -> RetireResult:
    """Move cases that separate none of the compared systems to the `smoke` split, as a new version.

    Raises:
        UsageError: Fewer than two systems, runs of another dataset or version.
    """
    if len({r.label for r in runs}) < 2:
        raise UsageError(
            "retire: give runs of at least two different systems (`runs` A `runs` B).",
            mentions=("runs",),
        )
    wrong = [r.header.run_id for r in runs if r.header.dataset != dataset]
    if wrong:
        raise UsageError(f"retire: run(s) {', '.join(wrong)} are not of dataset '{dataset}'.")
    _same_dataset(runs)
    found = retirement([tallies(r.trials) for r in runs])
    with dataset_lock(project, dataset):
        cases = _current_cases(project, runs[0], "retire")
        retire = set(found.retire)
        moved = sorted(c.id for c in cases if c.id in retire and c.split != SMOKE)
        if dry_run or not moved:
            return RetireResult(found, moved, None)
        moving, all_pass, all_fail = set(moved), set(found.all_pass), set(found.all_fail)
        updated = [c.model_copy(update={"split": SMOKE}) if c.id in moving else c for c in cases]
        moved_pass = [cid for cid in moved if cid in all_pass]
        moved_fail = [cid for cid in moved if cid in all_fail]
        changes = []
        if moved_pass:
            changes.append(f"split -> smoke: {len(moved_pass)} case(s) every system passed")
        if moved_fail:
            changes.append(
                f"split -> smoke: {len(moved_fail)} case(s) every system failed (possible label errors: "
                + ", ".join(moved_fail[:20])
                + (" …" if len(moved_fail) > 20 else "")
                + ")"
            )
        systems = " vs ".join(sorted({r.label for r in runs}))
        record = release(
            project,
            dataset,
            updated,
            f"retire: {len(moved)} case(s) separate nothing ({systems})",
            changes=changes,
        )
    return RetireResult(found, moved, record)

"""What runs say: metrics per slice, split and source; paired comparison; retiring dead cases.

Entry points: :func:`run_results` (`casework results show`), :func:`compare_runs` (`casework compare`,
writes `discriminates` into provenance via a release), :func:`retire_cases` (`casework retire`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from casework.dataset import dataset_lock, load_dataset, release
from casework.errors import CaseworkError, UsageError
from casework.project import Project
from casework.runner.compare import Comparison, Retirement, compare_tallies, retirement
from casework.runner.metrics import CaseTally, GroupMetrics, summarize
from casework.runner.records import LoadedRun, tallies
from casework.schema import Case, VersionRecord

__all__ = [
    "SMOKE",
    "CompareResult",
    "RetireResult",
    "RunResults",
    "compare_runs",
    "discriminates_update",
    "retire_cases",
    "run_results",
]

SMOKE = "smoke"
#: How many system pairs a case's `provenance.discriminates` keeps (newest last).
KEEP_PAIRS = 5


def _source_group(source: str) -> str:
    return "synthetic" if source == "synthetic" else "real"


@dataclass(frozen=True)
class RunResults:
    """Metrics of one run.

    Attributes:
        run: The run.
        overall: Every case.
        by_slice: One group per slice.
        by_split: One group per split.
        by_source: `real` (mined and hand-written) and `synthetic`, separately.
        flaky: Cases whose verdict flips across trials (ids, sorted).
        inadmissible: Trials whose verdict rests on an uncalibrated judge.
        tallies: Per-case tallies.
    """

    run: LoadedRun
    overall: GroupMetrics
    by_slice: list[GroupMetrics]
    by_split: list[GroupMetrics]
    by_source: list[GroupMetrics]
    flaky: list[str]
    inadmissible: int
    tallies: dict[str, CaseTally] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """Trials per case of the run."""
        return self.run.header.k

    def groups(self) -> list[GroupMetrics]:
        """Every group: overall, slices, splits, sources."""
        return [self.overall, *self.by_slice, *self.by_split, *self.by_source]


def _grouped(
    name: str, key: str, values: dict[str, CaseTally], k: int, seed: int
) -> list[GroupMetrics]:
    buckets: dict[str, list[CaseTally]] = defaultdict(list)
    for t in values.values():
        value = getattr(t, key)
        buckets[_source_group(value) if key == "source" else value].append(t)
    return [summarize(f"{name}:{group}", buckets[group], k, seed=seed) for group in sorted(buckets)]


def run_results(run: LoadedRun, *, seed: int = 0) -> RunResults:
    """Compute pass@1, pass^k, pass@k, stability and CIs for a run, overall and per group."""
    per_case = tallies(run.trials)
    k = run.header.k
    return RunResults(
        run=run,
        overall=summarize("all", list(per_case.values()), k, seed=seed),
        by_slice=_grouped("slice", "slice", per_case, k, seed),
        by_split=_grouped("split", "split", per_case, k, seed),
        by_source=_grouped("source", "source", per_case, k, seed),
        flaky=sorted(cid for cid, t in per_case.items() if t.n >= 2 and 0 < t.c < t.n),
        inadmissible=sum(not t.verdict.admissible for t in run.trials),
        tallies=per_case,
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
    """What `casework retire` found and did.

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
        updated = [c.model_copy(update={"split": SMOKE}) if c.id in moved else c for c in cases]
        moved_pass = [cid for cid in moved if cid in set(found.all_pass)]
        moved_fail = [cid for cid in moved if cid in set(found.all_fail)]
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

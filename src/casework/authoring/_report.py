"""`casework shapes report`: the generator's own gate.

Acceptance rate (accepted by people over generated; a warning below one in five), rejection
reasons (by rule and by reviewers), human minutes per accepted case, coverage of shape × axis
with the empty cells named, and, given a known-better and a deliberately degraded agent, the
share of the accepted cases that separates them (runner + compare) and how stable their
verdicts are over the trials.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from casework.authoring._candidate import AXES
from casework.authoring._generate import read_runs
from casework.dataset import load_dataset
from casework.errors import Hint, UsageError
from casework.gate._quota import UnsatisfiableShare, unsatisfiable_shares
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.project import Project
from casework.review import ReviewTask, list_tasks
from casework.runner import RunRequest, compare_runs, run_agent
from casework.runner.metrics import stability
from casework.runner.records import LoadedRun, read_log, tallies
from casework.shapes import load_shapes

#: Below this acceptance rate the report warns.
ACCEPTANCE_FLOOR = Fraction(1, 5)
WARNING = "acceptance below 1 in 5: fix the shape list, not the generator's fluency"


@dataclass(frozen=True)
class Discrimination:
    """How the accepted cases separate a known-better from a degraded agent.

    Attributes:
        better: Label of the known-better run.
        worse: Label of the degraded run.
        runs: Run ids (better, worse).
        cases: Accepted cases graded in both runs.
        discriminating: Those the better agent passes more often.
        inverted: Those the degraded agent passes more often.
        trials: Trials per case.
        stability_better: Share of cases whose verdict is the same in every trial (better).
        stability_worse: The same for the degraded agent.
    """

    better: str
    worse: str
    runs: tuple[str, str]
    cases: int
    discriminating: list[str]
    inverted: list[str]
    trials: int
    stability_better: float | None
    stability_worse: float | None

    @property
    def rate(self) -> float:
        """Share of the accepted cases that separate the two agents."""
        return len(self.discriminating) / self.cases if self.cases else 0.0


@dataclass(frozen=True)
class AuthorReport:
    """The generator's gate for one shape set (see the module docstring)."""

    shape_set: str
    generated: int
    queued: int
    accepted: list[str]
    rejected_by_rule: dict[str, int]
    rejected_by_review: dict[str, int]
    pending: int
    review_seconds: float
    coverage: dict[str, dict[str, int]]
    empty_cells: list[str]
    quota: list[UnsatisfiableShare] = field(default_factory=list)
    discrimination: Discrimination | None = None

    @property
    def acceptance_rate(self) -> float:
        """Accepted by people over candidates generated."""
        return len(self.accepted) / self.generated if self.generated else 0.0

    @property
    def warning(self) -> str | None:
        """The low-acceptance warning, when it applies."""
        if self.generated and Fraction(len(self.accepted), self.generated) < ACCEPTANCE_FLOOR:
            return WARNING
        return None

    @property
    def minutes_per_accepted(self) -> float | None:
        """Human review minutes (every decided item) per accepted case."""
        return self.review_seconds / 60 / len(self.accepted) if self.accepted else None

    def as_json(self) -> dict[str, object]:
        """JSON-ready data."""
        d = self.discrimination
        return {
            "shape_set": self.shape_set,
            "generated": self.generated,
            "queued": self.queued,
            "accepted": len(self.accepted),
            "accepted_cases": self.accepted,
            "pending_review": self.pending,
            "acceptance_rate": self.acceptance_rate,
            "warning": self.warning,
            "rejected_by_rule": self.rejected_by_rule,
            "rejected_by_review": self.rejected_by_review,
            "human_minutes_per_accepted": self.minutes_per_accepted,
            "coverage": self.coverage,
            "empty_cells": self.empty_cells,
            "unsatisfiable": [
                {
                    "slice": q.slice,
                    "unsatisfiable": q.unsatisfiable,
                    "total": q.total,
                    "share": q.share,
                    "mature": q.mature,
                    "in_band": q.in_band,
                }
                for q in self.quota
            ],
            "discrimination": None
            if d is None
            else {
                "better": d.better,
                "worse": d.worse,
                "runs": list(d.runs),
                "cases": d.cases,
                "discriminating": d.discriminating,
                "inverted": d.inverted,
                "rate": d.rate,
                "trials": d.trials,
                "stability_better": d.stability_better,
                "stability_worse": d.stability_worse,
            },
        }


def _authored_tasks(project: Project, ids: set[str]) -> list[ReviewTask]:
    tasks = list_tasks(project, kind=GENERATED_CASE_KIND)
    return [t for t in tasks if t.subject in ids and t.payload.get("record_review")]


def _run(
    project: Project, dataset: str, spec: str, trials: int, slices: Sequence[str]
) -> LoadedRun:
    summary = run_agent(
        project,
        RunRequest(dataset=dataset, agent=spec, k=trials, slices=tuple(slices), store=False),
    )
    return read_log(summary.log, project.relative(summary.log))


def discrimination(
    project: Project, dataset: str, cases: Sequence[str], better: str, worse: str, trials: int
) -> Discrimination:
    """Run both agents ``trials`` times on the slices of ``cases`` and compare them on ``cases``.

    Raises:
        UsageError: Fewer than 2 trials, no accepted case in the dataset, or the runner's own
            usage errors (an unknown agent, the same system twice).
    """
    if trials < 2:
        raise UsageError(f"must be at least 2 for verdict stability. Got {trials}.", param="trials")
    present = {c.id: c for c in load_dataset(project, dataset).cases}
    wanted = [c for c in cases if c in present]
    if not wanted:
        raise UsageError(
            f"no accepted authored case is in dataset '{dataset}' yet; review candidates first."
        ).suggest(Hint("review list", params=(("kind", "generated-case"),)))
    slices = sorted({present[c].slice for c in wanted})
    b, w = (_run(project, dataset, spec, trials, slices) for spec in (better, worse))
    comparison = compare_runs(project, b, w, write=False).comparison
    keep = set(wanted)
    tb = {k: v for k, v in tallies(b.trials).items() if k in keep}
    tw = {k: v for k, v in tallies(w.trials).items() if k in keep}
    return Discrimination(
        b.label,
        w.label,
        (b.header.run_id, w.header.run_id),
        len(keep & set(tb) & set(tw)),
        sorted(d.case_id for d in comparison.discriminating if d.case_id in keep),
        sorted(d.case_id for d in comparison.inverted if d.case_id in keep),
        trials,
        stability(tb.values()),
        stability(tw.values()),
    )


def author_report(
    project: Project,
    shape_set: str,
    *,
    better: str | None = None,
    worse: str | None = None,
    trials: int = 3,
) -> AuthorReport:
    """The generator's gate of ``shape_set`` (with discrimination when both agents are given).

    Raises:
        UsageError: Unknown shape set; only one of ``better`` / ``worse``; see
            :func:`discrimination`.
    """
    shapes = load_shapes(project, shape_set, param="shapes")
    if (better is None) != (worse is None):
        raise UsageError(
            "give both `better` and `worse`, or neither.", param="better", mentions=("worse",)
        )
    runs = read_runs(project, shape_set)
    queued = {cid: (r.shape, r.axis) for r in runs for cid in r.queued}
    tasks = _authored_tasks(project, set(queued))
    accepted = sorted(t.subject for t in tasks if t.decision in ("accept", "edit"))
    by_rule: Counter[str] = Counter()
    for r in runs:
        by_rule.update(r.rejected)
    by_review = Counter((t.reason or "no reason") for t in tasks if t.decision == "reject")
    coverage = {s.id: dict.fromkeys(AXES, 0) for s in shapes.shapes}
    for cid in accepted:
        shape, axis = queued[cid]
        coverage.setdefault(shape, dict.fromkeys(AXES, 0))[axis] += 1
    empty = [f"{s} × {a}" for s, row in coverage.items() for a, n in row.items() if not n]
    datasets = sorted({r.dataset for r in runs})
    quota: list[UnsatisfiableShare] = []
    t = project.config.thresholds
    for name in datasets:
        quota += unsatisfiable_shares(
            load_dataset(project, name).cases, t.unsatisfiable_band, t.mature_slices
        )
    found = None
    if better is not None and worse is not None:
        if len(datasets) != 1:
            raise UsageError(
                f"discrimination needs the authored cases in one dataset. Got {len(datasets)}."
            )
        found = discrimination(project, datasets[0], accepted, better, worse, trials)
    return AuthorReport(
        shape_set=shapes.name,
        generated=sum(r.generated for r in runs),
        queued=len(queued),
        accepted=accepted,
        rejected_by_rule=dict(sorted(by_rule.items())),
        rejected_by_review=dict(sorted(by_review.items())),
        pending=sum(t.status == "open" for t in tasks),
        review_seconds=sum(t.seconds_on_screen or 0.0 for t in tasks if t.status == "decided"),
        coverage=coverage,
        empty_cells=empty,
        quota=quota,
        discrimination=found,
    )

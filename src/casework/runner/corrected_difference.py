"""Two runs of one release compared with the judge's measured error corrected, paired by case.

Where an LLM judge decided verdicts of either run, the raw difference in pass@1 carries the
judge's errors: a lenient judge on the new run and a strict one on the old (or the same judge on
replies it reads differently) moves the difference without any change in the agents. Entry
point: :func:`corrected_difference` (:func:`runs_corrected_difference` reads two runs for it), by Rogan–Gladen
(:func:`casework.agreement._rates.cluster_corrected_difference`, a paired cluster bootstrap) or
PPI++ (:func:`casework.agreement._ppi.ppi_difference`, influences paired by case), as
``[judge] estimator`` names; `casework results compare` and `casework gate --baseline` print it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from casework.agreement._ppi import PPIStratum, ppi_difference
from casework.agreement._rates import ClusteredPart, cluster_corrected_difference
from casework.project import Project
from casework.runner.analysis import (
    Certifications,
    Estimator,
    TrialDecision,
    _counts,
    _deciding_kind,
    _youden,
    trial_decisions,
)
from casework.runner.records import LoadedRun
from casework.runner.reviewed import reviewed_trials

__all__ = ["CorrectedDifference", "corrected_difference", "runs_corrected_difference"]

_Key = tuple[str, str] | None  # (slice, kind) of a judged part; None: programmatic verdicts


@dataclass(frozen=True)
class CorrectedDifference:
    """pass@1 of a run minus another's over their shared cases, raw and judge-corrected.

    Attributes:
        cases: Shared cases (each decided in both runs).
        raw: The raw difference (the verdicts as they are).
        corrected: The corrected difference (``None``: see ``problem``).
        low: Lower end of the corrected difference's interval (at least -1).
        high: Upper end (at most 1).
        estimator: ``rogan-gladen`` or ``ppi++``.
        method: How the interval was made.
        note: Why the configured estimator was not used (PPI++ without people's verdicts on
            both runs' replies falls back to Rogan–Gladen); empty when it was.
        problem: Why there is no corrected difference (a slice and kind the judge decided
            without a certification, or one no better than chance); empty when there is one.
        reviewed: Trials with people's verdicts PPI++ used, in each run (0, 0 for Rogan–Gladen).
    """

    cases: int
    raw: float
    corrected: float | None
    low: float | None
    high: float | None
    estimator: Estimator
    method: str
    note: str = ""
    problem: str = ""
    reviewed: tuple[int, int] = (0, 0)

    def describe(self) -> str:
        """One phrase: ``corrected difference -0.031 [-0.080, +0.015] (raw -0.020, Rogan–Gladen)``."""
        name = "PPI++" if self.estimator == "ppi++" else "Rogan–Gladen"
        if self.corrected is None or self.low is None or self.high is None:
            return f"difference {self.raw:+.3f} (raw; {self.problem})"
        return (
            f"corrected difference {self.corrected:+.3f} [{self.low:+.3f}, {self.high:+.3f}] "
            f"(raw {self.raw:+.3f}, {name})"
        )


@dataclass(frozen=True)
class _Run:
    """One run's decisions over the shared cases: per-case weights and passes per part."""

    weights: dict[_Key, list[float]]
    passes: dict[_Key, list[float]]
    trials: dict[_Key, int]
    uncertified: set[str]

    def raw(self) -> float:
        return sum(sum(v) for v in self.passes.values())


def _split(
    decisions: Sequence[TrialDecision],
    order: Mapping[str, int],
    key_of: Mapping[int, _Key],
) -> _Run:
    """Weights (each case 1 / cases, shared by its decided trials) and passes of each part."""
    per_case: dict[str, int] = defaultdict(int)
    for d in decisions:
        per_case[d.case_id] += 1
    cases = len(order)
    out = _Run({}, {}, defaultdict(int), set())
    for i, d in enumerate(decisions):
        key = key_of[i]
        w = 1 / (cases * per_case[d.case_id])
        out.weights.setdefault(key, [0.0] * cases)[order[d.case_id]] += w
        out.passes.setdefault(key, [0.0] * cases)[order[d.case_id]] += w * d.passed
        out.trials[key] += 1
    return out


def _rg_parts(
    decisions: Sequence[TrialDecision], order: Mapping[str, int], certs: Certifications
) -> tuple[list[ClusteredPart], set[str], list[str]]:
    """Rogan–Gladen parts of a run, its uncertified slice/kinds and those no better than chance."""
    uncertified: set[str] = set()
    keys: dict[int, _Key] = {}
    kept: list[TrialDecision] = []
    for d in decisions:
        key: _Key = None
        if d.kinds:
            kind = _deciding_kind(d, certs)
            if kind is None:
                held = certs.get(d.slice, {})
                uncertified.update(f"{d.slice}/{k}" for k in d.kinds if k not in held)
                continue
            key = (d.slice, kind)
        keys[len(kept)] = key
        kept.append(d)
    run = _split(kept, order, keys)
    parts = [
        ClusteredPart(
            run.weights[key],
            run.passes[key],
            run.trials[key],
            None if key is None else _counts(certs[key[0]][key[1]]),
            () if key is None else certs[key[0]][key[1]].cases,
        )
        for key in sorted(run.weights, key=str)
    ]
    judged = sorted(k for k in run.weights if k is not None)
    # A certification corrects nothing when an empty class or chance makes its Youden index <= 0.
    return parts, uncertified, [f"{s}/{k}" for s, k in judged if _youden(certs[s][k]) <= 0]


def _ppi_strata(
    decisions: Sequence[TrialDecision],
    order: Mapping[str, int],
    reviewed: Mapping[tuple[str, int], bool],
) -> tuple[list[PPIStratum], list[str], int]:
    """PPI++ strata of a run (slice and judged kinds), those without reviewed trials, and count."""
    keys = {i: ((d.slice, "+".join(d.kinds)) if d.kinds else None) for i, d in enumerate(decisions)}
    run = _split(decisions, order, keys)
    labelled: dict[tuple[str, str], tuple[list[float], list[float], list[int]]] = {}
    for i, d in enumerate(decisions):
        key = keys[i]
        if key is not None and (d.case_id, d.trial) in reviewed:
            y, f, c = labelled.setdefault(key, ([], [], []))
            y.append(float(reviewed[(d.case_id, d.trial)]))
            f.append(float(d.passed))
            c.append(order[d.case_id])
    missing = sorted(f"{k[0]}/{k[1]}" for k in run.weights if k is not None and k not in labelled)
    strata = [
        PPIStratum(run.weights[key], run.passes[key], run.trials[key], exact=True)
        if key is None
        else PPIStratum(run.weights[key], run.passes[key], run.trials[key], *labelled.get(key, ()))
        for key in sorted(run.weights, key=str)
    ]
    return strata, missing, sum(len(v[0]) for v in labelled.values())


def corrected_difference(
    run: Sequence[TrialDecision],
    baseline: Sequence[TrialDecision],
    run_certification: Certifications,
    baseline_certification: Certifications,
    *,
    estimator: Estimator = "rogan-gladen",
    run_reviewed: Mapping[tuple[str, int], bool] | None = None,
    baseline_reviewed: Mapping[tuple[str, int], bool] | None = None,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> CorrectedDifference | None:
    """pass@1 of ``run`` minus ``baseline``'s over their shared cases, corrected for the judge.

    The shared cases are those with a decided trial in both; each run's pass@1 weighs its
    trials as :func:`casework.runner.analysis.corrected_pass` does (each case counts once). With
    ``rogan-gladen`` each run's judge-decided trials are corrected with its own certification
    counts per slice and deciding kind, and the interval is a paired cluster bootstrap over the
    shared cases (a certification both runs carry is resampled once for both). With ``ppi++``
    people's verdicts on each run's own replies are the labelled samples (strata of slice and
    judged kinds) and the variance is paired by case; a stratum of either run without a
    reviewed trial falls back to Rogan–Gladen, and ``note`` says so.

    Args:
        run: Decided trials of the run (:func:`casework.runner.analysis.trial_decisions`).
        baseline: Decided trials of the baseline, on the same release.
        run_certification: The run header's certification counts.
        baseline_certification: The baseline header's.
        estimator: ``rogan-gladen`` or ``ppi++``.
        run_reviewed: People's verdict per ``(case_id, trial)`` of the run (PPI++).
        baseline_reviewed: The same for the baseline.
        confidence: Confidence level of the interval.
        resamples: Bootstrap replicates (Rogan–Gladen).
        seed: Seed of the resampling.

    Returns:
        ``None`` when no judge decided a shared trial of either run (the raw paired difference
        says everything); else the difference, whose ``corrected`` is ``None`` (with
        ``problem``) when a slice and kind the judge decided is not certified or not
        correctable.
    """
    ids = {d.case_id for d in run} & {d.case_id for d in baseline}
    a = [d for d in run if d.case_id in ids]
    b = [d for d in baseline if d.case_id in ids]
    if not any(d.kinds for d in (*a, *b)):
        return None
    order = {cid: i for i, cid in enumerate(sorted(ids))}
    note = ""
    if estimator == "ppi++":
        sa, missing_a, used_a = _ppi_strata(a, order, run_reviewed or {})
        sb, missing_b, used_b = _ppi_strata(b, order, baseline_reviewed or {})
        if not missing_a and not missing_b:
            ppi = ppi_difference(sa, sb, confidence=confidence)
            raw = _split(a, order, dict.fromkeys(range(len(a)))).raw()
            raw -= _split(b, order, dict.fromkeys(range(len(b)))).raw()
            return CorrectedDifference(
                len(order),
                raw,
                ppi.estimate,
                ppi.low,
                ppi.high,
                "ppi++",
                ppi.method,
                reviewed=(used_a, used_b),
            )
        missing = [f"{m} (run)" for m in missing_a] + [f"{m} (baseline)" for m in missing_b]
        note = (
            "PPI++ needs people's verdicts on both runs' replies and has none for "
            + ", ".join(missing)
            + ": Rogan–Gladen used"
        )
    pa, unc_a, weak_a = _rg_parts(a, order, run_certification)
    pb, unc_b, weak_b = _rg_parts(b, order, baseline_certification)
    raw = _split(a, order, dict.fromkeys(range(len(a)))).raw()
    raw -= _split(b, order, dict.fromkeys(range(len(b)))).raw()
    if unc_a or unc_b:
        named = [f"{u} (run)" for u in sorted(unc_a)] + [f"{u} (baseline)" for u in sorted(unc_b)]
        problem = "judge not certified for " + ", ".join(named)
        return CorrectedDifference(
            len(order), raw, None, None, None, "rogan-gladen", "", note, problem
        )
    fit = cluster_corrected_difference(
        pa, pb, confidence=confidence, resamples=resamples, seed=seed
    )
    problem = ""
    if fit.corrected is None:
        named = [f"{w} (run)" for w in weak_a] + [f"{w} (baseline)" for w in weak_b]
        problem = "judge no better than chance on " + (", ".join(named) or "a judged part")
    return CorrectedDifference(
        len(order), raw, fit.corrected, fit.low, fit.high, "rogan-gladen", fit.method, note, problem
    )


def runs_corrected_difference(
    project: Project, run: LoadedRun, baseline: LoadedRun
) -> CorrectedDifference | None:
    """:func:`corrected_difference` of two loaded runs, with the project's `[judge] estimator`.

    Every decided trial counts (as `casework results compare` counts them); for PPI++ people's
    verdicts on each run's replies come from the workbench
    (:func:`casework.runner.reviewed.reviewed_trials`).
    """
    estimator = project.config.judge.estimator
    ppi = estimator == "ppi++"

    def certs(r: LoadedRun) -> Certifications:
        return r.header.judge.certification if r.header.judge is not None else {}

    return corrected_difference(
        trial_decisions(run.trials),
        trial_decisions(baseline.trials),
        certs(run),
        certs(baseline),
        estimator=estimator,
        run_reviewed=reviewed_trials(project, run) if ppi else {},
        baseline_reviewed=reviewed_trials(project, baseline) if ppi else {},
    )

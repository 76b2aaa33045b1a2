"""The release gate, pure: (dataset checks, run results, thresholds) -> :class:`GateReport`.

No I/O here: :func:`casework.runner.gating.gate_run` gathers the inputs from each stage and the
workbench; this module only decides. Entry points: :func:`evaluate_gate`, :class:`GateInputs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from casework.project import GateConfig, ThresholdsConfig
from casework.runner.metrics import CaseTally

__all__ = ["GateFinding", "GateInputs", "GateReason", "GateReport", "evaluate_gate", "pass_rate"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class GateFinding:
    """One dataset check result handed to the gate (from `casework check`, agreement, leakage…).

    Attributes:
        check: Which check (`undeclared_tool`, `expired`, `synthetic_cap`, `leakage`…).
        severity: `error` fails the gate; `warning` is reported only.
        message: A sentence for people, naming the case or slice concerned.
        slice: The slice concerned, if the check is per slice.
    """

    check: str
    severity: Severity
    message: str
    slice: str | None = None


@dataclass(frozen=True)
class GateReason:
    """Why the gate failed (or what it warns about)."""

    code: str
    message: str
    slice: str | None = None

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


@dataclass(frozen=True)
class GateInputs:
    """Everything the gate decides on.

    Attributes:
        run_id: The run under decision.
        dataset_ref: Its dataset version.
        finished: Whether the run completed.
        findings: Dataset check results.
        slices: Slices of the run's cases.
        slice_kappa: Outcome kappa per slice (``None``: not measured).
        run: Per-case tallies of gating verdicts (admissible only, smoke split excluded).
        inadmissible: Trials per slice whose verdict rests on an inadmissible judge.
        baseline: Per-case tallies of the baseline run, if any.
        baseline_id: Id of the baseline run.
    """

    run_id: str
    dataset_ref: str
    finished: bool
    findings: Sequence[GateFinding] = ()
    slices: Sequence[str] = ()
    slice_kappa: Mapping[str, float | None] = field(default_factory=dict)
    run: Mapping[str, CaseTally] = field(default_factory=dict)
    inadmissible: Mapping[str, int] = field(default_factory=dict)
    baseline: Mapping[str, CaseTally] | None = None
    baseline_id: str | None = None


@dataclass(frozen=True)
class GateReport:
    """The gate's decision.

    Attributes:
        passed: True when no failure.
        failures: Reasons the gate failed.
        warnings: Things worth knowing that do not fail it.
        gating_slices: Slices that gated.
        pass_rate: pass@1 over the gating cases.
        baseline_pass_rate: The baseline's pass@1 over the same cases, if a baseline was given.
        cases: Gating cases with a decided verdict.
    """

    passed: bool
    failures: list[GateReason]
    warnings: list[GateReason]
    gating_slices: list[str]
    pass_rate: float | None
    baseline_pass_rate: float | None
    cases: int

    def lines(self) -> list[str]:
        """The decision as text lines, failures first."""
        head = "gate PASSED" if self.passed else f"gate FAILED ({len(self.failures)} reason(s))"
        return [head] + [f"FAIL {r}" for r in self.failures] + [f"warn {r}" for r in self.warnings]

    def github_annotations(self) -> list[str]:
        """GitHub Actions workflow commands: one ``::error`` / ``::warning`` line per reason."""

        def esc(text: str) -> str:
            return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

        out = [f"::error title=casework gate ({r.code})::{esc(r.message)}" for r in self.failures]
        out += [
            f"::warning title=casework gate ({r.code})::{esc(r.message)}" for r in self.warnings
        ]
        return out


def pass_rate(
    tallies: Mapping[str, CaseTally], case_ids: Sequence[str] | None = None
) -> float | None:
    """pass@1: mean per-case pass rate over cases with a decided verdict (optionally a subset)."""
    chosen = [tallies[c] for c in (case_ids if case_ids is not None else tallies) if c in tallies]
    graded = [t for t in chosen if t.n]
    return sum(t.rate for t in graded) / len(graded) if graded else None


def evaluate_gate(inputs: GateInputs, gate: GateConfig, thresholds: ThresholdsConfig) -> GateReport:
    """Decide the release.

    Fails on: an unfinished run; any error-level dataset finding; a gating slice with kappa
    below ``thresholds.kappa_gate``; a gating slice whose verdicts rest on an inadmissible judge;
    pass@1 below ``gate.min_pass_rate``; a drop against the baseline beyond ``gate.max_regression``
    (paired: over the cases both runs graded). An unmeasured kappa is a warning.
    """
    failures: list[GateReason] = []
    warnings: list[GateReason] = []
    gating = sorted(s for s in inputs.slices if not gate.gating_slices or s in gate.gating_slices)
    missing = sorted(set(gate.gating_slices) - set(inputs.slices))
    if missing:
        warnings.append(
            GateReason(
                "gating_slice_absent", f"gating slice(s) {', '.join(missing)} not in the run"
            )
        )
    if not inputs.finished:
        failures.append(
            GateReason("run_incomplete", f"run {inputs.run_id} did not finish; resume it first")
        )
    for f in inputs.findings:
        if f.slice is not None and f.slice not in gating and f.severity == "error":
            warnings.append(GateReason(f.check, f"{f.message} (slice does not gate)", f.slice))
            continue
        (failures if f.severity == "error" else warnings).append(
            GateReason(f.check, f.message, f.slice)
        )
    for s in gating:
        kappa = inputs.slice_kappa.get(s)
        if kappa is None:
            warnings.append(
                GateReason("kappa_unmeasured", f"slice '{s}': labeller agreement not measured", s)
            )
        elif kappa < thresholds.kappa_gate:
            failures.append(
                GateReason(
                    "kappa_below_gate",
                    f"slice '{s}': labeller kappa {kappa:.2f} is below {thresholds.kappa_gate:g}; "
                    "its guideline is ambiguous and it may not gate",
                    s,
                )
            )
        bad = inputs.inadmissible.get(s, 0)
        if bad:
            failures.append(
                GateReason(
                    "judge_inadmissible",
                    f"slice '{s}': {bad} verdict(s) rest on a judge not calibrated for this slice "
                    "(run `casework judge calibrate --slice " + s + "`)",
                    s,
                )
            )
    gating_cases = [
        cid for cid, t in inputs.run.items() if t.slice in gating and t.split != "smoke"
    ]
    rate = pass_rate(inputs.run, gating_cases)
    graded = sum(1 for cid in gating_cases if inputs.run[cid].n)
    if rate is None:
        failures.append(
            GateReason("no_verdicts", "no gating case has a decided, admissible verdict")
        )
    elif gate.min_pass_rate is not None and rate < gate.min_pass_rate:
        failures.append(
            GateReason(
                "pass_rate", f"pass@1 {rate:.3f} is below the minimum {gate.min_pass_rate:g}"
            )
        )
    base_rate = None
    if inputs.baseline is not None:
        shared = [
            c
            for c in gating_cases
            if c in inputs.baseline and inputs.baseline[c].n and inputs.run[c].n
        ]
        now, base_rate = pass_rate(inputs.run, shared), pass_rate(inputs.baseline, shared)
        if now is not None and base_rate is not None:
            drop = base_rate - now
            if drop > gate.max_regression:
                failures.append(
                    GateReason(
                        "regression",
                        f"pass@1 fell from {base_rate:.3f} ({inputs.baseline_id}) to {now:.3f} on "
                        f"{len(shared)} shared cases: a drop of {drop:.3f} > {gate.max_regression:g}",
                    )
                )
            for s in gating:
                ids = [c for c in shared if inputs.run[c].slice == s]
                a, b = pass_rate(inputs.run, ids), pass_rate(inputs.baseline, ids)
                if a is not None and b is not None and b - a > gate.max_regression:
                    warnings.append(
                        GateReason(
                            "slice_regression",
                            f"slice '{s}': pass@1 {b:.3f} -> {a:.3f} on {len(ids)} cases",
                            s,
                        )
                    )
        else:
            warnings.append(
                GateReason("baseline_disjoint", "baseline shares no graded case with the run")
            )
    return GateReport(
        passed=not failures,
        failures=failures,
        warnings=warnings,
        gating_slices=gating,
        pass_rate=rate,
        baseline_pass_rate=base_rate,
        cases=graded,
    )

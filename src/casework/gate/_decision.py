"""The release decision, pure: (dataset checks, run results, thresholds) -> :class:`GateReport`.

No I/O here: :func:`casework.gate.gate_run` gathers the inputs from each stage and the workbench;
this module only decides, as a list of named rules (:data:`RULES`), each testable alone.
Entry points: :func:`evaluate_gate`, :class:`GateInputs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, NamedTuple

from casework.errors import Hint, HintRenderer, hint_as_command, next_step
from casework.gate._statistical import (
    FLOOR_INTERVAL,
    BaselineComparison,
    Decision,
    case_values,
    compare_with_baseline,
    floor_interval,
    rule_name,
)
from casework.project import GateConfig, ThresholdsConfig
from casework.runner import CorrectedPass
from casework.runner.analysis import Estimator, TrialDecision, corrected_pass
from casework.runner.corrected_difference import CorrectedDifference, corrected_difference
from casework.runner.metrics import CaseTally, in_population
from casework.runner.records import CheckCertification

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class GateFinding:
    """One dataset check result handed to the gate (from `casework dataset check`, agreement, leakage…).

    Attributes:
        check: Which check (`undeclared_tool`, `expired`, `synthetic_cap`, `leakage`…).
        severity: `error` fails the gate; `warning` is reported only.
        message: A sentence for people, naming the case or slice concerned.
        slice: The slice concerned, if the check is per slice.
        hint: The step that fixes it, as data, or ``None``.
    """

    check: str
    severity: Severity
    message: str
    slice: str | None = None
    hint: Hint | None = None


@dataclass(frozen=True)
class GateReason:
    """Why the gate failed (or what it warns about), and the step that fixes it as data."""

    code: str
    message: str
    slice: str | None = None
    hint: Hint | None = None

    def render(self, hint: HintRenderer | None = hint_as_command) -> str:
        """``[code] message``, then the next step as ``hint`` spells it (``None``: left out)."""
        if self.hint is None or hint is None:
            return f"[{self.code}] {self.message}"
        return f"[{self.code}] {self.message.rstrip('.')}. {next_step(self.hint, hint)}"

    def __str__(self) -> str:
        return self.render()


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
        dataset_version: The release number whose content the run was on (``None``: its content
            matches no release, e.g. an unreleased working tree).
        latest_version: The dataset's latest release number (``None``: never released).
        allow_old_version: Why a run on an older release may still gate (``None``: it may not).
        same_as_latest: The run's release differs from the latest only in provenance (a
            `compare` release recording `discriminates`): it measures the latest cases.
        decisions: What decided each gating verdict (admissible, decided), for the corrected
            pass rate; empty: every verdict counts as it is.
        certification: The judge's certification counts per slice and check kind (the run
            header's), which correct the judge-decided verdicts.
        imported_from: The agent spec of a run imported from another tool's results
            (``import:tau:…``); ``None`` for a run casework graded.
        estimator: How the judge-decided share is corrected (`[judge] estimator`).
        reviewed: People's verdict per ``(case_id, trial)`` of the run, for PPI++.
        baseline_decisions: What decided each admissible, decided verdict of the baseline, for
            the corrected difference.
        baseline_certification: The baseline header's certification counts.
        baseline_reviewed: People's verdict per ``(case_id, trial)`` of the baseline, for PPI++.
        baseline_inadmissible: Baseline trials per slice whose verdict rests on an
            inadmissible judge (left out of its tallies, so a comparison with it fails closed).
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
    dataset_version: int | None = None
    latest_version: int | None = None
    allow_old_version: str | None = None
    same_as_latest: bool = False
    decisions: Sequence[TrialDecision] = ()
    certification: Mapping[str, Mapping[str, CheckCertification]] = field(default_factory=dict)
    imported_from: str | None = None
    estimator: Estimator = "rogan-gladen"
    reviewed: Mapping[tuple[str, int], bool] = field(default_factory=dict)
    baseline_decisions: Sequence[TrialDecision] = ()
    baseline_certification: Mapping[str, Mapping[str, CheckCertification]] = field(
        default_factory=dict
    )
    baseline_reviewed: Mapping[tuple[str, int], bool] = field(default_factory=dict)
    baseline_inadmissible: Mapping[str, int] = field(default_factory=dict)


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
        corrected: pass@1 over the gating cases corrected for the judge's measured error, when
            a judge decided gating verdicts (``pass_rate`` stays the raw figure).
        decision: ``ship`` (no failure and nothing inconclusive), ``block`` (a failure other
            than an inconclusive result) or ``inconclusive`` (the comparison with the baseline
            or the floor's interval cannot decide; ``passed`` then follows
            ``[gate] inconclusive``).
        comparison: The run against the baseline, paired by case (``None``: no baseline, or
            no shared case).
        inconclusive_policy: ``[gate] inconclusive``: whether an inconclusive result fails.
    """

    passed: bool
    failures: list[GateReason]
    warnings: list[GateReason]
    gating_slices: list[str]
    pass_rate: float | None
    baseline_pass_rate: float | None
    cases: int
    corrected: CorrectedPass | None = None
    decision: Decision = "ship"
    comparison: BaselineComparison | None = None
    inconclusive_policy: str = "fail"

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


@dataclass(frozen=True)
class GateContext:
    """What every rule reads: the inputs, the configuration and the gating slices and cases.

    Attributes:
        inputs: Everything gathered for the run.
        gate: The ``[gate]`` configuration.
        thresholds: The ``[thresholds]`` configuration.
        gating: Slices that gate (configured, else every slice of the run).
        gating_cases: Case ids of the run in gating slices and in the population every figure
            counts (:func:`casework.runner.in_population`: retired cases left out).
        corrected: pass@1 of the gating cases corrected for the judge's measured error
            (``None``: no judge decided a gating verdict).
    """

    inputs: GateInputs
    gate: GateConfig
    thresholds: ThresholdsConfig
    gating: list[str]
    gating_cases: list[str]
    corrected: CorrectedPass | None = None

    @cached_property
    def comparison(self) -> BaselineComparison | None:
        """The run against the baseline over the shared gating cases (``None``: no baseline)."""
        base = self.inputs.baseline
        if base is None:
            return None
        return compare_with_baseline(
            self.inputs.run,
            base,
            self.shared_with_baseline(),
            self.gating,
            self.gate,
            corrected=self.corrected_difference,
        )

    @cached_property
    def corrected_difference(self) -> CorrectedDifference | None:
        """pass@1 of the run minus the baseline's over the shared gating cases, judge-corrected.

        ``None`` without a baseline or when no judge decided a shared gating verdict of either.
        """
        shared = set(self.shared_with_baseline())
        if not shared:
            return None
        i = self.inputs
        return corrected_difference(
            [d for d in i.decisions if d.case_id in shared],
            [d for d in i.baseline_decisions if d.case_id in shared],
            i.certification,
            i.baseline_certification,
            estimator=i.estimator,
            run_reviewed=i.reviewed,
            baseline_reviewed=i.baseline_reviewed,
        )

    @classmethod
    def of(cls, inputs: GateInputs, gate: GateConfig, thresholds: ThresholdsConfig) -> GateContext:
        """The context for ``inputs``: works out the gating slices, cases and corrected rate once."""
        gating = sorted(
            s for s in inputs.slices if not gate.gating_slices or s in gate.gating_slices
        )
        cases = [
            cid for cid, t in inputs.run.items() if t.slice in gating and in_population(t.split)
        ]
        chosen = set(cases)
        gated = [d for d in inputs.decisions if d.case_id in chosen]
        corrected = corrected_pass(
            gated, inputs.certification, estimator=inputs.estimator, reviewed=inputs.reviewed
        )
        return cls(inputs, gate, thresholds, gating, cases, corrected)

    def shared_with_baseline(self) -> list[str]:
        """Gating cases both the run and the baseline graded (empty without a baseline)."""
        base = self.inputs.baseline
        if base is None:
            return []
        run = self.inputs.run
        return [c for c in self.gating_cases if c in base and base[c].n and run[c].n]


class Ruling(NamedTuple):
    """One thing a rule found: a failure or a warning."""

    severity: Severity
    reason: GateReason


#: A gate rule: reads the context, yields rulings (nothing when all is well).
GateRule = Callable[[GateContext], Iterator[Ruling]]


def _fail(code: str, message: str, slice: str | None = None, hint: Hint | None = None) -> Ruling:
    return Ruling("error", GateReason(code, message, slice, hint))


def _warn(code: str, message: str, slice: str | None = None) -> Ruling:
    return Ruling("warning", GateReason(code, message, slice))


def rule_gating_slices_present(ctx: GateContext) -> Iterator[Ruling]:
    """A configured gating slice that the run does not contain fails: it was never tested."""
    missing = sorted(set(ctx.gate.gating_slices) - set(ctx.inputs.slices))
    if missing:
        yield _fail(
            "gating_slice_absent",
            f"gating slice(s) {', '.join(missing)} not in the run: a slice that gates must be run",
        )


def rule_released_version(ctx: GateContext) -> Iterator[Ruling]:
    """A run must be on a released version: the latest, unless an old one is allowed, with a reason.

    A run whose content matches no release (an unreleased working tree) fails; so does a run on
    an older release, whose successor may fail checks that the old one passed, unless the two
    differ only in provenance.
    """
    i = ctx.inputs
    if i.dataset_version is None:
        yield _fail(
            "unreleased_version",
            f"run {i.run_id} is on {i.dataset_ref}, whose content matches no release; "
            "release the dataset and run on the release",
        )
    elif (
        i.latest_version is not None
        and i.dataset_version != i.latest_version
        and not i.same_as_latest
    ):
        where = (
            f"run {i.run_id} is on release #{i.dataset_version}, not the latest #{i.latest_version}"
        )
        if i.allow_old_version:
            yield _warn("old_version", f"{where}; allowed: {i.allow_old_version}")
        else:
            yield _fail("old_version", f"{where}; run on the latest release")


def rule_run_finished(ctx: GateContext) -> Iterator[Ruling]:
    """An unfinished run fails."""
    if not ctx.inputs.finished:
        yield _fail("run_incomplete", f"run {ctx.inputs.run_id} did not finish; resume it first")


def rule_dataset_findings(ctx: GateContext) -> Iterator[Ruling]:
    """Error-level dataset findings fail (a finding in a slice that does not gate only warns)."""
    for f in ctx.inputs.findings:
        if f.slice is not None and f.slice not in ctx.gating and f.severity == "error":
            yield _warn(f.check, f"{f.message} (slice does not gate)", f.slice)
        else:
            yield Ruling(f.severity, GateReason(f.check, f.message, f.slice, f.hint))


def rule_labeller_agreement(ctx: GateContext) -> Iterator[Ruling]:
    """A gating slice whose labeller kappa is below the gate fails; an unmeasured one warns."""
    for s in ctx.gating:
        kappa = ctx.inputs.slice_kappa.get(s)
        if kappa is None:
            yield _warn("kappa_unmeasured", f"slice '{s}': labeller agreement not measured", s)
        elif kappa < ctx.thresholds.kappa_gate:
            yield _fail(
                "kappa_below_gate",
                f"slice '{s}': labeller kappa {kappa:.2f} is below {ctx.thresholds.kappa_gate:g}; "
                "its guideline is ambiguous and it may not gate",
                s,
            )


def rule_judge_admissible(ctx: GateContext) -> Iterator[Ruling]:
    """A gating slice with verdicts that rest on an inadmissible judge fails."""
    for s in ctx.gating:
        bad = ctx.inputs.inadmissible.get(s, 0)
        if bad:
            yield _fail(
                "judge_inadmissible",
                f"slice '{s}': {bad} verdict(s) rest on a judge not certified for this slice "
                "and check (docs/judge.md)",
                s,
                Hint("judge sample", why="to have people grade its verdicts, then certify it"),
            )


def rule_imported_run(ctx: GateContext) -> Iterator[Ruling]:
    """A run imported from another tool's results fails: its verdicts carry no per-check evidence.

    casework cannot see which check failed, whether a judge decided, or what the tool's grader
    was certified for, so the gate fails closed; the pass rates are still reported.
    """
    if ctx.inputs.imported_from is not None:
        yield _fail(
            "imported_run",
            f"run {ctx.inputs.run_id} was imported ({ctx.inputs.imported_from}): its verdicts "
            "carry no per-check evidence casework can check",
            hint=Hint("run", why="to run the agent itself, then gate that run"),
        )


def rule_undetermined(ctx: GateContext) -> Iterator[Ruling]:
    """Undetermined trials of gating cases fail, per slice: an oracle that could not decide is no pass.

    A trial is undetermined when its case's oracle could not be evaluated (a rubric with no
    judge, a malformed matcher, an unknown grader); leaving it out of pass@1 would let the gate
    pass on the trials that could be decided.
    """
    by_slice: dict[str, list[CaseTally]] = {}
    for cid in ctx.gating_cases:
        tally = ctx.inputs.run[cid]
        if tally.undetermined:
            by_slice.setdefault(tally.slice, []).append(tally)
    for s, open_cases in sorted(by_slice.items()):
        trials = sum(t.undetermined for t in open_cases)
        ids = sorted(t.case_id for t in open_cases)
        shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
        yield _fail(
            "undetermined",
            f"slice '{s}': {trials} trial(s) of {len(ids)} gating case(s) are undetermined "
            f"({shown}): their oracle could not decide (a rubric needs a judge)",
            s,
            Hint("report", why="to see the checks' evidence"),
        )


def rule_pass_rate(ctx: GateContext) -> Iterator[Ruling]:
    """No decided gating verdict fails; pass@1 below ``gate.min_pass_rate`` fails.

    Where a judge decided gating verdicts, the floor is checked on pass@1 corrected for its
    measured error (and the message says so). Verdicts whose judge error the run does not record
    (no certification in its header: a log from before certification, or a hand-made one) cannot
    be corrected, so the gate fails closed on them.
    """
    values = case_values(ctx.inputs.run, ctx.gating_cases, ctx.gate)
    rate = sum(values) / len(values) if values else None
    floor = ctx.gate.min_pass_rate
    if floor is None:
        yield _fail(
            "no_floor",
            "no minimum pass rate is configured ([gate] min_pass_rate): "
            "a gate without a floor passes an agent that answers nothing",
        )
    fixed = ctx.corrected
    if fixed is not None and fixed.rate.corrected is None:
        yield _fail(
            "judge_not_corrected",
            f"{fixed.describe()}: the judge's measured error is not recorded on the run, so its "
            "verdicts cannot be corrected",
            hint=Hint("judge certify", why="then run again"),
        )
    if rate is None:
        yield _fail("no_verdicts", "no gating case has a decided, admissible verdict")
    elif fixed is not None and fixed.rate.corrected is not None:
        if floor is not None and fixed.rate.corrected < floor:
            yield _fail(
                "pass_rate",
                f"{fixed.describe()} is below the minimum {floor:g} "
                "(corrected for the judge's measured error)",
            )
        elif floor is not None and ctx.gate.floor_on == "lower_bound":
            low = fixed.rate.low
            if low is not None and low < floor:
                yield _inconclusive(
                    ctx,
                    "pass_rate_inconclusive",
                    f"{fixed.describe()}: its interval's lower bound {low:.3f} is below the "
                    f'minimum {floor:g} ([gate] floor_on = "lower_bound")',
                )
    elif floor is not None and rate < floor:
        yield _fail("pass_rate", f"{rule_name(ctx.gate)} {rate:.3f} is below the minimum {floor:g}")
    elif floor is not None and ctx.gate.floor_on == "lower_bound":
        interval = floor_interval(values)
        if interval is not None and interval[0] < floor:
            yield _inconclusive(
                ctx,
                "pass_rate_inconclusive",
                f"{rule_name(ctx.gate)} {rate:.3f} [{interval[0]:.3f}, {interval[1]:.3f}] "
                f"({FLOOR_INTERVAL}): the lower bound is below the minimum {floor:g} "
                '([gate] floor_on = "lower_bound")',
            )


def _inconclusive(ctx: GateContext, code: str, message: str) -> Ruling:
    """An inconclusive result: a failure unless ``[gate] inconclusive = "pass"``, and it says which."""
    if ctx.gate.inconclusive == "pass":
        return _warn(code, f'{message}; inconclusive passes ([gate] inconclusive = "pass")')
    return _fail(code, f'{message}; inconclusive fails closed ([gate] inconclusive = "fail")')


def rule_regression(ctx: GateContext) -> Iterator[Ruling]:
    """The run against the baseline, paired by case: ship, block or inconclusive.

    An observed drop beyond ``gate.max_regression`` fails (``regression``); so does a gating
    slice whose drop beyond the margin is significant after Holm's correction
    (``slice_regressed``). A drop within the margin whose interval does not clear it is
    ``inconclusive``: it fails unless ``[gate] inconclusive = "pass"``. Per-slice observed drops
    beyond the margin warn. The comparison is :func:`casework.gate._statistical.compare_with_baseline`.
    """
    base = ctx.inputs.baseline
    if base is None:
        return
    run, limit = ctx.inputs.run, ctx.gate.max_regression
    shared = ctx.shared_with_baseline()
    cmp = ctx.comparison
    if cmp is None:
        yield _warn("baseline_disjoint", "baseline shares no graded case with the run")
        return
    for s in ctx.gating:
        bad = ctx.inputs.baseline_inadmissible.get(s, 0)
        if bad:
            yield _fail(
                "baseline_judge_inadmissible",
                f"slice '{s}': {bad} verdict(s) of the baseline {ctx.inputs.baseline_id} rest on "
                "a judge not certified for this slice and check, so the comparison cannot count "
                "them",
                s,
            )
    now, before = cmp.overall.run_rate, cmp.overall.baseline_rate
    fixed = cmp.corrected
    if fixed is not None and fixed.corrected is None:
        yield _fail(
            "difference_not_corrected",
            f"against {ctx.inputs.baseline_id}: pass@1 {fixed.describe()}: the judge's measured "
            "error is not recorded for both runs, so the difference cannot be corrected",
            hint=Hint("judge certify", why="then run both systems again"),
        )
    dropped = before - now > limit
    if fixed is not None and fixed.corrected is not None:
        dropped = -fixed.corrected > limit
        if dropped:
            yield _fail(
                "regression",
                f"against {ctx.inputs.baseline_id} on {len(shared)} shared cases: pass@1 "
                f"{fixed.describe()} is a drop beyond {limit:g} (corrected for the judge's "
                "measured error)",
            )
    elif dropped:
        yield _fail(
            "regression",
            f"{cmp.rule} fell from {before:.3f} ({ctx.inputs.baseline_id}) to {now:.3f} on "
            f"{len(shared)} shared cases: a drop of {before - now:.3f} > {limit:g}",
        )
    # Once the whole fails on its drop, the per-slice warnings below name the slices.
    for sc in () if dropped else cmp.slices:
        if sc.regressed and sc.difference is not None:
            yield _fail(
                "slice_regressed",
                f"slice '{sc.slice}': {cmp.rule} {sc.difference.difference:+.3f} "
                f"[{sc.difference.low:+.3f}, {sc.difference.high:+.3f}] is below -{limit:g} "
                f"(Holm-adjusted p {sc.p_holm:.3g})",
                sc.slice,
            )
    if cmp.decision == "inconclusive":
        yield _inconclusive(
            ctx, "inconclusive", f"against {ctx.inputs.baseline_id}: {cmp.describe()}"
        )
    for s in ctx.gating:
        ids = [c for c in shared if run[c].slice == s]
        a, b = pass_rate(run, ids), pass_rate(base, ids)
        if a is not None and b is not None and b - a > limit:
            yield _warn(
                "slice_regression", f"slice '{s}': pass@1 {b:.3f} -> {a:.3f} on {len(ids)} cases", s
            )


#: The gate's rules, in the order their reasons are reported.
RULES: tuple[GateRule, ...] = (
    rule_gating_slices_present,
    rule_released_version,
    rule_run_finished,
    rule_imported_run,
    rule_dataset_findings,
    rule_labeller_agreement,
    rule_judge_admissible,
    rule_undetermined,
    rule_pass_rate,
    rule_regression,
)


def evaluate_gate(
    inputs: GateInputs,
    gate: GateConfig,
    thresholds: ThresholdsConfig,
    rules: Sequence[GateRule] = RULES,
) -> GateReport:
    """Decide the release: the gate passes when no rule yields a failure.

    The rules (:data:`RULES`) fail closed, on: a gating slice missing from the run; a run not on
    the latest release (unless allowed, with a reason); an unfinished run; any error-level
    dataset finding; a
    gating slice with kappa below ``thresholds.kappa_gate``; a gating slice whose verdicts rest on
    an inadmissible judge; undetermined trials of gating cases; no configured floor, no decided verdict, or pass@1 below
    ``gate.min_pass_rate`` (corrected for the judge's measured error where a certified judge
    decided verdicts); a drop
    against the baseline beyond ``gate.max_regression`` (paired: over the cases both runs graded).
    """
    ctx = GateContext.of(inputs, gate, thresholds)
    failures: list[GateReason] = []
    warnings: list[GateReason] = []
    for rule in rules:
        for ruling in rule(ctx):
            (failures if ruling.severity == "error" else warnings).append(ruling.reason)
    shared = ctx.shared_with_baseline()
    base_rate = pass_rate(inputs.baseline, shared) if inputs.baseline is not None else None
    undecided = {"inconclusive", "pass_rate_inconclusive"}
    decision: Decision = "ship"
    if any(r.code not in undecided for r in failures):
        decision = "block"
    elif any(r.code in undecided for r in (*failures, *warnings)):
        decision = "inconclusive"
    return GateReport(
        decision=decision,
        comparison=ctx.comparison,
        inconclusive_policy=gate.inconclusive,
        passed=not failures,
        failures=failures,
        warnings=warnings,
        gating_slices=ctx.gating,
        pass_rate=pass_rate(inputs.run, ctx.gating_cases),
        baseline_pass_rate=base_rate,
        cases=sum(1 for cid in ctx.gating_cases if inputs.run[cid].n),
        corrected=ctx.corrected,
    )

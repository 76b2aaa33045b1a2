"""The HTML report: one self-contained file (inline CSS and SVG, no CDN, no script).

:func:`report_context` turns computed results into a :class:`ReportContext` (pure; what tests
assert on), the Jinja2 template ``templates/report.html.j2`` renders it (autoescaped, no logic
beyond loops), :func:`render_report` does both, and :func:`write_report` loads the runs, the
agreement per slice and the comparison, then writes the file atomically.

Frozen cases never show their content: the report counts them, and names their ids only when a
local reviewer asks for it (``show_frozen``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from casework import __version__
from casework.atomic import atomic_write_text
from casework.dataset import load_dataset
from casework.errors import CaseworkError
from casework.gate._gather import slice_kappas
from casework.project import Project
from casework.report._simulator import SimulatorView, simulator_audit, simulator_view
from casework.report.charts import Series, bar_chart, line_chart, stacked_bars
from casework.runner import (
    CompareResult,
    CorrectedPass,
    GroupMetrics,
    RunResults,
    TrialRecord,
    compare_runs,
    load_run,
    run_results,
)
from casework.runner.reviewed import reviewed_trials
from casework.runner.sim_audit import SimulatorAudit

__all__ = [
    "MAX_FAILING",
    "Card",
    "ComparisonView",
    "FailingCase",
    "MetricsRow",
    "ReportContext",
    "ReportData",
    "render_report",
    "report_context",
    "write_report",
]

#: Failing cases listed at most (the rest are counted).
MAX_FAILING = 300

#: Characters of a failing trial's reply shown.
REPLY_CHARS = 240


@dataclass(frozen=True)
class ReportData:
    """Everything the report is computed from.

    Attributes:
        results: Metrics of the run.
        comparison: Paired comparison with the ``--vs`` run, if any.
        vs_results: Metrics of the ``--vs`` run, if any.
        labeller_kappa: Labeller agreement (outcome kappa) per slice.
        kappa_gate: The kappa a slice needs to gate.
        show_frozen: Name frozen cases by id (never their content), for a local reviewer.
        frozen_ids: Cases known to be frozen besides those the run log marks (runs logged
            before trial records carried the flag).
        simulator: The simulated user's audit, for a run with simulated users.
    """

    results: RunResults
    comparison: CompareResult | None = None
    vs_results: RunResults | None = None
    labeller_kappa: Mapping[str, float | None] = field(default_factory=dict)
    kappa_gate: float = 0.6
    show_frozen: bool = False
    frozen_ids: frozenset[str] = frozenset()
    simulator: SimulatorAudit | None = None


@dataclass(frozen=True)
class Card:
    """One headline figure."""

    value: str
    label: str


@dataclass(frozen=True)
class MetricsRow:
    """One row of the metrics table (numbers already formatted)."""

    group: str
    cases: int
    trials: int
    pass1: str
    ci: str
    pass_hat: list[str]
    pass_at: list[str]
    stability: str
    corrected: str = ""
    """pass@1 corrected for the judge's error with its interval, or why there is none ("" when
    no judge decided a verdict of the group)."""


@dataclass(frozen=True)
class Evidence:
    """One failing check of a failing case."""

    check: str
    text: str
    inadmissible: bool


@dataclass(frozen=True)
class FailingCase:
    """A failing case: its first failing trial's evidence and reply (never for a frozen case)."""

    case_id: str
    slice: str
    split: str
    passed: str
    evidence: list[Evidence]
    reply: str


@dataclass(frozen=True)
class InvertedCase:
    """A case the known-worse system passes more often than the known-better one."""

    case_id: str
    slice: str
    better: str
    worse: str


@dataclass(frozen=True)
class ComparisonView:
    """The discrimination section."""

    better: str
    worse: str
    cases: int
    discriminating: int
    discrimination_rate: str
    inverted_count: int
    tied: int
    mean_delta: str
    ci: str
    p_value: str
    chart: Markup
    inverted: list[InvertedCase]
    inverted_frozen: int


@dataclass(frozen=True)
class ReportContext:
    """What the template shows, computed and formatted; the template holds no logic.

    Attributes:
        title: Page title.
        version: casework version.
        run_id: The run.
        meta: Dataset, agent, k, seed, time, status, cost (one line of text).
        finished: Whether the run finished.
        judge: Which judge graded, and its calibration per slice.
        cards: Headline figures.
        notes: Sentences worth knowing (inadmissible verdicts, undetermined trials, skips, frozen).
        ks: The k of the pass^k / pass@k columns (2…k).
        metrics: The metrics table.
        charts: SVG charts (pass^k, stability, real vs synthetic, agreement).
        kappa_note: Slices whose labeller agreement was not measured, if any.
        comparison: The discrimination section, with a ``--vs`` run.
        failing: Failing non-frozen cases, worst first (at most :data:`MAX_FAILING`).
        failing_total: Failing cases in all, frozen ones included.
        failing_hidden: Failing non-frozen cases beyond :data:`MAX_FAILING`.
        frozen_failing: Failing frozen cases (shown only as this count).
        frozen_failing_ids: Their ids, only when ``show_frozen``.
        flaky: Flaky non-frozen case ids (at most 50).
        flaky_frozen: Flaky frozen cases (a count).
        corrected_column: Whether the metrics table shows pass@1 corrected for the judge's
            measured error (a judge decided some verdicts).
        corrected_note: How the corrected figure is made, when it is shown.
        simulator: The simulated user's error rate per slice and the quarantined cases.
    """

    title: str
    version: str
    run_id: str
    meta: str
    finished: bool
    judge: str
    cards: list[Card]
    notes: list[str]
    ks: list[int]
    metrics: list[MetricsRow]
    charts: list[Markup]
    kappa_note: str | None
    comparison: ComparisonView | None
    failing: list[FailingCase]
    failing_total: int
    failing_hidden: int
    frozen_failing: int
    frozen_failing_ids: list[str]
    flaky: list[str]
    flaky_frozen: int
    corrected_column: bool = False
    corrected_note: str | None = None
    simulator: SimulatorView | None = None


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _group_name(g: GroupMetrics) -> str:
    return g.group.split(":", 1)[-1] if ":" in g.group else g.group


def _corrected_cell(c: CorrectedPass | None) -> str:
    if c is None:
        return ""
    r = c.rate
    if r.corrected is not None and r.low is not None and r.high is not None:
        return f"{r.corrected:.3f} [{r.low:.2f}, {r.high:.2f}]"
    return "not certified" if c.uncertified else "not correctable"


def _metrics(
    groups: Sequence[GroupMetrics],
    ks: Sequence[int],
    corrected: Mapping[str, CorrectedPass] | None = None,
) -> list[MetricsRow]:
    fixed = corrected or {}
    return [
        MetricsRow(
            g.group,
            g.cases,
            g.trials,
            _fmt(g.pass1),
            _ci(g.ci_pass1),
            [_fmt(g.pass_hat.get(i)) for i in ks],
            [_fmt(g.pass_at.get(i)) for i in ks],
            _fmt(g.stability),
            _corrected_cell(fixed.get(g.group)),
        )
        for g in groups
    ]


def _corrected_card(res: RunResults) -> list[Card]:
    overall = res.corrected.get("all")
    if overall is None:
        return []
    return [Card(_corrected_cell(overall), "pass@1 corrected for the judge's error")]


def _corrected_note(res: RunResults) -> str | None:
    if not res.corrected:
        return None
    overall = res.corrected.get("all")
    judged = f"{overall.rate.judged} of {overall.rate.n} trials" if overall else "some trials"
    if overall is not None and overall.estimator == "ppi++":
        return (
            f"A judge decided {judged}. Corrected pass@1 is PPI++: the judge's verdicts on every "
            f"trial, rectified by people's verdicts on {overall.reviewed} of the run's own trials "
            "(one stratum per slice and check kind); the interval is clustered by case. "
            "Programmatic verdicts count as they are."
        )
    note = overall.note + ". " if overall is not None and overall.note else ""
    return note + (
        f"A judge decided {judged}. Corrected pass@1 takes its measured error out "
        "(Rogan–Gladen, with the run's certification counts per slice and check kind); the "
        "interval (Lang & Reiczigel 2014) carries the certification sample's uncertainty. "
        "Programmatic verdicts count as they are; 'not certified': the judge has no "
        "certification for a slice or check kind it decided."
    )


def _frozen_ids(trials: Sequence[TrialRecord]) -> set[str]:
    return {t.case_id for t in trials if t.frozen}


def _failing(trials: Sequence[TrialRecord], frozen: set[str]) -> tuple[list[FailingCase], int]:
    """Failing non-frozen cases, worst first, and how many cases failed in all."""
    by_case: dict[str, list[TrialRecord]] = {}
    for t in trials:
        by_case.setdefault(t.case_id, []).append(t)
    failing = []
    for cid, ts in by_case.items():
        fails = [t for t in ts if t.verdict.passed is False]
        if fails:
            failing.append((len(fails) / len(ts), cid, ts, fails[0]))
    failing.sort(key=lambda x: (-x[0], x[1]))
    shown = []
    for _, cid, ts, first in failing:
        if cid in frozen:
            continue
        reply = first.trajectory.reply().strip()
        shown.append(
            FailingCase(
                cid,
                first.slice,
                first.split,
                f"{sum(t.verdict.passed is True for t in ts)}/{len(ts)}",
                [
                    Evidence(c.name, c.evidence, c.judged and not c.admissible)
                    for c in first.verdict.failures()
                ],
                reply[:REPLY_CHARS] + ("…" if len(reply) > REPLY_CHARS else ""),
            )
        )
    return shown, len(failing)


def _charts(data: ReportData) -> list[Markup]:
    res, top = data.results, data.results.k
    judge = res.run.header.judge
    series = [
        Series(f"{_group_name(g)} pass^k", [g.pass_hat.get(i) for i in range(1, top + 1)])
        for g in [res.overall, *res.by_slice]
    ]
    series.append(
        Series("all pass@k", [res.overall.pass_at.get(i) for i in range(1, top + 1)], dashed=True)
    )
    slice_names = [_group_name(g) for g in res.by_slice]
    judge_kappa = [
        judge.calibration[s].kappa if judge and s in judge.calibration else None
        for s in slice_names
    ]
    kappas = [data.labeller_kappa.get(s) for s in slice_names]
    charts = [
        line_chart(
            "pass^k (solid) and pass@k (dashed) by k",
            [str(i) for i in range(1, top + 1)],
            series,
            x_title="k",
        ),
        bar_chart(
            "Verdict stability per slice (share of cases with one verdict in every trial)",
            slice_names,
            [Series("stability", [g.stability for g in res.by_slice])],
        ),
        bar_chart(
            "Real vs synthetic cases",
            [_group_name(g) for g in res.by_source],
            [
                Series("pass@1", [g.pass1 for g in res.by_source]),
                Series(f"pass^{top}", [g.pass_hat.get(top) for g in res.by_source]),
            ],
        ),
        bar_chart(
            "Agreement per slice (Cohen's κ)",
            slice_names,
            [Series("labellers", kappas), Series("judge vs humans", judge_kappa)],
            y_min=min([0.0, *[v for v in kappas + judge_kappa if v is not None]]),
            threshold=data.kappa_gate,
            threshold_label=f"gate {data.kappa_gate:g}",
        ),
    ]
    # The chart functions escape every label and value they place in the SVG.
    return [Markup(c) for c in charts]


def _comparison(data: ReportData, frozen: set[str]) -> ComparisonView | None:
    cmp = data.comparison
    if cmp is None:
        return None
    c = cmp.comparison
    slices = sorted(cmp.by_slice)
    comps = [c, *(cmp.by_slice[s] for s in slices)]
    chart = stacked_bars(
        f"Discrimination: {cmp.better} vs {cmp.worse}",
        ["all", *slices],
        [
            Series("separates", [x.discrimination_rate for x in comps]),
            Series("tied", [len(x.tied) / x.cases if x.cases else 0 for x in comps]),
            Series("inverted", [x.inversion_rate for x in comps]),
        ],
    )
    return ComparisonView(
        better=cmp.better,
        worse=cmp.worse,
        cases=c.cases,
        discriminating=len(c.discriminating),
        discrimination_rate=f"{c.discrimination_rate:.3f}",
        inverted_count=len(c.inverted),
        tied=len(c.tied),
        mean_delta=f"{c.mean_delta:+.3f}",
        ci=_ci(c.ci_delta),
        p_value=f"{c.p_value:.3g}",
        chart=Markup(chart),
        inverted=[
            InvertedCase(d.case_id, d.slice, f"{d.better:.2f}", f"{d.worse:.2f}")
            for d in c.inverted
            if d.case_id not in frozen
        ],
        inverted_frozen=sum(d.case_id in frozen for d in c.inverted),
    )


def _certified_text(res: RunResults) -> str:
    """`` · certified on refunds/outcome (TPR 0.95, TNR 0.88, admissible)``, or nothing."""
    judge = res.run.header.judge
    if judge is None or not judge.certification:
        return ""
    parts = []
    for s, kinds in sorted(judge.certification.items()):
        for kind, c in sorted(kinds.items()):
            tpr = c.tp / (c.tp + c.fn) if c.tp + c.fn else None
            tnr = c.tn / (c.tn + c.fp) if c.tn + c.fp else None
            state = "admissible" if c.admissible else "inadmissible"
            parts.append(f"{s}/{kind} (TPR {_fmt(tpr, 2)}, TNR {_fmt(tnr, 2)}, {state})")
    version = f" with prompt {judge.prompt_version}" if judge.prompt_version else ""
    return f" · certified{version} on {', '.join(parts)}"


def _judge_text(res: RunResults) -> str:
    judge = res.run.header.judge
    if judge is None:
        return "none"
    certified = _certified_text(res) or " · not certified on any slice"
    if not judge.calibration:
        return f"{judge.model}{certified}"
    checked = ", ".join(f"{s} (κ={_fmt(c.kappa, 2)})" for s, c in judge.calibration.items())
    return f"{judge.model}{certified} · labeller check on {checked}"


def report_context(data: ReportData) -> ReportContext:
    """Compute and format everything the report shows (pure)."""
    res = data.results
    h, end, ov, top = res.run.header, res.run.end, res.overall, res.k
    frozen = _frozen_ids(res.run.trials) | data.frozen_ids
    meta = (
        f"Dataset {h.dataset_ref} (hash {h.dataset_hash[:16]}) · agent {h.agent_spec} version "
        f"{h.agent_version or 'unknown'} · k = {h.k} · seed {h.seed} · started "
        f"{h.started_at.isoformat(timespec='seconds')}"
        + (f" · cost ${end.cost_usd:.4f} · wall {end.wall_s:.1f} s" if end else "")
    )
    notes = []
    if res.inadmissible:
        notes.append(
            f"{res.inadmissible} trial verdict(s) rest on a judge not certified for the slice and check: "
            "shown, never gating."
        )
    if ov.undetermined:
        notes.append(
            f"{ov.undetermined} trial(s) could not be graded (undetermined) and are left out of "
            "the metrics."
        )
    if res.retired is not None:
        notes.append(
            f"{res.retired.cases} retired case(s) (split smoke) ran: they are shown apart, in the "
            f"'{res.retired.group}' row, and left out of the headline, the other rows and the gate."
        )
    if h.skipped:
        notes.append(f"{len(h.skipped)} case(s) skipped: no label and no state assertions.")
    if h.scoring:
        notes.append(
            f"{len(h.scoring)} case(s) imported from τ²-bench are scored as τ²-bench's evaluator "
            "scores them, by each task's own reward basis (database, env assertions, actions, "
            "facts to communicate; NL assertions not scored, no outcome check); "
            '`[run] scoring = {DATASET = "casework"}` runs casework\'s stricter checks.'
        )
    notes += [f"Warning: {f.warning()}" for f in h.golden_failures]
    if frozen:
        notes.append(
            f"{len(frozen)} frozen case(s) are counted in the metrics; their content is never "
            "shown here."
        )
    failing, failing_total = _failing(res.run.trials, frozen)
    frozen_failing = sorted(
        {t.case_id for t in res.run.trials if t.case_id in frozen and t.passed is False}
    )
    unmeasured = [
        s for s in (_group_name(g) for g in res.by_slice) if data.labeller_kappa.get(s) is None
    ]
    flaky = [c for c in res.flaky if c not in frozen]
    ks = list(range(2, top + 1))
    return ReportContext(
        title=f"casework report — {h.run_id}",
        version=__version__,
        run_id=h.run_id,
        meta=meta,
        finished=end is not None,
        judge=_judge_text(res),
        cards=[
            Card(_fmt(ov.pass1), "pass@1"),
            *_corrected_card(res),
            Card(_fmt(ov.pass_hat.get(top)), f"pass^{top}"),
            Card(_fmt(ov.pass_at.get(top)), f"pass@{top}"),
            Card(_fmt(ov.stability), "verdict stability"),
            Card(str(ov.cases), f"cases · {ov.trials} trials"),
            Card(str(len(res.flaky)), "flaky cases"),
        ],
        notes=notes,
        ks=ks,
        metrics=_metrics(res.groups(), ks, res.corrected),
        charts=_charts(data),
        kappa_note=(
            f"Labeller agreement not measured for: {', '.join(unmeasured)}." if unmeasured else None
        ),
        comparison=_comparison(data, frozen),
        failing=failing[:MAX_FAILING],
        failing_total=failing_total,
        failing_hidden=max(0, len(failing) - MAX_FAILING),
        frozen_failing=len(frozen_failing),
        frozen_failing_ids=frozen_failing if data.show_frozen else [],
        flaky=flaky[:50],
        flaky_frozen=len(res.flaky) - len(flaky),
        corrected_column=bool(res.corrected),
        corrected_note=_corrected_note(res),
        simulator=simulator_view(data.simulator, frozen) if data.simulator else None,
    )


_ENV = Environment(
    loader=PackageLoader("casework.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document."""
    return _ENV.get_template("report.html.j2").render(r=report_context(data))


def write_report(
    project: Project,
    run_ref: str,
    out: Path,
    *,
    vs_ref: str | None = None,
    labeller_kappa: Mapping[str, float | None] | None = None,
    show_frozen: bool = False,
) -> Path:
    """Load the run (and the ``vs_ref`` run), compute everything, write one HTML file atomically.

    Args:
        project: The project.
        run_ref: The run.
        out: The HTML file to write.
        vs_ref: A run of another system, for the discrimination section.
        labeller_kappa: Labeller agreement per slice (default: measured on the run's dataset).
        show_frozen: Name failing frozen cases by id (never their content), for a local reviewer.
    """
    run = load_run(project, run_ref)
    estimator = project.config.judge.estimator
    reviewed = reviewed_trials(project, run) if estimator == "ppi++" else {}
    results = run_results(run, estimator=estimator, reviewed=reviewed)
    comparison = vs_results = None
    if vs_ref is not None:
        vs = load_run(project, vs_ref)
        vs_results = run_results(vs)
        comparison = compare_runs(project, run, vs, write=False)
    kappas = labeller_kappa if labeller_kappa is not None else slice_kappas(project, run)
    data = ReportData(
        results,
        comparison,
        vs_results,
        kappas,
        project.config.thresholds.kappa_gate,
        show_frozen=show_frozen,
        frozen_ids=_dataset_frozen(project, run.header.dataset, run.header.dataset_hash),
        simulator=simulator_audit(project, run),
    )
    atomic_write_text(out, render_report(data))
    return out


def _dataset_frozen(project: Project, dataset: str, content_hash: str) -> frozenset[str]:
    """Frozen case ids of the run's dataset version and of the working tree, where they load.

    Both, because a run logged before trial records carried the flag may be on a version that
    can no longer be rebuilt, and a case frozen since the run is frozen now.
    """
    out: set[str] = set()
    for ref in (f"{dataset}@{content_hash}", dataset):
        try:
            out.update(c.id for c in load_dataset(project, ref).cases if c.frozen)
        except CaseworkError:
            continue
    return frozenset(out)

"""The HTML report: one self-contained file (inline CSS and SVG, no CDN, no script).

:func:`render_report` turns computed results into HTML (pure); :func:`write_report` loads the
runs, the agreement per slice and the comparison, then writes the file atomically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from string import Template

from casework import __version__
from casework.atomic import atomic_write_text
from casework.gate import slice_kappas
from casework.project import Project
from casework.report.charts import Series, bar_chart, line_chart, stacked_bars
from casework.runner import (
    CompareResult,
    GroupMetrics,
    RunResults,
    TrialRecord,
    compare_runs,
    load_run,
    run_results,
)

__all__ = ["ReportData", "render_report", "write_report"]

#: Failing cases listed at most (the rest are counted).
MAX_FAILING = 300


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows.

    Attributes:
        results: Metrics of the run.
        comparison: Paired comparison with the ``--vs`` run, if any.
        vs_results: Metrics of the ``--vs`` run, if any.
        labeller_kappa: Labeller agreement (outcome kappa) per slice.
        kappa_gate: The kappa a slice needs to gate.
    """

    results: RunResults
    comparison: CompareResult | None = None
    vs_results: RunResults | None = None
    labeller_kappa: Mapping[str, float | None] = field(default_factory=dict)
    kappa_gate: float = 0.6


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" <span class=note>[{ci[0]:.2f}, {ci[1]:.2f}]</span>"


def _group_name(g: GroupMetrics) -> str:
    return g.group.split(":", 1)[-1] if ":" in g.group else g.group


def _metrics_table(groups: Sequence[GroupMetrics], k: int) -> str:
    ks = list(range(2, k + 1))
    head = "".join(f"<th class=num>pass^{i}</th>" for i in ks) + "".join(
        f"<th class=num>pass@{i}</th>" for i in ks
    )
    rows = []
    for g in groups:
        cells = "".join(f"<td class=num>{_fmt(g.pass_hat.get(i))}</td>" for i in ks)
        cells += "".join(f"<td class=num>{_fmt(g.pass_at.get(i))}</td>" for i in ks)
        rows.append(
            f"<tr><td>{escape(g.group)}</td><td class=num>{g.cases}</td><td class=num>{g.trials}</td>"
            f"<td class=num>{_fmt(g.pass1)}{_ci(g.ci_pass1)}</td>{cells}"
            f"<td class=num>{_fmt(g.stability)}</td></tr>"
        )
    return (
        "<table class=metrics><thead><tr><th>group</th><th class=num>cases</th><th class=num>trials</th>"
        f"<th class=num>pass@1 [95% CI]</th>{head}<th class=num>stability</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _pass_k_chart(res: RunResults) -> str:
    k = res.k
    series = [
        Series(f"{_group_name(g)} pass^k", [g.pass_hat.get(i) for i in range(1, k + 1)])
        for g in [res.overall, *res.by_slice]
    ]
    series.append(
        Series("all pass@k", [res.overall.pass_at.get(i) for i in range(1, k + 1)], dashed=True)
    )
    return line_chart(
        "pass^k (solid) and pass@k (dashed) by k",
        [str(i) for i in range(1, k + 1)],
        series,
        x_title="k",
    )


def _failing_rows(trials: Sequence[TrialRecord]) -> tuple[str, int]:
    by_case: dict[str, list[TrialRecord]] = {}
    for t in trials:
        by_case.setdefault(t.case_id, []).append(t)
    failing = []
    for cid, ts in by_case.items():
        fails = [t for t in ts if t.verdict.passed is False]
        if fails:
            failing.append((len(fails) / len(ts), cid, ts, fails[0]))
    failing.sort(key=lambda x: (-x[0], x[1]))
    rows = []
    for _, cid, ts, first in failing[:MAX_FAILING]:
        passes = sum(t.verdict.passed is True for t in ts)
        evidence = "<br>".join(
            f"<b>{escape(c.name)}</b>: {escape(c.evidence)}"
            + (
                " <span class=warn>(inadmissible judge)</span>"
                if c.judged and not c.admissible
                else ""
            )
            for c in first.verdict.failures()
        )
        reply = first.trajectory.reply().strip()
        reply_html = (
            f"<div class=reply>“{escape(reply[:240])}{'…' if len(reply) > 240 else ''}”</div>"
            if reply
            else ""
        )
        rows.append(
            f"<tr><td><code>{escape(cid)}</code></td><td>{escape(first.slice)}</td><td>{escape(first.split)}</td>"
            f"<td class=num>{passes}/{len(ts)}</td><td class=evidence>{evidence}{reply_html}</td></tr>"
        )
    table = (
        "<table class=failing><thead><tr><th>case</th><th>slice</th><th>split</th><th class=num>passed</th>"
        f"<th>evidence (first failing trial)</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    return table, len(failing)


def _comparison_section(data: ReportData) -> str:
    cmp = data.comparison
    if cmp is None:
        return ""
    c = cmp.comparison
    slices = sorted(cmp.by_slice)
    cats = ["all", *slices]
    comps = [c, *(cmp.by_slice[s] for s in slices)]
    chart = stacked_bars(
        f"Discrimination: {cmp.better} vs {cmp.worse}",
        cats,
        [
            Series("separates", [x.discrimination_rate for x in comps]),
            Series("tied", [len(x.tied) / x.cases if x.cases else 0 for x in comps]),
            Series("inverted", [x.inversion_rate for x in comps]),
        ],
    )
    inverted = "".join(
        f"<tr><td><code>{escape(d.case_id)}</code></td><td>{escape(d.slice)}</td><td class=num>{d.better:.2f}</td><td class=num>{d.worse:.2f}</td></tr>"
        for d in c.inverted
    )
    inv_table = (
        "<table><thead><tr><th>inverted case</th><th>slice</th><th class=num>better pass rate</th>"
        f"<th class=num>worse pass rate</th></tr></thead><tbody>{inverted}</tbody></table>"
        if c.inverted
        else "<p class=note>No inverted cases.</p>"
    )
    return (
        f"<h2>Discrimination: {escape(cmp.better)} vs {escape(cmp.worse)}</h2>"
        f"<p>{len(c.discriminating)} of {c.cases} cases separate the systems "
        f"(<b>discrimination rate {c.discrimination_rate:.3f}</b>), {len(c.inverted)} are inverted, "
        f"{len(c.tied)} tied. Mean per-case difference in pass rate {c.mean_delta:+.3f}{_ci(c.ci_delta)}; "
        f"exact sign test p = {c.p_value:.3g}.</p>"
        f"<div class='charts one'>{chart}</div>{inv_table}"
    )


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document."""
    res = data.results
    h = res.run.header
    end = res.run.end
    judge = h.judge
    judge_text = (
        "none"
        if judge is None
        else escape(judge.model)
        + (
            " — calibrated on "
            + ", ".join(
                f"{escape(s)} (κ={_fmt(c.kappa, 2)}, {'admissible' if c.admissible else 'inadmissible'})"
                for s, c in judge.calibration.items()
            )
            if judge.calibration
            else " — not calibrated on any slice"
        )
    )
    status = "finished" if end is not None else "<span class=warn>unfinished</span>"
    meta = (
        f"<p class=meta>Dataset <code>{escape(h.dataset_ref)}</code> (hash <code>{h.dataset_hash[:16]}</code>) · "
        f"agent <code>{escape(h.agent_spec)}</code> version <b>{escape(h.agent_version or 'unknown')}</b> · "
        f"k = {h.k} · seed {h.seed} · started {h.started_at.isoformat(timespec='seconds')} · {status}"
        + (f" · cost ${end.cost_usd:.4f} · wall {end.wall_s:.1f} s" if end else "")
        + f"<br>Judge: {judge_text}</p>"
    )
    ov = res.overall
    top = res.k
    cards = (
        "<div class=cards>"
        f"<div class=card><div class=v>{_fmt(ov.pass1)}</div><div class=l>pass@1</div></div>"
        f"<div class=card><div class=v>{_fmt(ov.pass_hat.get(top))}</div><div class=l>pass^{top}</div></div>"
        f"<div class=card><div class=v>{_fmt(ov.pass_at.get(top))}</div><div class=l>pass@{top}</div></div>"
        f"<div class=card><div class=v>{_fmt(ov.stability)}</div><div class=l>verdict stability</div></div>"
        f"<div class=card><div class=v>{ov.cases}</div><div class=l>cases · {ov.trials} trials</div></div>"
        f"<div class=card><div class=v>{len(res.flaky)}</div><div class=l>flaky cases</div></div>"
        "</div>"
    )
    slice_names = [_group_name(g) for g in res.by_slice]
    stability = bar_chart(
        "Verdict stability per slice (share of cases with one verdict in every trial)",
        slice_names,
        [Series("stability", [g.stability for g in res.by_slice])],
    )
    real_syn = bar_chart(
        "Real vs synthetic cases",
        [_group_name(g) for g in res.by_source],
        [
            Series("pass@1", [g.pass1 for g in res.by_source]),
            Series(f"pass^{top}", [g.pass_hat.get(top) for g in res.by_source]),
        ],
    )
    judge_kappa = [
        judge.calibration[s].kappa if judge and s in judge.calibration else None
        for s in slice_names
    ]
    kappa_values = [data.labeller_kappa.get(s) for s in slice_names]
    kappa_chart = bar_chart(
        "Agreement per slice (Cohen's κ)",
        slice_names,
        [Series("labellers", kappa_values), Series("judge vs humans", judge_kappa)],
        y_min=min([0.0, *[v for v in kappa_values + judge_kappa if v is not None]]),
        threshold=data.kappa_gate,
        threshold_label=f"gate {data.kappa_gate:g}",
    )
    unmeasured = [s for s, v in zip(slice_names, kappa_values, strict=True) if v is None]
    kappa_note = (
        f"<p class=note>Labeller agreement not measured for: {escape(', '.join(unmeasured))}.</p>"
        if unmeasured
        else ""
    )
    failing, n_failing = _failing_rows(res.run.trials)
    more = (
        f"<p class=note>{n_failing - MAX_FAILING} more failing cases not shown.</p>"
        if n_failing > MAX_FAILING
        else ""
    )
    notes = []
    if res.inadmissible:
        notes.append(
            f"{res.inadmissible} trial verdict(s) rest on a judge not calibrated for the slice: shown, never gating."
        )
    undetermined = ov.undetermined
    if undetermined:
        notes.append(
            f"{undetermined} trial(s) could not be graded (undetermined) and are left out of the metrics."
        )
    if h.skipped:
        notes.append(f"{len(h.skipped)} case(s) skipped: no label and no state assertions.")
    notes_html = "".join(f"<p class=note>{escape(n)}</p>" for n in notes)
    body = (
        f"<h1>casework run {escape(h.run_id)}</h1>{meta}{cards}{notes_html}"
        "<h2>Metrics</h2>"
        "<p class=note>pass^k: chance that all k independent trials pass (unbiased estimator, mean over "
        "cases of C(c,k)/C(n,k)); pass@k: chance that at least one does. CIs bootstrap over cases.</p>"
        + _metrics_table(res.groups(), res.k)
        + "<h2>Charts</h2><div class=charts>"
        + _pass_k_chart(res)
        + stability
        + real_syn
        + kappa_chart
        + "</div>"
        + kappa_note
        + _comparison_section(data)
        + f"<h2>Failing cases ({n_failing})</h2>"
        + failing
        + more
        + f"<p class=note>Generated by casework {__version__}. Flaky cases: {escape(', '.join(res.flaky[:50])) or 'none'}.</p>"
    )
    template = Template(
        resources.files("casework.report")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    return template.substitute(
        title=escape(f"casework report — {h.run_id}"), body=body, version=__version__
    )


def write_report(
    project: Project,
    run_ref: str,
    out: Path,
    *,
    vs_ref: str | None = None,
    labeller_kappa: Mapping[str, float | None] | None = None,
) -> Path:
    """Load the run (and the ``--vs`` run), compute everything, write one HTML file atomically."""
    run = load_run(project, run_ref)
    results = run_results(run)
    comparison = vs_results = None
    if vs_ref is not None:
        vs = load_run(project, vs_ref)
        vs_results = run_results(vs)
        comparison = compare_runs(project, run, vs, write=False)
    kappas = labeller_kappa if labeller_kappa is not None else slice_kappas(project, run)
    html = render_report(
        ReportData(results, comparison, vs_results, kappas, project.config.thresholds.kappa_gate)
    )
    atomic_write_text(out, html)
    return out

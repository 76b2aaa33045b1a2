"""Run commands: `run`, `results show|list`, `compare`, `retire`, `gate`, `report`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from casework.cli._progress import Bar
from casework.cli.context import FORMAT, SLICES, SPLIT_FILTER, console, emit_json, pass_project
from casework.errors import GateFailed
from casework.gate import GateReport, gate_run
from casework.project import Project
from casework.report import write_report
from casework.runner import (
    CompareResult,
    CorrectedPass,
    GroupMetrics,
    RetireResult,
    RunRequest,
    RunResults,
    TrialRecord,
    compare_runs,
    list_run_files,
    list_runs,
    load_run,
    log_path,
    retire_cases,
    run_agent,
    run_results,
)

__all__ = ["COMMANDS"]


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


class _Trials:
    """The trials bar (stderr, a terminal only), fed by the runner's observer callbacks.

    The runner calls :meth:`started` once every input is checked: nothing shows before.
    """

    def __init__(self, bar: Bar) -> None:
        self.bar = bar
        self.passed = 0
        self.failed = 0

    def started(self, total: int, done: int) -> None:
        self.bar.update(total=total, completed=done)

    def trial_done(self, record: TrialRecord) -> None:
        if record.verdict.passed:
            self.passed += 1
        elif record.verdict.passed is False:
            self.failed += 1
        self.bar.update(
            advance=1,
            description=f"trials [green]{self.passed} pass[/] [red]{self.failed} fail[/]",
        )


@click.command("run")
@click.argument("dataset", required=False, default="")
@click.option(
    "--agent",
    "agent",
    default=None,
    help="python:pkg.mod:fn, http:URL or cmd:COMMAND (default: [agent] spec).",
)
@click.option("-k", "k", type=int, default=3, show_default=True, help="Trials per case.")
@click.option(
    "--concurrency", type=int, default=16, show_default=True, help="Trials in flight at once."
)
@SLICES
@SPLIT_FILTER
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Run seed (trial seeds derive from it)."
)
@click.option(
    "--agent-version", default=None, help="Version label of the agent (default: what it reports)."
)
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=300.0,
    show_default=True,
    help="Seconds one trial may take.",
)
@click.option(
    "--resume",
    default=None,
    metavar="RUN",
    help="Finish an interrupted run instead of starting one.",
)
@click.option(
    "--no-judge",
    is_flag=True,
    help="Do not use the configured judge (judge checks stay undetermined).",
)
@FORMAT
@pass_project
def run_cmd(
    project: Project,
    dataset: str,
    agent: str | None,
    k: int,
    concurrency: int,
    slices: tuple[str, ...],
    splits: tuple[str, ...],
    seed: int,
    agent_version: str | None,
    timeout_s: float,
    resume: str | None,
    no_judge: bool,
    fmt: str,
) -> None:
    """Run an agent on DATASET[@VERSION]: k independent trials per case, graded, logged, stored."""
    request = RunRequest(
        dataset=dataset,
        agent=agent,
        k=k,
        concurrency=concurrency,
        slices=slices,
        splits=splits,
        seed=seed,
        agent_version=agent_version,
        timeout_s=timeout_s,
        resume=resume,
        use_judge=not no_judge,
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Bar("trials", fmt, *columns) as bar:
        summary = run_agent(project, request, observer=_Trials(bar))
    end, header = summary.end, summary.header
    if fmt == "json":
        emit_json({"run_id": header.run_id, "log": str(summary.log), **end.model_dump(mode="json")})
        return
    console.print(
        f"run [bold]{header.run_id}[/]: {end.trials} trials on {header.dataset_ref} — "
        f"{end.passed} passed, {end.failed} failed, {end.undetermined} undetermined, {end.errors} agent errors; "
        f"log {project.relative(summary.log)}"
    )
    console.print(f"next: casework results show {header.run_id}")


def _group_row(g: GroupMetrics, k: int) -> list[str]:
    ci = f"[{g.ci_pass1[0]:.2f},{g.ci_pass1[1]:.2f}]" if g.ci_pass1 else ""
    return [
        g.group,
        str(g.cases),
        str(g.trials),
        _f(g.pass1),
        ci,
        *(_f(g.pass_hat.get(i)) for i in range(2, k + 1)),
        _f(g.pass_at.get(k)) if k > 1 else "",
        _f(g.stability),
    ]


def _results_table(k: int) -> Table:
    headers = [
        "group",
        "cases",
        "trials",
        "pass@1",
        "95% CI",
        *(f"pass^{i}" for i in range(2, k + 1)),
    ]
    headers += [f"pass@{k}" if k > 1 else "", "stable"]
    table = Table(box=None, pad_edge=False)
    for i, name in enumerate(headers):
        table.add_column(name, no_wrap=True, justify="left" if i == 0 else "right")
    return table


def _group_json(g: GroupMetrics) -> dict[str, Any]:
    return {
        "group": g.group,
        "cases": g.cases,
        "trials": g.trials,
        "undetermined": g.undetermined,
        "pass1": g.pass1,
        "pass_hat": {str(k): v for k, v in g.pass_hat.items()},
        "pass_at": {str(k): v for k, v in g.pass_at.items()},
        "stability": g.stability,
        "ci_pass1": list(g.ci_pass1) if g.ci_pass1 else None,
    }


def _corrected_json(c: CorrectedPass) -> dict[str, Any]:
    r = c.rate
    return {
        "raw": r.raw,
        "corrected": r.corrected,
        "interval": [r.low, r.high] if r.corrected is not None else None,
        "method": r.method,
        "trials": r.n,
        "judged": r.judged,
        "uncertified": list(c.uncertified),
        "uncorrectable": list(c.uncorrectable),
    }


def _results_json(res: RunResults) -> dict[str, Any]:
    h = res.run.header
    extra: dict[str, Any] = {}
    if res.corrected:  # only runs with judge-decided verdicts carry it
        extra["corrected_pass1"] = {g: _corrected_json(c) for g, c in res.corrected.items()}
    return {
        "run_id": h.run_id,
        "dataset": h.dataset_ref,
        "dataset_hash": h.dataset_hash,
        "agent": h.agent_spec,
        "agent_version": h.agent_version,
        "k": h.k,
        "finished": res.run.finished,
        "groups": [_group_json(g) for g in res.groups()],
        "flaky": res.flaky,
        "inadmissible": res.inadmissible,
        **extra,
    }


def _print_corrected(res: RunResults) -> None:
    if not res.corrected:
        return
    console.print(
        "pass@1 corrected for the judge's measured error (Rogan–Gladen; 95% interval "
        "carries the certification sample):"
    )
    for group, c in res.corrected.items():
        console.print(
            f"  {group}: {c.describe()} · {c.rate.judged} of {c.rate.n} trial(s) judge-decided",
            highlight=False,
        )


@click.group("results")
def results_group() -> None:
    """The results of runs: one run's metrics, or the list of runs."""


@results_group.command("list")
@FORMAT
@pass_project
def results_list_cmd(project: Project, fmt: str) -> None:
    """List the runs: those in the workbench, then those that exist only as log files."""
    rows = [
        {
            "run_id": r.id,
            "dataset": r.dataset,
            "agent": r.agent_spec,
            "agent_version": r.agent_version,
            "k": r.k,
            "started_at": r.started_at.isoformat(),
            "finished": r.finished_at is not None,
            "stored": "workbench",
        }
        for r in list_runs(project)
    ]
    rows += [
        {
            "run_id": f.header.run_id,
            "dataset": f.header.dataset,
            "agent": f.header.agent_spec,
            "agent_version": f.header.agent_version,
            "k": f.header.k,
            "started_at": f.header.started_at.isoformat(),
            "finished": f.finished,
            "stored": f"file {f.source}",
        }
        for f in list_run_files(project)
    ]
    if fmt == "json":
        emit_json(rows)
        return
    for stored in ("workbench", "file"):
        here = [r for r in rows if str(r["stored"]).split()[0] == stored]
        if stored == "file" and not here:
            break
        title = None if stored == "workbench" else "runs that exist only as log files"
        table = Table("run", "dataset", "agent", "version", "k", "finished", title=title)
        for r in here:
            table.add_row(
                str(r["run_id"]),
                str(r["dataset"]),
                str(r["agent"]),
                str(r["agent_version"] or ""),
                str(r["k"]),
                "yes" if r["finished"] else "no",
            )
        console.print(table)


@results_group.command("show")
@click.argument("run")
@FORMAT
@pass_project
def results_show_cmd(project: Project, run: str, fmt: str) -> None:
    """Show pass@1, pass^k, pass@k and stability of RUN per slice, split and source."""
    res = run_results(load_run(project, run))
    if fmt == "json":
        emit_json(_results_json(res))
        return
    h = res.run.header
    console.print(
        f"run [bold]{h.run_id}[/] · {h.dataset_ref} ({h.dataset_hash[:12]}) · {h.agent_version or h.agent_spec} · k={h.k}"
        + ("" if res.run.finished else " · [yellow]unfinished[/]")
    )
    k = h.k
    table = _results_table(k)
    for g in res.groups():
        table.add_row(*_group_row(g, k))
    Console(highlight=False, width=max(console.width, 120)).print(
        table
    )  # a data table: never squeezed
    _print_corrected(res)
    if res.retired is not None:
        console.print(
            f"{res.retired.cases} retired case(s) (split smoke) are counted apart, in the "
            f"'{res.retired.group}' row: every other row, like the gate, leaves them out"
        )
    if res.flaky:
        console.print(
            f"flaky cases ({len(res.flaky)}): {', '.join(res.flaky[:20])}{' …' if len(res.flaky) > 20 else ''}"
        )
    if res.inadmissible:
        console.print(
            f"[yellow]{res.inadmissible} verdict(s) rest on a judge not certified for them "
            "(never gate; see `casework judge certify`)[/]"
        )


def _compare_json(res: CompareResult) -> dict[str, Any]:
    c = res.comparison
    return {
        "better": res.better,
        "worse": res.worse,
        "cases": c.cases,
        "discrimination_rate": c.discrimination_rate,
        "inversion_rate": c.inversion_rate,
        "discriminating": [d.case_id for d in c.discriminating],
        "inverted": [d.case_id for d in c.inverted],
        "tied": len(c.tied),
        "mean_delta": c.mean_delta,
        "ci_delta": list(c.ci_delta) if c.ci_delta else None,
        "p_value": c.p_value,
        "by_slice": {
            s: {
                "cases": x.cases,
                "discrimination_rate": x.discrimination_rate,
                "inverted": len(x.inverted),
            }
            for s, x in res.by_slice.items()
        },
        "release": res.release.number if res.release else None,
    }


@click.command("compare")
@click.argument("better")
@click.argument("worse")
@click.option(
    "--no-write", is_flag=True, help="Only compare; do not record `discriminates` in a release."
)
@FORMAT
@pass_project
def compare_cmd(project: Project, better: str, worse: str, no_write: bool, fmt: str) -> None:
    """Pair RUN_BETTER with RUN_WORSE case by case: discrimination, inverted cases, paired test."""
    res = compare_runs(
        project, load_run(project, better), load_run(project, worse), write=not no_write
    )
    if fmt == "json":
        emit_json(_compare_json(res))
        return
    c = res.comparison
    console.print(f"[bold]{res.pair}[/] on {c.cases} shared cases")
    console.print(
        f"discrimination rate {c.discrimination_rate:.3f} ({len(c.discriminating)} cases), "
        f"inverted {len(c.inverted)}, tied {len(c.tied)}"
    )
    ci = f" [{c.ci_delta[0]:+.3f}, {c.ci_delta[1]:+.3f}]" if c.ci_delta else ""
    console.print(
        f"mean per-case pass-rate difference {c.mean_delta:+.3f}{ci}; exact sign test p = {c.p_value:.3g}"
    )
    table = Table("slice", "cases", "discrimination", "inverted")
    for s, x in res.by_slice.items():
        table.add_row(s, str(x.cases), f"{x.discrimination_rate:.3f}", str(len(x.inverted)))
    console.print(table)
    if c.inverted:
        console.print("inverted: " + ", ".join(d.case_id for d in c.inverted[:30]))
    if res.release is not None:
        console.print(
            f"recorded `discriminates` in release {res.release.number} ({res.release.hash[:12]})"
        )


def _retire_json(res: RetireResult) -> dict[str, Any]:
    return {
        "compared": res.retirement.compared,
        "all_pass": res.retirement.all_pass,
        "all_fail": res.retirement.all_fail,
        "moved": res.moved,
        "possible_label_errors": res.possible_label_errors,
        "release": res.release.number if res.release else None,
    }


@click.command("retire")
@click.argument("dataset")
@click.option(
    "--runs",
    "runs",
    multiple=True,
    required=True,
    help="A run of one compared system (repeat, 2+).",
)
@click.option("--dry-run", is_flag=True, help="Show what would move; write nothing.")
@FORMAT
@pass_project
def retire_cmd(
    project: Project, dataset: str, runs: tuple[str, ...], dry_run: bool, fmt: str
) -> None:
    """Move cases that separate none of the compared systems to split smoke, as a new version."""
    res = retire_cases(project, dataset, [load_run(project, r) for r in runs], dry_run=dry_run)
    if fmt == "json":
        emit_json(_retire_json(res))
        return
    r = res.retirement
    console.print(
        f"{r.compared} cases compared: {len(r.all_pass)} every system passes, {len(r.all_fail)} every system fails"
    )
    verb = "would move" if dry_run else "moved"
    console.print(f"{verb} {len(res.moved)} case(s) to split smoke")
    if res.possible_label_errors:
        console.print(
            "[yellow]possible label errors[/] (every system fails): "
            + ", ".join(res.possible_label_errors)
        )
    if res.release is not None:
        console.print(f"release {res.release.number} ({res.release.hash[:12]})")


def _gate_json(report: GateReport) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if report.corrected is not None:  # only when a judge decided gating verdicts
        extra["corrected_pass_rate"] = _corrected_json(report.corrected)
    return {
        "passed": report.passed,
        "pass_rate": report.pass_rate,
        **extra,
        "baseline_pass_rate": report.baseline_pass_rate,
        "cases": report.cases,
        "gating_slices": report.gating_slices,
        "failures": [
            {"code": r.code, "message": r.message, "slice": r.slice} for r in report.failures
        ],
        "warnings": [
            {"code": r.code, "message": r.message, "slice": r.slice} for r in report.warnings
        ],
    }


@click.command("gate")
@click.option("--run", "run", required=True, help="The run to decide on.")
@click.option("--baseline", default=None, help="Run of the released system to compare against.")
@click.option(
    "--github", is_flag=True, help="Also print GitHub Actions annotations (::error / ::warning)."
)
@click.option(
    "--allow-old-version",
    "allow_old_version",
    metavar="REASON",
    default=None,
    help="Let a run on an older release gate, for this reason (printed); else such a run fails.",
)
@FORMAT
@pass_project
def gate_cmd(
    project: Project,
    run: str,
    baseline: str | None,
    github: bool,
    allow_old_version: str | None,
    fmt: str,
) -> None:
    """Decide a release from dataset checks and RUN's results; exit 1 with the reasons on failure.

    The gate fails closed: the run must be on the dataset's latest release, every gating slice
    must be in it, and `[gate] min_pass_rate` must be set. A run imported with `import-run`
    never gates (its verdicts carry no per-check evidence).
    """
    report = gate_run(project, run, baseline, allow_old_version=allow_old_version)
    if github:
        for line in report.github_annotations():
            click.echo(line)
    if fmt == "json":
        emit_json(_gate_json(report))
    else:
        rate = _f(report.pass_rate)
        base = (
            f" (baseline {_f(report.baseline_pass_rate)})"
            if report.baseline_pass_rate is not None
            else ""
        )
        fixed = f"; {report.corrected.describe()}" if report.corrected is not None else ""
        console.print(
            f"pass@1 {rate}{base} on {report.cases} gating cases{fixed}; slices: {', '.join(report.gating_slices) or 'none'}"
        )
        for w in report.warnings:
            console.print(f"[yellow]warn[/] {w}")
        if report.passed:
            console.print("[green]gate PASSED[/]")
    if not report.passed:
        raise GateFailed("gate FAILED:\n" + "\n".join(f"  {r}" for r in report.failures))


@click.command("report")
@click.argument("run")
@click.option(
    "--vs", "vs", default=None, help="A run of another system to compare with (discrimination)."
)
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Output file (default: runs/<run>.html).",
)
@click.option(
    "--show-frozen",
    is_flag=True,
    help="Name failing frozen cases by id (never their content), for a local reviewer.",
)
@pass_project
def report_cmd(
    project: Project, run: str, vs: str | None, out: Path | None, show_frozen: bool
) -> None:
    """Write one self-contained HTML report of RUN (charts, failing cases with evidence).

    Frozen cases are counted, never shown.
    """
    target = out or log_path(project, load_run(project, run).header.run_id).with_suffix(".html")
    path = write_report(project, run, target, vs_ref=vs, show_frozen=show_frozen)
    console.print(f"wrote {project.relative(path)}")


COMMANDS: list[click.Command] = [
    run_cmd,
    results_group,
    compare_cmd,
    retire_cmd,
    gate_cmd,
    report_cmd,
]

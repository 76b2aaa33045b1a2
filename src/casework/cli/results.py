"""The `results` group: list runs, show one run's metrics, compare two runs case by case."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from casework.cli._moved import moved
from casework.cli._output import emit
from casework.cli.context import (
    FORMAT,
    console,
    example,
    pass_project,
)
from casework.project import Project
from casework.runner import (
    CompareResult,
    CorrectedPass,
    GroupMetrics,
    RunResults,
    compare_runs,
    list_run_files,
    list_runs,
    load_run,
    run_results,
)

if TYPE_CHECKING:
    from casework.runner.corrected_difference import CorrectedDifference
    from casework.runner.records import LoadedRun
    from casework.runner.sim_audit import SimulatorAudit

__all__ = ["COMMANDS", "corrected_difference_json", "corrected_json"]


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


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


def corrected_json(c: CorrectedPass) -> dict[str, Any]:
    """A judge-corrected pass rate as JSON (`results show` and `gate` print the same object)."""
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
        "estimator": c.estimator,
        "reviewed": c.reviewed,
        "note": c.note or None,
    }


def _simulator_audit(project: Project, run: LoadedRun) -> SimulatorAudit | None:
    """The simulated user's audit of a run with simulated users (``None`` for other runs)."""
    if not any(t.user_sim for t in run.trials):
        return None
    from casework.gate._gather import simulator_quarantine  # here: reads the dataset, workbench

    audit, _ = simulator_quarantine(project, run)
    return audit if audit is not None and audit.cases else None


def _frozen(run: LoadedRun) -> set[str]:
    return {t.case_id for t in run.trials if t.frozen}


def _simulator_json(audit: SimulatorAudit, frozen: set[str]) -> dict[str, Any]:
    """The audit as `results show` prints it: frozen cases counted, never named."""
    return {
        "threshold": audit.threshold,
        "slices": {
            s: {
                "errors": p.successes,
                "trials": p.n,
                "rate": p.estimate,
                "low": p.low,
                "high": p.high,
            }
            for s, p in sorted(audit.slices.items())
        },
        "quarantined": [c for c in audit.quarantined if c not in frozen],
        "quarantined_frozen": sum(c in frozen for c in audit.quarantined),
        "stale_reviews": audit.stale_reviews,
        "cases": {
            cid: {"trials": c.trials, "flagged": c.flagged, "reasons": c.reasons}
            for cid, c in sorted(audit.cases.items())
            if cid not in frozen
        },
    }


def _print_simulator(audit: SimulatorAudit | None, frozen: set[str]) -> None:
    if audit is None:
        return
    console.print(
        "simulated user's error rate (mechanical checks and reviews blaming it; 95% interval "
        f"clustered by case; quarantine above {audit.threshold:.0%}):"
    )
    for name, p in sorted(audit.slices.items()):
        ci = f"[{p.low:.2f}, {p.high:.2f}]" if p.low is not None and p.high is not None else ""
        rate = _f(p.estimate)
        console.print(f"  {name}: {rate} {ci} · {p.successes} of {p.n} trial(s)", highlight=False)
    for cid in audit.quarantined:
        if cid not in frozen:
            console.print(
                f"  [yellow]quarantined from gating: {audit.why(cid)}[/]", highlight=False
            )
    hidden = sum(c in frozen for c in audit.quarantined)
    if hidden:
        console.print(f"  [yellow]{hidden} frozen case(s) quarantined from gating[/]")
    if audit.stale_reviews:
        console.print(
            f"  {audit.stale_reviews} review(s) left out as stale (another scenario or simulator)"
        )


def _results_json(res: RunResults, simulator: SimulatorAudit | None = None) -> dict[str, Any]:
    h = res.run.header
    extra: dict[str, Any] = {}
    if res.corrected:  # only runs with judge-decided verdicts carry it
        extra["corrected_pass1"] = {g: corrected_json(c) for g, c in res.corrected.items()}
    if simulator is not None:  # only runs with simulated users carry it
        extra["simulator"] = _simulator_json(simulator, _frozen(res.run))
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


def _widest(notes: list[str]) -> list[str]:
    """The notes without those another says more of ("has none for A, B" holds "has none for A").

    Each group (all, a slice, a split) falls back for the strata it holds: the overall group's
    note names them all, and the groups' notes would repeat parts of it.
    """

    def parts(note: str) -> tuple[str, frozenset[str], str]:
        head, sep, rest = note.partition(" has none for ")
        listed, _, tail = rest.rpartition(": ")
        return (head, frozenset(listed.split(", ")), tail) if sep else (note, frozenset(), "")

    parsed = [parts(n) for n in notes]
    return [
        note
        for note, (head, items, tail) in zip(notes, parsed, strict=True)
        if not any((h, t) == (head, tail) and items < other for h, other, t in parsed if items)
    ]


def _print_corrected(res: RunResults) -> None:
    if not res.corrected:
        return
    overall = res.corrected.get("all") or next(iter(res.corrected.values()))
    if overall.estimator == "ppi++":
        console.print(
            "pass@1 corrected for the judge's measured error (PPI++ with people's verdicts on "
            f"{overall.reviewed} of this run's trial(s); 95% interval clustered by case):"
        )
    else:
        console.print(
            "pass@1 corrected for the judge's measured error (Rogan–Gladen; 95% interval "
            "carries the certification sample):"
        )
    notes = _widest(sorted({c.note for c in res.corrected.values() if c.note}))
    for note in notes:
        console.print(f"  [yellow]{note}[/]", highlight=False)
    for group, c in res.corrected.items():
        console.print(
            f"  {group}: {c.describe()} · {c.rate.judged} of {c.rate.n} trial(s) judge-decided",
            highlight=False,
        )


@click.group("results")
def results_group() -> None:
    """The results of runs: the list of runs, one run's metrics, two runs compared case by case.

    See docs/gate.md (the metrics and how the gate reads them).
    """


@example("casework results list", "casework results list --format json")
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
        from casework.runner.outputs import RunListing  # here: only JSON output needs it

        emit(RunListing.model_validate(rows))
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


@example("casework results show latest")
@results_group.command("show")
@click.argument("run")
@FORMAT
@pass_project
def results_show_cmd(project: Project, run: str, fmt: str) -> None:
    """Show pass@1, pass^k, pass@k and stability of RUN per slice, split and source."""
    from casework.runner.reviewed import reviewed_trials  # here: reads the workbench

    loaded = load_run(project, run)
    estimator = project.config.judge.estimator
    reviewed = reviewed_trials(project, loaded) if estimator == "ppi++" else {}
    res = run_results(loaded, estimator=estimator, reviewed=reviewed)
    audit = _simulator_audit(project, loaded)
    if fmt == "json":
        from casework.runner.outputs import RunResultsOutput  # here: only JSON output needs it

        emit(RunResultsOutput.model_validate(_results_json(res, audit)))
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
    _print_simulator(audit, _frozen(loaded))
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


def corrected_difference_json(d: CorrectedDifference) -> dict[str, Any]:
    """The JSON form of a judge-corrected difference (`results compare`, `gate --baseline`)."""
    return {
        "cases": d.cases,
        "raw": d.raw,
        "corrected": d.corrected,
        "interval": None if d.low is None or d.high is None else [d.low, d.high],
        "estimator": d.estimator,
        "method": d.method,
        "reviewed": list(d.reviewed),
        "note": d.note or None,
        "problem": d.problem or None,
    }


def _compare_json(res: CompareResult, fixed: CorrectedDifference | None) -> dict[str, Any]:
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
        "corrected_difference": None if fixed is None else corrected_difference_json(fixed),
    }


@example("casework results compare run-b run-a --no-write")
@results_group.command("compare")
@click.argument("better")
@click.argument("worse")
@click.option(
    "--no-write", is_flag=True, help="Only compare; do not record `discriminates` in a release."
)
@FORMAT
@pass_project
def compare_cmd(project: Project, better: str, worse: str, no_write: bool, fmt: str) -> None:
    """Pair RUN_BETTER with RUN_WORSE case by case: discrimination, inverted cases, paired test."""
    from casework.runner.corrected_difference import runs_corrected_difference  # numpy, scipy

    runs = load_run(project, better), load_run(project, worse)
    res = compare_runs(project, *runs, write=not no_write)
    fixed = runs_corrected_difference(project, *runs)
    if fmt == "json":
        from casework.runner.outputs import RunComparison  # here: only JSON output needs it

        emit(RunComparison.model_validate(_compare_json(res, fixed)))
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
    if fixed is not None:
        console.print(f"pass@1 {fixed.describe()}")
        if fixed.corrected is not None:
            console.print(f"interval: {fixed.method}")
        if fixed.note:
            console.print(f"[yellow]{fixed.note}[/]")
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


COMMANDS: list[click.Command] = [results_group]

#: The old top-level spelling, hidden for one release.
ALIASES: list[click.Command] = [
    moved(results_group.commands["compare"], "compare", "results compare")
]

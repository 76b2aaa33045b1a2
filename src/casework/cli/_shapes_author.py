"""`shapes author` (generate cases along an axis) and `shapes report` (the generator's gate).

Also the old `author` group, hidden for one release: `author review` keeps its implementation
and names the review queue that replaces it.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from casework.authoring import (
    AXES,
    MIN_DISTANCE,
    AuthorOptions,
    AuthorReport,
    AuthorResult,
    author,
    author_report,
    open_authored,
    review_from_file,
)
from casework.cli._moved import moved, note_moved
from casework.cli._output import emit
from casework.cli.context import FORMAT, console, err_console, example, pass_project
from casework.errors import UsageError
from casework.project import Project
from casework.shapes import shape_set_names

__all__ = ["OLD_AUTHOR", "author_cmd", "report_cmd"]


def _result_text(result: AuthorResult) -> None:
    run = result.run
    console.print(
        f"{run.shape_set}/{run.shape}, axis {run.axis}: {run.generated} generated, "
        f"{len(result.cases)} queued for review, {len(result.rejections)} rejected"
    )
    for r in result.rejections:
        console.print(f"  candidate {r.index}: {r.reason}: {r.detail}", markup=False)
    for item, case in zip(result.queued, result.cases, strict=False):
        console.print(f"  item {item}: {case.id} ({case.oracle.class_})", markup=False)


@example(
    "casework shapes author --shape=shape-03 --axis mid-task-goal-change -n 5",
    "casework shapes author --shapes refunds --shape=shape-01 --axis missing-or-malformed-input",
)
@click.command("author")
@click.option("--shapes", "shapes", default=None, help="Shape set (default: the only one).")
@click.option("--shape", default=None, help="Shape id in the set (`shape-03`).")
@click.option("--axis", type=str, default=None, help=f"One of: {', '.join(AXES)}.")
@click.option("-n", "n", type=int, default=5, show_default=True, help="Candidates to generate.")
@click.option("--dataset", default=None, help="Dataset the cases join (default: the set's name).")
@click.option(
    "--slice", "slice_", default=None, help="Slice of the cases (default: the set's name)."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed sent with each request.")
@click.option("--frozen", is_flag=True, help="Mark the cases frozen (never exported).")
@click.option(
    "--min-distance",
    "min_distance",
    type=float,
    default=MIN_DISTANCE,
    show_default=True,
    help="Cosine distance at or under which a candidate is a near duplicate.",
)
@FORMAT
@pass_project
def author_cmd(
    project: Project,
    shapes: str | None,
    shape: str | None,
    axis: str | None,
    n: int,
    dataset: str | None,
    slice_: str | None,
    seed: int,
    frozen: bool,
    min_distance: float,
    fmt: str,
) -> None:
    """Generate cases for a shape along an axis (--shape, --axis, -n) into the review queue.

    The generator ([models.generator]) gets the shape, its most central scrubbed conversation,
    the declared tools and the axis, and returns a situation, the outcome in one sentence and a
    proposed oracle. Candidates breaking a rule are rejected and counted; the rest are queued as
    generated-case review items (`casework review list --kind generated-case`).
    """
    if shape is None or axis is None:
        raise UsageError("name a shape and an axis.", param="shape")
    options = AuthorOptions(
        shapes=shapes or _only_set(project),
        shape=shape,
        axis=axis,
        n=n,
        dataset=dataset,
        slice=slice_,
        seed=seed,
        frozen=frozen,
        min_distance=min_distance,
    )
    result = author(project, options)
    if fmt == "json":
        from casework.authoring.outputs import AuthorOutput  # here: only JSON output needs it

        emit(AuthorOutput.model_validate(result.as_json()))
    else:
        _result_text(result)


@click.pass_context
def _old_author(ctx: click.Context, /, **params: object) -> None:
    """The old `author` group acting by itself: generate, as `shapes author` does."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(author_cmd, **params)


def _only_set(project: Project) -> str:
    names = shape_set_names(project)
    if len(names) != 1:
        listing = ", ".join(names) or "none yet"
        raise UsageError(f"name the shape set (there are: {listing}).", param="shapes")
    return names[0]


@click.command("review")
@click.option(
    "--decisions",
    type=click.Path(path_type=Path),
    default=None,
    help="JSONL decision file (item, decision, reason, case, seconds, reviewer).",
)
@FORMAT
@pass_project
def review_cmd(project: Project, decisions: Path | None, fmt: str) -> None:
    """Decide authored candidates from a decision file, or list the open ones.

    Every line is checked before any decision is stored. Without --decisions, the open items are
    listed; decide them one at a time with `casework review decide`.
    """
    if decisions is None:
        tasks = open_authored(project)
        if fmt == "json":
            from casework.review.outputs import ReviewItemList  # here: only JSON output needs it

            emit(ReviewItemList.model_validate([t.as_json() for t in tasks]))
            return
        table = Table()
        for column in ("item", "case", "slice", "note"):
            table.add_column(column)
        for t in tasks:
            table.add_row(str(t.id), t.subject, t.slice or "", str(t.payload.get("note") or ""))
        console.print(table)
        console.print(f"{len(tasks)} open authored item(s)")
        return
    outcome = review_from_file(project, decisions)
    if fmt == "json":
        # What the new spelling (`review decide --decisions FILE`) prints: the decided items.
        from casework.review.outputs import ReviewItemList  # here: only JSON output needs it

        emit(ReviewItemList.model_validate([t.as_json() for t in outcome.decided]))
        return
    counts: dict[str, int] = {}
    for t in outcome.decided:
        counts[t.decision or ""] = counts.get(t.decision or "", 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing"
    console.print(f"decided {len(outcome.decided)} item(s): {summary}")


def _report_text(report: AuthorReport) -> None:
    console.print(
        f"shape set {report.shape_set}: {report.generated} generated, {report.queued} passed the "
        f"rules, {len(report.accepted)} accepted by people, {report.pending} awaiting review"
    )
    console.print(f"acceptance rate: {report.acceptance_rate:.0%} (accepted / generated)")
    if report.warning:
        err_console.print(f"warning: {report.warning}", markup=False)
    rules = ", ".join(f"{k} {v}" for k, v in report.rejected_by_rule.items()) or "none"
    console.print(f"rejected by rule: {rules}", markup=False)
    reviews = "; ".join(f"{k} ({v})" for k, v in report.rejected_by_review.items()) or "none"
    console.print(f"rejected by reviewers: {reviews}", markup=False)
    minutes = report.minutes_per_accepted
    console.print(
        "human minutes per accepted case: " + ("n/a" if minutes is None else f"{minutes:.1f}")
    )
    for q in report.quota:
        console.print(f"unsatisfiable: {q}", markup=False)
    d = report.discrimination
    if d is not None:
        console.print(
            f"discrimination: {len(d.discriminating)} of {d.cases} accepted cases separate "
            f"{d.better} from {d.worse} ({d.rate:.0%}); {len(d.inverted)} inverted",
            markup=False,
        )
        sb = "n/a" if d.stability_better is None else f"{d.stability_better:.0%}"
        sw = "n/a" if d.stability_worse is None else f"{d.stability_worse:.0%}"
        console.print(f"verdict stability over {d.trials} trials: {sb} (better), {sw} (worse)")
    _coverage_text(report)


def _coverage_text(report: AuthorReport) -> None:
    axes = list(AXES)
    table = Table(title="accepted cases per shape × axis")
    table.add_column("shape")
    for i, _ in enumerate(axes):
        table.add_column(f"a{i + 1}", justify="right")
    for shape, row in report.coverage.items():
        table.add_row(shape, *(str(row.get(a, 0)) for a in axes))
    console.print(table)
    console.print("  ".join(f"a{i + 1}={a}" for i, a in enumerate(axes)), markup=False)
    by_shape: dict[str, list[str]] = {}
    for cell in report.empty_cells:
        shape, _, axis = cell.partition(" × ")
        by_shape.setdefault(shape, []).append(axis)
    for shape, missing in by_shape.items():
        if len(missing) == len(axes):
            console.print(f"empty: {shape} (every axis)", markup=False)
        else:
            console.print(f"empty: {shape} × {', '.join(missing)}", markup=False)


@example(
    "casework shapes report --shapes refunds",
    "casework shapes report --better python:agents.good:run --worse python:agents.bad:run",
)
@click.command("report")
@click.option("--shapes", "shapes", default=None, help="Shape set (default: the only one).")
@click.option("--better", default=None, help="Agent spec of the known-better system.")
@click.option("--worse", default=None, help="Agent spec of the deliberately degraded system.")
@click.option("--trials", type=int, default=3, show_default=True, help="Trials per case and agent.")
@FORMAT
@pass_project
def report_cmd(
    project: Project,
    shapes: str | None,
    better: str | None,
    worse: str | None,
    trials: int,
    fmt: str,
) -> None:
    """The generator's gate: acceptance, rejections, minutes, discrimination, coverage.

    With --better and --worse both agents run --trials times on the accepted cases' slices
    (the runner, then compare on the accepted cases).
    """
    report = author_report(
        project, shapes or _only_set(project), better=better, worse=worse, trials=trials
    )
    if fmt == "json":
        from casework.authoring.outputs import AuthorReportOutput  # here: only JSON output needs it

        emit(AuthorReportOutput.model_validate(report.as_json()))
    else:
        _report_text(report)


#: The old `author` group: the same options, acting when no sub-command is named; each
#: sub-command notes its own new spelling.
_author_group = note_moved(
    click.Group(
        "author",
        params=author_cmd.params,
        callback=_old_author,
        invoke_without_command=True,
        help=author_cmd.help,
    ),
    "author",
    "shapes author",
)
_author_group.add_command(moved(report_cmd, "author report", "shapes report"))
_author_group.add_command(note_moved(review_cmd, "author review", "review decide --decisions FILE"))

#: The old top-level spelling, hidden for one release.
OLD_AUTHOR: list[click.Command] = [_author_group]

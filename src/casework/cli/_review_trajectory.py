"""`review add-trials` and `review agreement`: trajectory reviews of a run's trials."""

from __future__ import annotations

import click

from casework.cli._output import emit
from casework.cli.context import FORMAT, console, example, pass_project
from casework.project import Project
from casework.review import ReviewTask, add_items, list_tasks
from casework.review._trajectory import trajectory_items
from casework.review._trajectory_agreement import trajectory_agreement
from casework.runner.sim_audit import TRAJECTORY


@example("casework review add-trials 20260101-ab12 -n 40 --reviewer ana --reviewer ben")
@click.command("add-trials")
@click.argument("run")
@click.option("-n", "n", type=int, default=20, show_default=True, help="Trials to draw.")
@click.option(
    "--reviewer", "reviewers", multiple=True, required=True, help="A reviewer (repeatable)."
)
@click.option(
    "--overlap",
    type=float,
    default=0.2,
    show_default=True,
    help="Share of drawn trials given to two reviewers (for step-level agreement).",
)
@click.option(
    "--tolerance",
    type=int,
    default=1,
    show_default=True,
    help="Steps two reviewers' first failing steps may differ by and still agree.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option("--include-frozen", is_flag=True, help="Also draw trials of frozen cases.")
@FORMAT
@pass_project
def add_trials_cmd(
    project: Project,
    run: str,
    n: int,
    reviewers: tuple[str, ...],
    overlap: float,
    tolerance: int,
    seed: int,
    include_frozen: bool,
    fmt: str,
) -> None:
    """Queue N trials of RUN for step-level review, stratified by slice and verdict.

    Each reviewer sees one trial's steps (turns, tool calls with arguments and results, the state
    diff), never its verdict, and marks the first failing step (or none), a category of the
    taxonomy, a severity and who is at fault. Docs: docs/review.md, "Trajectories".
    """
    items = trajectory_items(
        project,
        run,
        n,
        reviewers,
        overlap=overlap,
        tolerance=tolerance,
        seed=seed,
        include_frozen=include_frozen,
    )
    report = add_items(project, items)
    trials = len({i.subject.rpartition("#")[0] for i in items})
    if fmt == "json":
        from casework.review.outputs import ReviewAdd  # here: only JSON output needs it

        emit(ReviewAdd(created=list(report.created), existing=list(report.existing)))
        return
    console.print(
        f"{trials} trial(s) drawn: {len(report.created)} trajectory items queued, "
        f"{len(report.existing)} already open"
    )


@example("casework review agreement --tolerance 1")
@click.command("agreement")
@click.option("--dataset", default=None, help="Only this dataset's reviews.")
@click.option(
    "--tolerance",
    type=int,
    default=1,
    show_default=True,
    help="Steps two first failing steps may differ by and still agree.",
)
@FORMAT
@pass_project
def agreement_cmd(project: Project, dataset: str | None, tolerance: int, fmt: str) -> None:
    """Step-level agreement of doubled trajectory reviews: kappa on the step and the category.

    Docs: docs/review.md, "Trajectories".
    """
    tasks: list[ReviewTask] = list_tasks(project, kind=TRAJECTORY, dataset=dataset)
    found = trajectory_agreement(tasks, tolerance)
    if fmt == "json":
        from casework.review.outputs import ReviewAgreement  # here: only JSON output needs it

        emit(ReviewAgreement.model_validate(found.as_json()))
        return

    def _k(value: float | None) -> str:
        return "undefined" if value is None else f"{value:.3f}"

    console.print(
        f"{found.pairs} doubled trial(s), tolerance ±{tolerance}: step kappa "
        f"{_k(found.step.kappa)} (agreement {_k(found.step.p_o)}), category kappa "
        f"{_k(found.category.kappa)} (agreement {_k(found.category.p_o)})"
    )

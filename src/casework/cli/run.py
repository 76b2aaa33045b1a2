"""`casework run`: an agent on a pinned dataset version, k trials per case, graded and logged."""

from __future__ import annotations

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from casework.cli._output import emit
from casework.cli._progress import Bar
from casework.cli.context import (
    FORMAT,
    SLICES,
    SPLIT_FILTER,
    console,
    err_console,
    example,
    pass_project,
)
from casework.project import Project
from casework.runner import (
    RunRequest,
    TrialRecord,
)
from casework.runner.shards import run_sharded

__all__ = ["COMMANDS"]

#: Golden-action warnings printed after a run; the rest are counted (the report lists them all).
MAX_WARNINGS = 20


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
        self.trial_passed(record.verdict.passed)

    def trial_passed(self, passed: bool | None) -> None:
        """One trial ended with this verdict (all the bar shows of it)."""
        if passed:
            self.passed += 1
        elif passed is False:
            self.failed += 1
        self.bar.update(
            advance=1,
            description=f"trials [green]{self.passed} pass[/] [red]{self.failed} fail[/]",
        )


@example(
    "casework run refunds --agent python:agents.refunds:answer -k 3",
    "casework run refunds@latest --split holdout --format json",
    "casework run refunds -k 8 --concurrency 512 --workers 2",
)
@click.command("run")
@click.argument("dataset", required=False, default="")
@click.option(
    "--agent",
    "agent",
    default=None,
    help="python:pkg.mod:fn, http:URL, cmd:COMMAND or adk:URL/APP (default: [agent] spec).",
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
@click.option(
    "--workers",
    type=int,
    default=1,
    show_default=True,
    help="Worker processes sharing the trials (each its own event loop; --concurrency in all).",
)
@click.option(
    "--ray",
    "use_ray",
    is_flag=True,
    help="Run the shards as Ray tasks (RAY_ADDRESS, else a local Ray); see docs/agents.md.",
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
    workers: int,
    use_ray: bool,
    fmt: str,
) -> None:
    """Run an agent on DATASET[@VERSION]: k independent trials per case, graded, logged, stored.

    See docs/agents.md.
    """
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
        summary = run_sharded(
            project, request, workers=workers, use_ray=use_ray, observer=_Trials(bar)
        )
    end, header = summary.end, summary.header
    # Skipped golden actions change what a case's golden state is: said where the run is read.
    failures = header.golden_failures
    for failure in failures[:MAX_WARNINGS]:
        err_console.print(f"warning: {failure.warning()}", markup=False)
    if len(failures) > MAX_WARNINGS:
        more = len(failures) - MAX_WARNINGS
        err_console.print(f"warning: … and {more} more skipped golden action(s) (see the report)")
    if fmt == "json":
        from casework.runner.outputs import RunSummary  # here: only JSON output needs it

        data = end.model_dump(exclude={"schema_version"})
        emit(RunSummary.model_validate({"run_id": header.run_id, "log": str(summary.log), **data}))
        return
    console.print(
        f"run [bold]{header.run_id}[/]: {end.trials} trials on {header.dataset_ref} — "
        f"{end.passed} passed, {end.failed} failed, {end.undetermined} undetermined, {end.errors} agent errors; "
        f"log {project.relative(summary.log)}"
    )
    console.print(f"next: casework results show {header.run_id}")


COMMANDS: list[click.Command] = [run_cmd]

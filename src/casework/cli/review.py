"""Review queue commands: `review sync|add-cases|list|show|decide` over the generic review items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from casework.cli.context import FORMAT, console, emit_json, pass_project
from casework.dataset import read_cases
from casework.decoding import decode_utf8
from casework.errors import InputError
from casework.project import Project
from casework.review import (
    STATUSES,
    ReviewTask,
    add_items,
    decide_task,
    generated_case_item,
    get_task,
    list_tasks,
    review_kinds,
    sync_leakage,
)

__all__ = ["COMMANDS"]


@click.group("review")
def review_group() -> None:
    """Review queue: near-duplicate pairs and generated cases, decided one item at a time."""


@review_group.command("sync")
@click.argument("dataset")
@FORMAT
@pass_project
def sync_cmd(project: Project, dataset: str, fmt: str) -> None:
    """Build leakage-pair items from DATASET's open leakage flags (safe to run again).

    Items whose flag was settled outside the queue (`leakage decide`, resolved, gone) are
    withdrawn.
    """
    report = sync_leakage(project, dataset)
    if fmt == "json":
        emit_json(report.as_json())
        return
    console.print(
        f"{report.dataset}: {len(report.created)} new leakage-pair items, "
        f"{len(report.existing)} already open, {len(report.withdrawn)} withdrawn"
    )


@review_group.command("add-cases")
@click.argument("dataset")
@click.argument("cases_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--source", required=True, help="What generated the cases (shown to reviewers).")
@FORMAT
@pass_project
def add_cases_cmd(project: Project, dataset: str, cases_file: Path, source: str, fmt: str) -> None:
    """Queue the generated cases in CASES_FILE (JSONL) for review before they join DATASET."""
    cases = read_cases(cases_file, shown=project.relative(cases_file))
    report = add_items(project, [generated_case_item(dataset, c, source=source) for c in cases])
    if fmt == "json":
        emit_json({"created": list(report.created), "existing": list(report.existing)})
        return
    console.print(
        f"{dataset}: {len(report.created)} generated-case items queued, "
        f"{len(report.existing)} already open"
    )


@review_group.command("list")
@click.option(
    "--kind", default=None, metavar="KIND", help="Only this kind (leakage-pair, generated-case)."
)
@click.option(
    "--status", type=click.Choice(STATUSES), default=None, help="Only items in this status."
)
@click.option("--dataset", default=None, help="Only this dataset's items.")
@FORMAT
@pass_project
def list_cmd(
    project: Project, kind: str | None, status: str | None, dataset: str | None, fmt: str
) -> None:
    """List review items, oldest first."""
    tasks = list_tasks(project, kind=kind, status=status, dataset=dataset)
    if fmt == "json":
        emit_json([t.as_json() for t in tasks])
        return
    if not tasks:
        console.print("no review items")
        return
    table = Table("id", "kind", "dataset", "subject", "slice", "status", "decision", "reviewer")
    for t in tasks:
        table.add_row(
            str(t.id),
            t.kind,
            t.dataset,
            escape(t.subject),
            t.slice or "",
            t.status,
            t.decision or "",
            t.reviewer or "",
        )
    console.print(table)


def _highlighted(text: str, spans: list[list[int]]) -> str:
    out, at = [], 0
    for start, end in spans:
        out += [escape(text[at:start]), f"[reverse]{escape(text[start:end])}[/reverse]"]
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def _render_task(task: ReviewTask) -> None:
    console.print(f"review item {task.id}: {task.kind} · {task.dataset} · {escape(task.subject)}")
    console.print(
        f"status: {task.status}"
        + (f" ({task.decision} by {task.reviewer})" if task.decision else "")
    )
    if task.kind == "leakage-pair":
        p = task.payload
        console.print(f"Jaccard {p['jaccard']:.3f}, {p['shared_count']} shared shingles")
        for side in ("left", "right"):
            row = p[side]
            console.print(f"\n[bold]{side}: {escape(row['case_id'])} ({row['split']})[/bold]")
            console.print(_highlighted(row["text"], row["highlight"]))
    else:
        console.print(escape(json.dumps(task.payload, indent=2, ensure_ascii=False)))
    kind = review_kinds()[task.kind]
    if task.status == "open":
        console.print(
            f"\ndecide: casework review decide {task.id} {'|'.join(kind.decisions)} --reviewer NAME"
        )


@review_group.command("show")
@click.argument("task_id", metavar="ID", type=int)
@FORMAT
@pass_project
def show_cmd(project: Project, task_id: int, fmt: str) -> None:
    """Show review item ID with what a reviewer needs to decide it."""
    task = get_task(project, task_id)
    if fmt == "json":
        emit_json(task.as_json())
    else:
        _render_task(task)


def _edited(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    shown = str(path)
    try:
        value = json.loads(decode_utf8(path.read_bytes(), shown))
    except json.JSONDecodeError as exc:
        raise InputError(shown, exc.lineno, None, f"not JSON: {exc.msg}") from None
    return {"case": value}


@review_group.command("decide")
@click.argument("task_id", metavar="ID", type=int)
@click.argument("decision")
@click.option("--reviewer", required=True, help="Who decides (pseudonymous id).")
@click.option("--reason", default=None, help="Why (required to reject a generated case).")
@click.option("--seconds", type=float, default=None, help="Seconds the item was on screen.")
@click.option(
    "--edited",
    "data",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="For an edit: a file holding the edited case as JSON.",
)
@FORMAT
@pass_project
def decide_cmd(
    project: Project,
    task_id: int,
    decision: str,
    reviewer: str,
    reason: str | None,
    seconds: float | None,
    data: Path | None,
    fmt: str,
) -> None:
    """Decide review item ID (leakage-pair: move-left|move-right|keep|template; generated-case: accept|edit|reject).

    The decision is applied as the matching command does (`leakage decide` for a pair; a
    generated case joins the dataset's working tree). When two reviewers decide the same item,
    the first wins and the second gets an error.
    """
    task = decide_task(
        project,
        task_id,
        decision,
        reviewer=reviewer,
        reason=reason,
        seconds=seconds,
        data=_edited(data),
    )
    if fmt == "json":
        emit_json(task.as_json())
        return
    console.print(f"review item {task.id} ({task.kind}, {escape(task.subject)}): {task.decision}")
    if task.kind == "leakage-pair":
        console.print(f"apply decisions: casework leakage resolve {task.dataset}")
    elif task.decision in ("accept", "edit"):
        console.print(f"the case is in the working tree: casework release {task.dataset} -m MSG")


COMMANDS: list[click.Command] = [review_group]

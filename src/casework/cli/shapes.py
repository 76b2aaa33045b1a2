"""The `shapes` group: build, list, show and drift of failure shapes; author cases along them."""

from __future__ import annotations

import sys
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from casework.cli._output import emit
from casework.cli._progress import Bar
from casework.cli._shapes_author import OLD_AUTHOR, author_cmd, report_cmd
from casework.cli.context import FORMAT, console, example, pass_project
from casework.mining import FORMATS
from casework.project import Project
from casework.shapes import (
    SAMPLE,
    BuildOptions,
    ClusterParams,
    DriftOptions,
    DriftReport,
    Shape,
    ShapeBuild,
    build_shapes,
    drift,
    load_shapes,
    shape_set_names,
)

__all__ = ["COMMANDS"]

_TRACE_FORMAT = click.option(
    "--trace-format",
    "trace_format",
    type=click.Choice(FORMATS),
    default=None,
    help="Trace format of every file (default: detected per file, as `casework mine` does).",
)


def _shape_row(shape: Shape) -> dict[str, Any]:
    return {
        "id": shape.id,
        "name": shape.name,
        "named_by": shape.named_by,
        "size": shape.size,
        "share": shape.share,
        "terms": shape.terms,
        "signals": shape.signals,
        "representative": shape.representatives[0].case_id,
    }


def _shapes_table(shapes: list[Shape]) -> Table:
    table = Table(show_lines=False)
    for column in ("shape", "size", "share", "name"):
        table.add_column(column, justify="right" if column in ("size", "share") else "left")
    for s in shapes:
        table.add_row(s.id, str(s.size), f"{100 * s.share:.1f}%", s.name)
    return table


@click.group("shapes")
def shapes_group() -> None:
    """Failure shapes of production traces: build, list, show, drift; author cases along them.

    `shapes author` generates cases for a shape along an axis into the review queue; `shapes
    report` is the generator's gate. See docs/authoring.md.
    """


def _build_json(build: ShapeBuild) -> dict[str, Any]:
    return {
        "name": build.name,
        "changed": build.changed,
        "version": build.version,
        "conversations": build.conversations,
        "failing": build.failing,
        "after_as_of": build.after_as_of,
        "unshaped": build.unshaped,
        "llm_fallbacks": build.llm_fallbacks,
        "saturation": asdict(build.saturation),
        "key_fingerprint": build.key_fingerprint,
        "sampling": asdict(build.sampling) if build.sampling else None,
        "shapes": [_shape_row(s) for s in build.shapes],
    }


@example("casework shapes build traces/2026-w14/ --name refunds-w14")
@shapes_group.command("build")
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", required=True, help="Shape set name: saved as shapes/NAME.jsonl.")
@click.option(
    "--as-of",
    "as_of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="Leave out conversations that started after this UTC date (default: today).",
)
@click.option(
    "--names",
    type=click.Choice(["offline", "llm"]),
    default="offline",
    show_default=True,
    help="offline: distinctive terms and the most central conversation; llm: one sentence "
    "from [models.generator].",
)
@click.option(
    "--threshold",
    type=float,
    default=ClusterParams().threshold,
    show_default=True,
    help="Average-linkage cosine distance at which clusters stop merging.",
)
@click.option(
    "--min-size",
    "min_size",
    type=int,
    default=ClusterParams().min_size,
    show_default=True,
    help="Smallest cluster that counts as a shape.",
)
@click.option(
    "--sample",
    type=int,
    default=SAMPLE,
    show_default=True,
    help="Conversations clustered at once (the rest are assigned to the clusters found).",
)
@click.option("-m", "--message", default=None, help="Version message.")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where reading, scrubbing, embedding and assignment run: local forked workers, or Ray "
    "Data (extra casework[ray]). Above [shapes] sample_size the rest stream in batches.",
)
@_TRACE_FORMAT
@FORMAT
@pass_project
def build_cmd(
    project: Project,
    traces: tuple[Path, ...],
    name: str,
    as_of: datetime | None,
    names: Any,
    threshold: float,
    min_size: int,
    sample: int,
    message: str | None,
    engine: Any,
    trace_format: Any,
    fmt: str,
) -> None:
    """Cluster the failing conversations of TRACES into named failure shapes and save them.

    Failing conversations (mining's failure signals) are scrubbed exactly as `casework mine`
    scrubs them, embedded with [models.embedder] and clustered; the number of shapes is found,
    not given. Reports the Good-Turing share of failing traffic in shapes not seen yet.
    """
    options = BuildOptions(
        as_of=as_of.date() if as_of else None,
        names=names,
        cluster=ClusterParams(threshold=threshold, min_size=min_size, sample=sample),
        trace_format=trace_format,
        message=message,
        engine=engine,
    )
    with Bar("reading and scrubbing trace files", fmt) as bar:
        build = build_shapes(
            project,
            list(traces),
            name,
            options,
            on_progress=lambda done, total: bar.update(completed=done, total=total),
        )
    if fmt == "json":
        from casework.shapes.outputs import ShapeBuildOutput  # here: only JSON output needs it

        emit(ShapeBuildOutput.model_validate(_build_json(build)))
        return
    console.print(
        f"read {build.conversations} conversation(s): {build.failing} failing, "
        f"{len(build.shapes)} shape(s) holding {build.failing - build.unshaped}, "
        f"{build.unshaped} in no shape"
    )
    if build.after_as_of:
        console.print(f"left out {build.after_as_of} conversation(s) started after the as-of date")
    if (sampled := build.sampling) is not None:
        console.print(
            f"sampled: fitted on {sampled.fitted} failing conversation(s) ([shapes] sample_size "
            f"{sampled.sample_size}); {sampled.assigned} assigned to a shape, {sampled.unassigned} "
            f"unassigned (outside every shape's radius), in batches of {sampled.batch_size}",
            markup=False,
        )
    console.print(_shapes_table(build.shapes))
    console.print(f"saturation: {build.saturation.explanation}", markup=False)
    if build.llm_fallbacks:
        console.print(
            f"{build.llm_fallbacks} shape(s) named offline: the model's answer was not one sentence"
        )
    v = build.version
    where = f"shapes/{build.name}.jsonl"
    if build.changed:
        console.print(f"{where}: version {v.number} ({v.hash[:12]})")
    else:
        console.print(f"{where}: unchanged, still version {v.number} ({v.hash[:12]})")


@example("casework shapes list")
@shapes_group.command("list")
@FORMAT
@pass_project
def list_cmd(project: Project, fmt: str) -> None:
    """List the saved shape sets with their latest version."""
    rows: list[dict[str, Any]] = []
    for name in shape_set_names(project):
        saved = load_shapes(project, name)
        v = saved.version
        rows.append(
            {
                "name": name,
                "version": v.number,
                "hash": v.hash,
                "created_at": v.created_at.isoformat(),
                "as_of": v.as_of.isoformat(),
                "shapes": v.shapes,
                "failing": v.failing,
                "unseen_share": v.unseen_share,
            }
        )
    if fmt == "json":
        from casework.shapes.outputs import ShapeSetList  # here: only JSON output needs it

        emit(ShapeSetList.model_validate(rows))
        return
    if not rows:
        console.print("no shape sets yet; build one with `casework shapes build`", markup=False)
        return
    table = Table()
    for column in ("name", "version", "as of", "shapes", "failing", "unseen"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["name"],
            f"{r['version']} ({r['hash'][:12]})",
            r["as_of"],
            str(r["shapes"]),
            str(r["failing"]),
            f"{100 * r['unseen_share']:.1f}%",
        )
    console.print(table)


@example("casework shapes show refunds-w14 shape-03")
@shapes_group.command("show")
@click.argument("name")
@click.argument("shape", required=False)
@FORMAT
@pass_project
def show_cmd(project: Project, name: str, shape: str | None, fmt: str) -> None:
    """Show shape set NAME (every shape), or one SHAPE of it with its representatives."""
    saved = load_shapes(project, name)
    if shape is None:
        if fmt == "json":
            from casework.shapes.outputs import ShapeSetOutput  # here: only JSON output needs it

            emit(
                ShapeSetOutput.model_validate(
                    {
                        "name": name,
                        "version": saved.version,
                        "shapes": [_shape_row(s) for s in saved.shapes],
                    }
                )
            )
            return
        v = saved.version
        console.print(
            f"{name}@{v.number} ({v.hash[:12]}), as of {v.as_of}: {v.shapes} shape(s) of "
            f"{v.failing} failing conversation(s), embedder {v.embedder}"
        )
        console.print(_shapes_table(saved.shapes))
        console.print(
            f"saturation: {v.singletons} singleton(s) of {v.failing}: about "
            f"{100 * v.unseen_share:.1f}% of failing traffic falls in shapes not seen yet",
            markup=False,
        )
        return
    one = saved.shape(shape)
    if fmt == "json":
        from casework.shapes.outputs import ShapeRecord  # here: only JSON output needs it

        emit(ShapeRecord(one))
        return
    console.print(f"{one.id}: {one.name}", markup=False)
    console.print(f"size {one.size} ({100 * one.share:.1f}% of failing), named {one.named_by}")
    console.print("terms: " + ", ".join(one.terms), markup=False)
    console.print("signals: " + ", ".join(f"{k} {v}" for k, v in one.signals.items()))
    for rep in one.representatives:
        console.print(f"\n-- {rep.case_id} (distance {rep.distance:.3f})", markup=False)
        console.print(rep.text, markup=False)


def _drift_json(report: DriftReport) -> dict[str, Any]:
    return {
        "against": report.against,
        "version": report.version,
        "drifted": report.drifted,
        "conversations": report.conversations,
        "failing": report.failing,
        "assigned": report.assigned,
        "alpha": report.alpha,
        "appeared": [asdict(a) for a in report.appeared],
        "vanished": [s.shape_id for s in report.vanished],
        "changed": [s.shape_id for s in report.changed],
        "shares": [asdict(s) for s in report.shares],
        "key_fingerprint": report.key_fingerprint,
    }


def _drift_text(report: DriftReport) -> None:
    console.print(
        f"{report.failing} failing conversation(s) of {report.conversations}; "
        f"{report.assigned} fall in a shape of {report.against}@{report.version}"
    )
    table = Table()
    for column in ("shape", "before", "now", "p (Holm)", "", "name"):
        table.add_column(column)
    for s in report.shares:
        mark = "vanished" if s.vanished else ("changed" if s.significant else "")
        table.add_row(
            s.shape_id,
            f"{100 * s.old_share:.1f}%",
            f"{100 * s.new_share:.1f}%",
            f"{s.p_holm:.3g}",
            mark,
            s.name,
        )
    console.print(table)
    for a in report.appeared:
        console.print(
            f"appeared: {a.size} conversation(s) ({100 * a.share:.1f}%): {a.name}", markup=False
        )
    if report.drifted:
        console.print(
            f"drift: {len(report.appeared)} appeared, {len(report.vanished)} vanished, "
            f"{len(report.changed)} changed share (Holm, alpha {report.alpha})"
        )
    else:
        console.print("no drift")


@example("casework shapes drift traces/2026-w15/ --against refunds-w14")
@shapes_group.command("drift")
@click.argument("new_traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--against", required=True, help="Saved shape set to compare with.")
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Family-wise significance level of the share tests (Holm).",
)
@click.option(
    "--min-size",
    "min_size",
    type=int,
    default=None,
    help="Smallest cluster of unassigned traffic reported as appeared (default: the set's).",
)
@_TRACE_FORMAT
@FORMAT
@pass_project
def drift_cmd(
    project: Project,
    new_traces: tuple[Path, ...],
    against: str,
    alpha: float,
    min_size: int | None,
    trace_format: Any,
    fmt: str,
) -> None:
    """Compare the failing traffic of NEW_TRACES with a saved shape set; exit 1 on drift.

    New failing conversations are assigned to the nearest saved shape within its radius; the
    rest are clustered (appeared shapes). Shares are tested with two-proportion z-tests, Holm
    corrected; a shape with no new member and a significant drop has vanished.
    """
    options = DriftOptions(alpha=alpha, min_size=min_size, trace_format=trace_format)
    with Bar("reading and scrubbing trace files", fmt) as bar:
        report = drift(
            project,
            list(new_traces),
            against,
            options,
            on_progress=lambda done, total: bar.update(completed=done, total=total),
        )
    if fmt == "json":
        from casework.shapes.outputs import ShapeDrift  # here: only JSON output needs it

        emit(ShapeDrift.model_validate(_drift_json(report)))
    else:
        _drift_text(report)
    if report.drifted:
        sys.exit(1)


shapes_group.add_command(author_cmd)
shapes_group.add_command(report_cmd)

COMMANDS: list[click.Command] = [shapes_group]

#: The old top-level spelling (`author`), hidden for one release.
ALIASES: list[click.Command] = list(OLD_AUTHOR)

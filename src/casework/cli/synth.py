"""`casework synth`: synthetic variants of a dataset's seed cases, released as a new version."""

from __future__ import annotations

from typing import Any

import click

from casework.cli._output import emit
from casework.cli.context import FORMAT, console, err_console, example, pass_project
from casework.project import Project
from casework.synth import SynthResult, synthesize, transform_names, transform_table

__all__ = ["COMMANDS"]


def _table_help() -> str:
    rows = [
        f"{s.name}: {'keeps the label' if s.preserves_label else 'back to labelling'}, "
        f"{s.method}; {s.summary}."
        for s in transform_table()
    ]
    return "\b\nTransforms:\n" + "\n".join(f"  {r}" for r in rows)


def _synth_json(result: SynthResult) -> dict[str, Any]:
    return {
        "dataset": result.dataset,
        "version": result.version.number if result.version else None,
        "hash": result.version.hash if result.version else None,
        "created": [
            {
                "id": c.id,
                "parent_id": c.provenance.parent_id,
                "transform": c.provenance.transform,
                "slice": c.slice,
                "split": c.split,
                "labelled": c.label is not None,
            }
            for c in result.created
        ],
        "to_labelling": result.to_labelling,
        "rejected": [{"id": r.variant_id, "reason": r.reason} for r in result.rejected],
        "capped": result.capped,
        "limited": result.limited,
        "warnings": result.warnings,
        "usage": result.ledger.summary_lines(),
    }


def _render(result: SynthResult, dry_run: bool) -> None:
    count = len(result.created)
    if dry_run:
        head = f"{result.dataset}: {count} variant(s) would be added (dry run, nothing written)"
    elif result.version is not None:
        head = (
            f"{result.dataset}: {count} variant(s) added as release {result.version.number} "
            f"({result.version.hash[:12]})"
        )
    else:
        head = f"{result.dataset}: no new variants; nothing released"
    console.print(head)
    if result.created:
        rows = [
            (
                c.id,
                c.provenance.parent_id or "",
                c.split,
                c.label.outcome if c.label else "to labelling",
            )
            for c in result.created
        ]
        width = max(len(r[0]) for r in rows)
        for vid, parent, split, label in rows:
            console.print(f"  {vid:<{width}}  from {parent}  {split:<7}  {label}")
    back = result.to_labelling
    if back:
        console.print(f"Back to labelling ({len(back)}): {', '.join(back)}")
    if result.rejected:
        console.print(f"Not kept ({len(result.rejected)}):")
        for r in result.rejected:
            console.print(f"  {r.variant_id}: {r.reason}")
    if result.limited:
        console.print(f"--limit reached: {result.limited} variant(s) not generated")
    for warning in result.warnings:
        err_console.print(f"warning: {warning}")
    for line in result.ledger.summary_lines():
        console.print(f"LLM {line}")


@example(
    "casework synth refunds -t typos -t paraphrase --per-case 2 --dry-run",
)
@click.command("synth", epilog=_table_help())
@click.argument("dataset")
@click.option(
    "--transform",
    "-t",
    "transforms",
    multiple=True,
    required=True,
    type=click.Choice(transform_names()),
    help="Transform to apply (repeat for several).",
)
@click.option("--slice", "slice_name", help="Only seeds of this slice (default: every slice).")
@click.option(
    "--per-case",
    type=click.IntRange(min=1),
    default=None,
    help="Variants per seed and transform (default: [synth] per_case).",
)
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most N new variants.")
@click.option("--dry-run", is_flag=True, help="Generate and check, but write nothing.")
@FORMAT
@pass_project
def synth_cmd(
    project: Project,
    dataset: str,
    transforms: tuple[str, ...],
    slice_name: str | None,
    per_case: int | None,
    limit: int | None,
    dry_run: bool,
    fmt: str,
) -> None:
    """Make synthetic variants of DATASET's seed cases and release them as a new version.

    Label-preserving variants inherit their seed's label; information-changing ones are created
    without a label and wait in the labelling queue. Variants that change nothing are rejected,
    and generation stops at the per-slice synthetic cap (thresholds.synthetic_cap).

    See docs/llm.md.
    """
    result = synthesize(
        project,
        dataset,
        list(transforms),
        slice_name=slice_name,
        per_case=per_case,
        limit=limit,
        dry_run=dry_run,
    )
    if fmt == "json":
        from casework.synth.outputs import SynthOutput  # here: only JSON output needs it

        emit(SynthOutput.model_validate(_synth_json(result)))
        for warning in result.warnings:
            err_console.print(f"warning: {warning}")
    else:
        _render(result, dry_run)


COMMANDS: list[click.Command] = [synth_cmd]

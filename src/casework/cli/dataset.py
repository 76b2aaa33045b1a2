"""The `dataset` group: check, release, versions, diff, show, cases, migrate, retire, forget, expire.

The group is light: `casework dataset versions` loads no numpy or SQLAlchemy; the commands that
need them (retire, forget, expire, apply) load from their modules when they run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import click
from rich.table import Table

from casework.cli._lazy_group import LazyGroup
from casework.cli._moved import moved
from casework.cli._output import emit, emit_document
from casework.cli._progress import reading, stages
from casework.cli.context import (
    FORMAT,
    SLICES,
    SPLIT_FILTER,
    console,
    example,
    pass_project,
)
from casework.dataset import (  # the release store and diffs load in their commands
    dataset_versions,
    parse_ref,
)
from casework.errors import UsageError
from casework.project import Project
from casework.schema import OracleClass, Source

if TYPE_CHECKING:
    from casework.dataset import DatasetScan, ProgressCallback
    from casework.schema import Case

__all__ = ["COMMANDS"]


@click.group(
    "dataset",
    cls=LazyGroup,
    lazy={
        "apply": (
            "casework.cli.review:apply_cmd",
            "Release all of DATASET's decided work as one new version (nothing decided: no version).",
        ),
        "retire": (
            "casework.cli._dataset_retire:retire_cmd",
            "Move cases that separate none of the compared systems to split smoke, as a new version.",
        ),
        "forget": (
            "casework.cli._dataset_erasure:forget_cmd",
            "Remove every row naming a customer (a deletion request) and release new versions.",
        ),
        "expire": (
            "casework.cli._dataset_erasure:expire_cmd",
            "Remove rows past their retain_until date and release new versions.",
        ),
    },
)
def dataset_group() -> None:
    """Datasets as released files: check, release, list, compare, show, filter, migrate, prune.

    A version is the content hash of a dataset's canonical files; runs record it. Decided work of
    the review queue lands with `dataset apply`. See docs/formats.md (the files) and
    docs/guarantees.md (what a release promises).
    """


@example("casework dataset check refunds --pii", "casework dataset check refunds@3 --format json")
@dataset_group.command("check")
@click.argument("dataset")
@click.option("--pii", is_flag=True, help="Also scan the cases for residual raw PII (for CI).")
@click.option(
    "--presidio", is_flag=True, help="Add Presidio's recognisers as a second opinion (warnings)."
)
@FORMAT
@pass_project
def check_cmd(project: Project, dataset: str, pii: bool, presidio: bool, fmt: str) -> None:
    """Check DATASET[@VERSION]: declared tools, stale rules, expired rows, synthetic cap, PII.

    Exits 1 when any error-level finding remains.
    """
    from casework.gate import check_project  # here: `casework dataset versions` stays light

    with reading(f"checking {dataset}", fmt) as on_progress:
        report = check_project(
            project, dataset, pii=pii, presidio=presidio, on_progress=on_progress
        )
    if fmt == "json":
        from casework.dataset.outputs import DatasetCheck  # here: only JSON output needs it

        emit(
            DatasetCheck.model_validate(
                {
                    "dataset": report.dataset,
                    "cases": report.cases,
                    "checks": report.checks,
                    "ok": report.ok,
                    "findings": [
                        {
                            **{k: v for k, v in f.__dict__.items() if k != "hint"},
                            "next": f.hint.command_line() if f.hint else None,
                        }
                        for f in report.findings
                    ],
                    "notes": report.notes,
                }
            )
        )
    else:
        for note in report.notes:
            console.print(note, markup=False)
        for finding in report.findings:
            click.echo(
                f"{finding.severity}: {finding.check}: {finding}", err=finding.severity == "error"
            )
        status = "ok" if report.ok else f"{len(report.errors)} error(s)"
        console.print(
            f"{report.dataset}: {report.cases} cases checked ({', '.join(report.checks)}): {status}"
        )
    if not report.ok:
        raise click.exceptions.Exit(1)


@example('casework dataset release refunds -m "first labelled batch"')
@dataset_group.command("release")
@click.argument("dataset")
@click.option("-m", "--message", required=True, help="Why this version exists.")
@pass_project
def release_cmd(project: Project, dataset: str, message: str) -> None:
    """Release the working tree of DATASET as a new version (a no-op if unchanged).

    Lines the latest release holds are not parsed again. On a terminal, a large tree shows a
    progress bar for each stage: reading, validating, writing.
    """
    from casework.dataset import release  # here: `casework dataset versions` stays light

    name, version = parse_ref(dataset)
    if version is not None:
        raise UsageError(f"release {dataset}: release takes a dataset name, not a version.")
    with stages(f"releasing {name}", "text") as on_progress:
        record = release(project, name, None, message, on_progress=on_progress)
    if record is None:
        # Nothing is released only when the tree equals the latest release.
        latest = dataset_versions(project, name)[-1]
        console.print(
            f"{name}: unchanged since release {latest.number} ({latest.hash[:12]}); nothing released."
        )
        return
    console.print(
        f"{name}@{record.number} released: {record.hash[:12]} ({record.counts.cases} cases)"
    )
    for line in record.changes:
        console.print(f"  - {line}")


@example("casework dataset versions refunds")
@dataset_group.command("versions")
@click.argument("dataset")
@FORMAT
@pass_project
def versions_cmd(project: Project, dataset: str, fmt: str) -> None:
    """List the releases of DATASET, oldest first."""
    name, _ = parse_ref(dataset)
    versions = dataset_versions(project, name)
    if fmt == "json":
        from casework.dataset.outputs import VersionList  # here: only JSON output needs it

        emit(VersionList(versions))
        return
    if not versions:
        console.print(f"{name}: no releases yet (run `casework dataset release {name} -m MSG`).")
        return
    table = Table("#", "hash", "released (UTC)", "cases", "slices", "message")
    for v in versions:
        table.add_row(
            str(v.number),
            v.hash[:12],
            v.created_at.strftime("%Y-%m-%d %H:%M"),
            str(v.counts.cases),
            ", ".join(f"{k}={n}" for k, n in v.counts.by_slice.items()),
            v.message,
        )
    console.print(table)


@example("casework dataset diff refunds 2 latest")
@dataset_group.command("diff")
@click.argument("dataset")
@click.argument("a")
@click.argument("b", default="working")
@FORMAT
@pass_project
def diff_cmd(project: Project, dataset: str, a: str, b: str, fmt: str) -> None:
    """Compare two versions A and B of DATASET (B defaults to the working tree).

    Versions are release numbers, hash prefixes, `latest` or `working`.
    """
    from casework.dataset import diff_versions  # here: `casework dataset versions` stays light

    name, _ = parse_ref(dataset)
    with reading(f"comparing {name}", fmt) as on_progress:  # a fresh clone restores releases
        compared = diff_versions(project, name, a, b, on_progress=on_progress)
    diff = compared.diff
    if fmt == "json":
        from casework.dataset.outputs import DatasetDiff  # here: only JSON output needs it

        emit(
            DatasetDiff.model_validate(
                {
                    "from": compared.old_ref,
                    "to": compared.new_ref,
                    "added": diff.added,
                    "removed": diff.removed,
                    "changed": [
                        {
                            "id": c.id,
                            "fields": c.fields,
                            "relabelled": c.relabelled,
                            "split": [c.old_split, c.new_split] if c.moved else None,
                        }
                        for c in diff.changed
                    ],
                }
            )
        )
        return
    console.print(f"{compared.old_ref} -> {compared.new_ref}: {'; '.join(diff.summary_lines())}")
    for case_id in diff.added:
        console.print(f"  + {case_id}")
    for case_id in diff.removed:
        console.print(f"  - {case_id}")
    for change in diff.changed:
        tags = []
        if change.relabelled:
            tags.append("relabelled")
        if change.moved:
            tags.append(f"moved {change.old_split}->{change.new_split}")
        click.echo(
            f"  ~ {change.id}{' [' + ', '.join(tags) + ']' if tags else ''}: {', '.join(change.fields)}"
        )


@example("casework dataset show refunds@latest r-0001")
@dataset_group.command("show")
@click.argument("dataset")
@click.argument("case_id")
@pass_project
def show_cmd(project: Project, dataset: str, case_id: str) -> None:
    """Print case CASE_ID of DATASET[@VERSION] as JSON."""
    from casework.dataset import (  # here: `casework dataset versions` stays light
        dump_record,
        find_case,
    )

    with reading(f"reading {dataset}", "json") as on_progress:
        case = find_case(project, dataset, case_id, on_progress=on_progress)
    emit_document(dump_record(case))


#: Past this many rows `cases` prints plain aligned columns: rich lays a table out cell by cell
#: (about 0.8 ms a row here: 81 s and 1.2 GB for 100,000 cases), plain columns stream in a second.
_RICH_TABLE_MAX_ROWS = 5_000


def _print_plain_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    """``rows`` under ``header`` in left-aligned columns two spaces apart, written in chunks."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    click.echo(line(header) + "\n" + line(tuple("-" * w for w in widths)))
    for start in range(0, len(rows), 10_000):
        click.echo("".join(line(r) + "\n" for r in rows[start : start + 10_000]), nl=False)


_Row = tuple[str, str, str, str, str, str, str]


@dataclass(frozen=True)
class _CaseFilters:
    slices: tuple[str, ...]
    splits: tuple[str, ...]
    sources: tuple[str, ...]
    labelled_under: str | None
    unlabelled: bool
    oracle: str | None
    original_ids: tuple[str, ...] = ()


class _CaseRows:
    """A job of a (parallel) scan: the listed columns of the cases matching the filters.

    Only the columns are kept, not the case; picklable, so each worker's rows come back.
    """

    def __init__(self, filters: _CaseFilters) -> None:
        self.filters = filters
        self.rows: list[_Row] = []

    def add(self, case: Case) -> None:
        """Keep ``case``'s columns when it matches."""
        from casework.dataset import select_cases

        f = self.filters
        chosen = select_cases(
            (case,),
            slices=f.slices,
            splits=f.splits,
            sources=f.sources,
            labelled_under=f.labelled_under,
            unlabelled=f.unlabelled,
            oracle=f.oracle,
            original_ids=f.original_ids,
        )
        if chosen:
            label = case.label
            self.rows.append(
                (
                    case.id,
                    case.slice,
                    case.split,
                    case.source,
                    label.outcome if label else "(unlabelled)",
                    (label.guideline_version or "") if label else "",
                    case.oracle.class_,
                )
            )


def _case_rows(
    project: Project, ref: str, filters: _CaseFilters, on_progress: ProgressCallback
) -> tuple[DatasetScan, list[_Row]]:
    """The rows of ``ref``'s matching cases in file order: a large working tree on every core."""
    # Here, not at the top: `casework dataset versions` stays light.
    from casework.dataset import scan_in_jobs

    scan, jobs = scan_in_jobs(
        project, ref, lambda: _CaseRows(filters), keep_labels=False, on_progress=on_progress
    )
    return scan, [row for job in jobs for row in job.rows]


@example(
    "casework dataset cases refunds --split holdout --unlabelled",
    "casework dataset cases airline --original-id 12",
)
@dataset_group.command("cases")
@click.argument("dataset")
@SLICES
@SPLIT_FILTER
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Choice(get_args(Source)),
    help="Only this source (repeatable).",
)
@click.option("--labelled-under", help="Only cases labelled under this guideline version.")
@click.option("--unlabelled", is_flag=True, help="Only cases waiting for a label.")
@click.option(
    "--oracle",
    type=click.Choice(get_args(OracleClass)),
    help="Only cases with this oracle class.",
)
@click.option(
    "--original-id",
    "original_ids",
    multiple=True,
    help="Only the case imported from this task id of its own benchmark "
    "(provenance.original_id, e.g. a τ²-bench task id; repeatable).",
)
@FORMAT
@pass_project
def cases_cmd(
    project: Project,
    dataset: str,
    slices: tuple[str, ...],
    splits: tuple[str, ...],
    sources: tuple[str, ...],
    labelled_under: str | None,
    unlabelled: bool,
    oracle: str | None,
    original_ids: tuple[str, ...],
    fmt: str,
) -> None:
    """List the cases of DATASET[@VERSION] matching the filters.

    More than 5,000 cases are listed as plain aligned columns rather than a drawn table.
    """
    filters = _CaseFilters(
        slices, splits, sources, labelled_under, unlabelled, oracle, original_ids
    )
    with reading(f"reading {dataset}", fmt) as on_progress:
        scan, rows = _case_rows(project, dataset, filters, on_progress)
    if fmt == "json":
        from casework.dataset.outputs import CaseIdList  # here: only JSON output needs it

        emit(CaseIdList.model_validate([row[0] for row in rows]))
        return
    header = ("id", "slice", "split", "source", "outcome", "guideline", "oracle")
    if len(rows) <= _RICH_TABLE_MAX_ROWS:
        table = Table(*header)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:
        _print_plain_table(header, rows)
    by_oracle = sorted(Counter(row[6] for row in rows).items())
    by_outcome = sorted(
        Counter("unlabelled" if row[4] == "(unlabelled)" else row[4] for row in rows).items()
    )
    console.print(f"{len(rows)} of {scan.cases} cases in {scan.ref}")
    console.print(
        "by oracle: "
        + ", ".join(f"{name} {n}" for name, n in by_oracle)
        + " · by outcome: "
        + ", ".join(f"{name} {n}" for name, n in by_outcome)
    )


@example('casework dataset migrate refunds -m "lookup_order renamed to get_order" --dry-run')
@dataset_group.command("migrate")
@click.argument("dataset")
@click.option(
    "--renames",
    "renames_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Rename map (default: paths.renames in casework.toml).",
)
@click.option("-m", "--message", required=True, help="Why the tools changed.")
@click.option("--dry-run", is_flag=True, help="Count what would change; write nothing.")
@pass_project
def migrate_cmd(
    project: Project, dataset: str, renames_path: Path | None, message: str, dry_run: bool
) -> None:
    """Apply tool and argument renames to DATASET and release the result."""
    path = renames_path or project.path(project.config.paths.renames)
    from casework.labelling import migrate_labelling  # here: it needs SQLAlchemy

    migration = migrate_labelling(project, dataset, path, message, dry_run=dry_run)
    result, record = migration.result, migration.record
    for line in result.changelog():
        console.print(line)
    if migration.workbench_labels:
        console.print(f"renamed in {migration.workbench_labels} raw label(s) in the workbench")
    if record is not None:
        console.print(f"{dataset}@{record.number} released: {record.hash[:12]}")
    elif result.cases_changed == 0 and result.labels_changed == 0:
        console.print(f"{dataset}: no case names a renamed tool or argument; nothing released.")
    else:
        console.print("dry run: nothing written.")


COMMANDS: list[click.Command] = [dataset_group]

#: The old top-level spellings, hidden for one release.
ALIASES: list[click.Command] = [
    moved(dataset_group.commands[name], name, f"dataset {name}")
    for name in ("check", "release", "versions", "diff", "show", "cases", "migrate")
]

"""The `leakage` group: scan across splits, rows in prompts, rows in training corpora.

Flags are decided in the review queue; `leakage review|decide|resolve` stay hidden for one
release with their own implementation.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast, get_args

import click
from rich.table import Table

from casework.cli._moved import note_moved
from casework.cli._output import emit
from casework.cli.context import FORMAT, console, err_console, example, pass_project
from casework.errors import UsageError
from casework.leakage import (
    CorpusReport,
    Decision,
    Engine,
    Flag,
    Method,
    PromptReport,
    ScanReport,
    check_prompts,
    decide,
    list_flags,
    resolve,
    scan_corpus,
    scan_dataset,
)
from casework.project import Project

__all__ = ["COMMANDS"]

ENGINE = click.option(
    "--engine",
    type=click.Choice(get_args(Engine)),
    default="local",
    show_default=True,
    help="Where shingling and MinHash run: local threads, or Ray Data (extra casework[ray]).",
)


def _flag_json(flag: Flag) -> dict[str, Any]:
    return dataclasses.asdict(flag)


def _flag_table(flags: list[Flag], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in (
        "flag",
        "row",
        "split",
        "row",
        "split",
        "Jaccard",
        "shared",
        "shared shingles",
        "status",
    ):
        table.add_column(
            column, justify="right" if column in ("flag", "Jaccard", "shared") else "left"
        )
    for f in flags:
        status = (
            f.status
            if f.decision is None
            else f"{f.status}: {f.decision}" + (f" {f.move_id}" if f.move_id else "")
        )
        table.add_row(
            str(f.id),
            f.left_id,
            f.left_split,
            f.right_id,
            f.right_split,
            f"{f.jaccard:.3f}",
            str(f.shared_count),
            " | ".join(f.shared[:3]) + (" …" if len(f.shared) > 3 else ""),
            status,
        )
    return table


def _render_scan(report: ScanReport) -> None:
    r = report.result
    splits = ", ".join(f"{k} {v}" for k, v in r.by_split.items())
    how = (
        "exact prefix-filter join"
        if r.method == "exact"
        else "MinHash-LSH, verified by exact Jaccard"
    )
    console.print(
        f"{report.dataset}: {r.rows} rows ({splits}) · {how} · engine {r.engine} · "
        f"threshold {r.threshold:.2f} · {r.seconds:.2f} s"
    )
    for note in r.notes:
        console.print(f"memory: {note}")
    if r.no_text:
        n = len(r.no_text)
        shown = ", ".join(r.no_text[:5]) + (" …" if n > 5 else "")
        console.print(
            f"{n} row{'s' if n != 1 else ''} with no text to compare (no user turn, scenario, "
            f"tool set or data), not scanned: {shown}"
        )
    if r.params is not None:
        p = r.params
        curve = "  ".join(f"J={s:.2f}: {v:.3f}" for s, v in r.curve)
        console.print(f"LSH: {p.bands} bands × {p.rows} rows = {p.num_perm} permutations")
        console.print(f"theoretical recall: {curve}")
    console.print(
        f"{len(r.pairs)} pair{'s' if len(r.pairs) != 1 else ''} across splits at Jaccard ≥ {r.threshold:.2f}: "
        f"{report.new} new, {report.reopened} reopened, {len(report.suppressed)} suppressed "
        f"(kept or template-like, rows unchanged), {report.gone} gone"
    )
    if report.held:
        n = len(report.held)
        console.print(
            f"{n} unresolved flag{'s' if n != 1 else ''} not found at threshold {r.threshold:.2f} "
            f"stay{'s' if n == 1 else ''} unresolved: only a scan at the configured threshold "
            f"{report.configured_threshold:.2f} (thresholds.leakage_jaccard), or a change to the "
            "rows, supersedes a flag"
        )
    if report.unresolved:
        console.print(_flag_table(report.unresolved, "flags to review"))
        console.print(f"next: casework review sync {report.dataset}, then casework review decide")


def _scan_json(report: ScanReport) -> dict[str, Any]:
    r = report.result
    return {
        "dataset": report.dataset,
        "rows": r.rows,
        "by_split": r.by_split,
        "threshold": r.threshold,
        "method": r.method,
        "engine": r.engine,
        "seconds": round(r.seconds, 3),
        "lsh": None
        if r.params is None
        else {"bands": r.params.bands, "rows": r.params.rows, "num_perm": r.params.num_perm},
        "recall_curve": [{"jaccard": s, "recall": round(v, 6)} for s, v in r.curve],
        "pairs": len(r.pairs),
        "no_text": r.no_text,
        "notes": r.notes,
        "new": report.new,
        "reopened": report.reopened,
        "gone": report.gone,
        "configured_threshold": report.configured_threshold,
        "flags": [_flag_json(f) for f in report.flags],
        "held": [_flag_json(f) for f in report.held],
        "suppressed": [_flag_json(f) for f in report.suppressed],
    }


@click.group("leakage")
def leakage_group() -> None:
    """Find leakage: near-duplicates across splits, rows in prompts, rows in training corpora.

    Each flagged pair is a leakage-pair item of the review queue (`casework review`). See
    docs/leakage.md.
    """


@example(
    "casework leakage scan refunds",
    "casework leakage scan refunds --method lsh --threshold 0.8",
)
@leakage_group.command("scan")
@click.argument("dataset")
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Jaccard threshold (default: thresholds.leakage_jaccard).",
)
@click.option(
    "--method",
    type=click.Choice(get_args(Method)),
    default="auto",
    show_default=True,
    help="Exact join, MinHash-LSH, or auto (exact below leakage.exact_below rows).",
)
@ENGINE
@FORMAT
@pass_project
def scan_cmd(
    project: Project, dataset: str, threshold: float | None, method: str, engine: str, fmt: str
) -> None:
    """Flag rows of DATASET that nearly repeat a row of another split.

    Every pair at or above the threshold becomes a review flag in
    datasets/DATASET/leakage.jsonl (commit it: the gate reads it; nothing is deleted). A scan at
    another threshold than thresholds.leakage_jaccard never marks a flag gone unless its rows
    changed. Exits 1 while unresolved flags remain.
    """
    report = scan_dataset(
        project,
        dataset,
        threshold=threshold,
        method=cast(Method, method),
        engine=cast(Engine, engine),
    )
    if fmt == "json":
        from casework.leakage.outputs import LeakageScan  # here: only JSON output needs it

        emit(LeakageScan.model_validate(_scan_json(report)))
    else:
        _render_scan(report)
    if report.unresolved:
        click.get_current_context().exit(1)


@leakage_group.command("review")
@click.argument("dataset")
@click.option("--all", "everything", is_flag=True, help="List resolved and gone flags too.")
@FORMAT
@pass_project
def review_cmd(project: Project, dataset: str, everything: bool, fmt: str) -> None:
    """List the leakage flags of DATASET waiting for a decision (`leakage decide`)."""
    flags = list_flags(project, dataset, everything=everything)
    if fmt == "json":
        from casework.leakage.outputs import LeakageFlagList  # here: only JSON needs it

        emit(LeakageFlagList.model_validate([_flag_json(f) for f in flags]))
    elif flags:
        console.print(_flag_table(flags, f"{dataset}: leakage flags"))
        console.print(
            f"decide: casework leakage decide {dataset} FLAG --move ROW | --keep | --template"
        )
    else:
        console.print(f"{dataset}: no {'' if everything else 'unresolved '}leakage flags")


@leakage_group.command("decide")
@click.argument("dataset")
@click.argument("flag_id", metavar="FLAG", type=int)
@click.option(
    "--move", "move_id", default=None, metavar="ROW", help="Move this row of the pair to dev."
)
@click.option("--keep", is_flag=True, help="Keep both rows as they are.")
@click.option(
    "--template",
    is_flag=True,
    help="The pair is template-like (suppressed until a row changes).",
)
@click.option("--by", "reviewer", default=None, help="Who decides (pseudonymous id).")
@click.option("--note", default=None, help="Why.")
@FORMAT
@pass_project
def decide_cmd(
    project: Project,
    dataset: str,
    flag_id: int,
    move_id: str | None,
    keep: bool,
    template: bool,
    reviewer: str | None,
    note: str | None,
    fmt: str,
) -> None:
    """Decide flag FLAG of DATASET: --move ROW, --keep or --template (applied by `leakage resolve`)."""
    chosen = [
        name
        for name, on in (("move", move_id is not None), ("keep", keep), ("template", template))
        if on
    ]
    if len(chosen) != 1:
        raise UsageError("leakage decide: give exactly one of --move ROW, --keep or --template.")
    decision = cast(Decision, chosen[0])
    flag = decide(
        project, dataset, flag_id, decision, move_id=move_id, reviewer=reviewer, note=note
    )
    if fmt == "json":
        from casework.leakage.outputs import LeakageFlag  # here: only JSON needs it

        emit(LeakageFlag.model_validate(_flag_json(flag)))
    else:
        what = f"move {flag.move_id} to dev" if flag.decision == "move" else flag.decision
        console.print(f"flag {flag.id} ({flag.left_id} ~ {flag.right_id}): {what}")
        console.print(f"apply decisions: casework dataset apply {dataset} -m MSG")


@leakage_group.command("resolve")
@click.argument("dataset")
@click.option("-m", "--message", default=None, help="Release message (default: says what moved).")
@FORMAT
@pass_project
def resolve_cmd(project: Project, dataset: str, message: str | None, fmt: str) -> None:
    """Apply the review decisions of DATASET; moves become a new dataset version."""
    report = resolve(project, dataset, message=message)
    if fmt == "json":
        from casework.leakage.outputs import LeakageResolve  # here: only JSON needs it

        emit(
            LeakageResolve(
                dataset=report.dataset,
                version=None if report.version is None else report.version.number,
                hash=None if report.version is None else report.version.hash,
                moved=report.moved,
                kept=report.kept,
                templates=report.templates,
                superseded=report.superseded,
            )
        )
        return
    if report.version is not None:
        console.print(
            f"{report.dataset}@{report.version.number} released: {report.version.hash[:12]}"
        )
        for line in report.version.changes:
            console.print(f"  - {line}")
    else:
        console.print(f"{report.dataset}: no row moved, no new version")
    console.print(
        f"resolved: {len(report.moved)} moved, {report.kept} kept, {report.templates} template-like"
        + (f"; {report.superseded} other flags no longer cross splits" if report.superseded else "")
    )


def _render_prompt(report: PromptReport) -> None:
    console.print(
        f"prompt files: {', '.join(report.files)} · {report.rows} rows · threshold {report.threshold:.2f} "
        "(IDF-weighted 3-shingle containment or 8-gram containment)"
    )
    if not report.hits:
        console.print("no row found in the prompt files")
        return
    table = Table(title="rows found in prompt files", title_justify="left")
    for column in (
        "dataset",
        "row",
        "split",
        "frozen",
        "file",
        "plain",
        "weighted",
        "8-gram",
        "verdict",
    ):
        table.add_column(
            column, justify="right" if column in ("plain", "weighted", "8-gram") else "left"
        )
    for h in report.hits:
        table.add_row(
            h.dataset,
            h.case_id,
            h.split,
            "yes" if h.frozen else "",
            h.file,
            f"{h.plain:.2f}",
            f"{h.weighted:.2f}",
            f"{h.long:.2f}",
            "VIOLATION" if h.violation else "allowed (dev)",
        )
    console.print(table)


@example("casework leakage prompt refunds bookings")
@leakage_group.command("prompt")
@click.argument("datasets", nargs=-1)
@FORMAT
@pass_project
def prompt_cmd(project: Project, datasets: tuple[str, ...], fmt: str) -> None:
    """Check that no holdout, smoke or frozen row sits in the prompt files (agent.prompt_files).

    DATASETS default to every dataset (plus the frozen folder). Exits 1 on a violation: run it
    in CI on every change to the prompt files.
    """
    report = check_prompts(project, datasets)
    if fmt == "json":
        from casework.leakage.outputs import LeakagePrompt  # here: only JSON output needs it

        emit(
            LeakagePrompt.model_validate(
                {
                    "files": report.files,
                    "threshold": report.threshold,
                    "rows": report.rows,
                    "hits": [dataclasses.asdict(h) for h in report.hits],
                    "violations": len(report.violations),
                }
            )
        )
    else:
        _render_prompt(report)
    if report.violations:
        n = len(report.violations)
        err_console.print(f"{n} eval row{'s' if n != 1 else ''} found in the prompt files")
        click.get_current_context().exit(1)


def _render_corpus(report: CorpusReport) -> None:
    console.print(
        f"corpus: {len(report.files)} file{'s' if len(report.files) != 1 else ''}, {report.documents} documents · "
        f"{report.rows_indexed} eval rows indexed ({', '.join(report.datasets)}) · engine {report.engine} · "
        f"bar {report.containment:.2f} (13-gram share or IDF-weighted containment)"
    )
    for problem in report.problems:
        err_console.print(f"skipped {problem}")
    if not report.hits:
        console.print("no eval row found in the corpus")
        return
    table = Table(title=f"{len(report.rows_found)} eval rows found", title_justify="left")
    for column in (
        "document",
        "dataset",
        "row",
        "split",
        "13-grams",
        "weighted",
        "containment",
        "Jaccard",
    ):
        table.add_column(
            column, justify="left" if column in ("document", "dataset", "row", "split") else "right"
        )
    for h in report.hits:
        table.add_row(
            h.ref,
            h.dataset,
            h.case_id,
            h.split,
            f"{h.long_shared} ({h.long_fraction:.2f})",
            f"{h.weighted:.2f}",
            f"{h.containment:.2f}",
            f"{h.jaccard:.2f}",
        )
    console.print(table)


@example("casework leakage corpus data/sft/*.jsonl --dataset refunds --containment 0.5")
@leakage_group.command("corpus")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    help="Dataset whose eval rows to look for (repeatable; default all).",
)
@ENGINE
@click.option(
    "--text-field",
    default="text",
    show_default=True,
    help="JSON field or Parquet column holding the text.",
)
@click.option(
    "--containment",
    type=float,
    default=None,
    help="Bar for a hit (default: leakage.corpus_containment).",
)
@FORMAT
@pass_project
def corpus_cmd(
    project: Project,
    paths: tuple[str, ...],
    datasets: tuple[str, ...],
    engine: str,
    text_field: str,
    containment: float | None,
    fmt: str,
) -> None:
    """Find holdout, smoke and frozen rows inside a training corpus at PATHS.

    PATHS are JSONL, Parquet or plain-text files, folders or globs, local or fsspec URLs.
    Exits 1 when any eval row is found.
    """
    report = scan_corpus(
        project,
        paths,
        datasets=datasets,
        engine=cast(Engine, engine),
        text_field=text_field,
        containment=containment,
    )
    if fmt == "json":
        from casework.leakage.outputs import LeakageCorpus  # here: only JSON output needs it

        emit(
            LeakageCorpus.model_validate(
                {
                    "datasets": report.datasets,
                    "files": report.files,
                    "documents": report.documents,
                    "rows_indexed": report.rows_indexed,
                    "engine": report.engine,
                    "bar": report.containment,
                    "rows_found": report.rows_found,
                    "hits": [{**dataclasses.asdict(h), "ref": h.ref} for h in report.hits],
                    "skipped": [str(p) for p in report.problems],
                }
            )
        )
    else:
        _render_corpus(report)
    if report.hits:
        click.get_current_context().exit(1)


note_moved(leakage_group.commands["review"], "leakage review", "review list --kind leakage-pair")
note_moved(leakage_group.commands["decide"], "leakage decide", "review decide")
note_moved(leakage_group.commands["resolve"], "leakage resolve", "dataset apply")

COMMANDS: list[click.Command] = [leakage_group]

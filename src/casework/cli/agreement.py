"""`casework agreement`: inter-rater agreement per slice, with bands and disagreement clusters."""

from __future__ import annotations

import click
from rich.table import Table

from casework.agreement import AgreementReport, SliceAgreement
from casework.cli._output import emit
from casework.cli._progress import reading
from casework.cli.context import FORMAT, console, example, pass_project
from casework.labelling import dataset_agreement
from casework.project import Project

__all__ = ["COMMANDS"]

_MAX_IDS = 20


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"


def _band(s: SliceAgreement) -> str:
    v = s.verdict
    if v.band is None:
        return v.status
    return f"{v.band} (provisional)" if v.provisional else v.band


def _gate(s: SliceAgreement) -> str:
    text = "yes" if s.verdict.gate_eligible else "no"
    return text if s.current else f"{text} (superseded)"


def _plural(n: int, noun: str) -> str:
    head, _, tail = noun.partition(" without")
    return f"{n} {head}{'' if n == 1 else 's'}" + (f" without{tail}" if tail else "")


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:_MAX_IDS])
    return shown + (f", … and {len(ids) - _MAX_IDS} more" if len(ids) > _MAX_IDS else "")


def _summary(report: AgreementReport) -> Table:
    with_boot = report.settings.bootstrap > 0
    table = Table(title="Agreement on the outcome, per slice", title_justify="left")
    for name in ("slice", "guideline", "rows", "p_o", "p_e", "kappa [95% CI]"):
        table.add_column(name, justify="right" if name in ("rows", "p_o", "p_e") else "left")
    if with_boot:
        table.add_column("bootstrap CI")
    for name in ("AC1", "band", "gate"):
        table.add_column(name)
    for s in report.slices:
        k = s.kappa
        kappa = "—" if k.kappa is None else f"{k.kappa:.2f} {_interval(k.ci_low, k.ci_high)}"
        row = [s.slice, s.guideline_version or "—", str(s.rows), _num(k.p_o), _num(k.p_e), kappa]
        if with_boot:
            row.append(_interval(s.bootstrap.low, s.bootstrap.high) if s.bootstrap else "—")
        row += [_num(s.ac1.coefficient), _band(s), _gate(s)]
        table.add_row(*row)
    return table


def _tools(s: SliceAgreement) -> tuple[Table | None, list[str]]:
    marked = [t for t in s.tools if t.agreement.positives > 0]
    unmarked = sorted({t.tool for t in s.tools} - {t.tool for t in marked})
    if not marked:
        return None, unmarked
    table = Table(title="Per-tool agreement", title_justify="left")
    for name in ("tool", "question", "both yes", "first only", "second only", "both no"):
        table.add_column(name, justify="left" if name in ("tool", "question") else "right")
    for name in ("p_o", "kappa", "AC1", "status"):
        table.add_column(name)
    for t in marked:
        a = t.agreement
        table.add_row(
            t.tool,
            t.question,
            str(a.both_yes),
            str(a.only_first),
            str(a.only_second),
            str(a.both_no),
            _num(a.p_o),
            _num(a.kappa.kappa),
            _num(a.ac1.coefficient),
            a.status,
        )
    return table, unmarked


def _confusion(s: SliceAgreement) -> Table:
    used = [
        i
        for i, _ in enumerate(s.confusion.categories)
        if any(s.confusion.counts[i]) or any(row[i] for row in s.confusion.counts)
    ]
    table = Table(
        title="Outcome confusion (rows: first label, columns: second)", title_justify="left"
    )
    table.add_column("")
    for i in used:
        table.add_column(str(s.confusion.categories[i]), justify="right")
    for i in used:
        table.add_row(
            str(s.confusion.categories[i]), *(str(s.confusion.counts[i][j]) for j in used)
        )
    return table


def _details(s: SliceAgreement) -> None:
    console.print()
    console.print(f"[bold]{s.slice}[/bold] under {s.guideline_version}: {s.verdict.reason}.")
    if s.disagreeing_case_ids:
        console.print(_confusion(s))
    tools, unmarked = _tools(s)
    if tools is not None:
        console.print(tools)
    if unmarked:
        console.print(f"Tools nobody marked required or forbidden: {', '.join(unmarked)}.")
    if s.multi_rater is not None:
        m = s.multi_rater
        console.print(
            f"More than two labellers on {m.rows_over_two} rows: Fleiss' kappa "
            f"{_num(m.fleiss.kappa)}, Krippendorff's alpha {_num(m.krippendorff.alpha)}."
        )
    if s.clusters:
        console.print("Outcome disagreement clusters:")
        for c in s.clusters:
            console.print(f"  - {c.describe()}")
    if s.disagreeing_case_ids:
        console.print(f"Cases disagreeing on the outcome: {_ids(s.disagreeing_case_ids)}")
    if s.tool_clusters:
        console.print("Tool disagreement clusters:")
        for c in s.tool_clusters:
            console.print(f"  - {c.describe()}")
    if s.tool_disagreement_case_ids:
        console.print(f"Cases disagreeing on tools: {_ids(s.tool_disagreement_case_ids)}")
    e = s.exclusions
    left_out = {
        "adjudicator label": e.adjudicator_labels,
        "disagreement-overlap label": e.disagreement_labels,
        "single-labelled row": e.single_label_rows,
        "double-labelled row without a calibration or audit reason": e.no_overlap_reason_rows,
    }
    parts = [_plural(n, what) for what, n in left_out.items() if n]
    if parts:
        console.print(f"Left out: {', '.join(parts)}.")


def _render(report: AgreementReport) -> None:
    console.print(f"Agreement on {report.dataset} ({report.hash[:12]}): {report.grouping}.")
    console.print(_summary(report))
    for s in report.slices:
        if s.rows:
            _details(s)
    if report.notes:
        console.print()
        for note in report.notes:
            console.print(f"Note: {note}")


@example(
    "casework agreement refunds",
    "casework agreement refunds@latest --slice refunds --guideline refunds-g7 --format json",
)
@click.command("agreement")
@click.argument("dataset")
@click.option("--slice", "slice_name", help="Only this slice.")
@click.option("--guideline", help="Only labels under this guideline version (e.g. refunds-g7).")
@FORMAT
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=2000,
    show_default=True,
    help="Bootstrap resamples for the kappa interval (0: none).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@pass_project
def agreement_cmd(
    project: Project,
    dataset: str,
    slice_name: str | None,
    guideline: str | None,
    fmt: str,
    bootstrap: int,
    seed: int,
) -> None:
    """Inter-rater agreement of DATASET[@VERSION] per slice and guideline version.

    Cohen's kappa on the outcome with its asymptotic and bootstrap 95% CIs, Gwet's AC1, a band
    (ambiguous / review / dependable, provisional when a CI crosses an edge) and whether the slice
    may gate a release; per-tool agreement on required and forbidden tools; the case features
    most over-represented among disagreements. Only calibration and audit overlap counts, and
    guideline versions are never pooled. Always exits 0: the gate reads the verdicts.

    See docs/labelling.md.
    """
    with reading(f"reading {dataset}", fmt) as on_progress:
        report = dataset_agreement(
            project,
            dataset,
            slice=slice_name,
            guideline=guideline,
            bootstrap=bootstrap,
            seed=seed,
            on_progress=on_progress,
        )
    if fmt == "json":
        from casework.agreement.outputs import Agreement  # here: only JSON output needs it

        emit(Agreement.model_validate(report.as_json()))
    else:
        _render(report)


COMMANDS: list[click.Command] = [agreement_cmd]

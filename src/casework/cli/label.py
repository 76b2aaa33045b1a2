"""Labelling commands: `label`, `adjudicate` and `guideline`, each a group of sub-commands."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from casework.cli._moved import moved, note_moved
from casework.cli._output import emit
from casework.cli.context import FORMAT, SHEETS_OUT, console, example, pass_project
from casework.errors import UsageError
from casework.labelling import (
    MERGE_FIELDS,
    AssignReport,
    ExportReport,
    FinalLabel,
    ImportReport,
    LabellingStatus,
    LabelRelease,
    adjudicate,
    adjudication_queue,
    assign_labels,
    bump_with_gaps,
    dashboard,
    export_sheets,
    import_sheets,
    labelling_status,
    list_disagreements,
    list_gaps,
    list_guidelines,
    parse_labellers,
    read_guideline,
    release_labels,
)
from casework.labelling.relabel import preview_relabel
from casework.project import Project

__all__ = ["COMMANDS"]


def _kappa(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _figure(value: float | None, unit: str) -> str:
    return "n/a" if value is None else f"{value:.1f} {unit}"


@click.group("label")
def label_group() -> None:
    """Blind labelling: assign rows, export sheets, import answers, progress, guidelines.

    Disagreements are decided in the review queue (`casework review`) and decided labels reach
    the dataset with `casework dataset apply`. See docs/labelling.md.
    """


@example("casework label assign refunds --labellers lab-14,lab-22,lab-31 --dry-run")
@label_group.command("assign")
@click.argument("dataset")
@click.option(
    "--labellers",
    "labellers",
    multiple=True,
    required=True,
    help="Who may be assigned: comma-separated pseudonymous ids (lab-14,lab-22,lab-31).",
)
@click.option(
    "--relabel-under",
    metavar="VERSION",
    help="Also send back every case labelled under this superseded guideline version.",
)
@click.option("--dry-run", is_flag=True, help="Show the assignments; write nothing.")
@FORMAT
@pass_project
def assign_cmd(
    project: Project,
    dataset: str,
    labellers: tuple[str, ...],
    relabel_under: str | None,
    dry_run: bool,
    fmt: str,
) -> None:
    """Assign DATASET's unlabelled (or sent-back) rows and its disagreements to labellers.

    New slices get two labellers per row until their kappa reaches thresholds.kappa_gate over
    labelling.calibration_min_rows rows; then a fixed share (labelling.second_label_share), drawn
    by a hash of labelling.salt and the case id, keeps a second labeller. Disagreements go to
    someone who labelled neither side. Nobody gets the same case twice.
    """
    report = assign_labels(
        project,
        dataset,
        parse_labellers(labellers),
        relabel_under=relabel_under,
        dry_run=dry_run,
    )
    if fmt == "json":
        from casework.labelling.outputs import LabelAssign  # here: only JSON output needs it

        emit(LabelAssign.model_validate(asdict(report)))
        return
    _render_assign(report)


def _render_assign(report: AssignReport) -> None:
    table = Table("slice", "guideline", "double-labelled rows", "kappa", "policy")
    for cal in report.calibration.values():
        policy = "one labeller + audit share" if cal.calibrated else "two labellers (calibrating)"
        table.add_row(cal.slice, cal.guideline_version, str(cal.rows), _kappa(cal.kappa), policy)
    console.print(table)
    verb = "would assign" if report.dry_run else "assigned"
    cases = len({a.case_id for a in report.assignments})
    console.print(f"{report.dataset}: {verb} {len(report.assignments)} tasks over {cases} cases")
    for labeller, roles in report.by_labeller.items():
        parts = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
        console.print(f"  {labeller}: {parts}")
    if report.relabel_rules:
        for rule in report.relabel_rules:
            console.print(f"  sent back by rule of {rule.version}: {rule.selector}", markup=False)
        console.print(
            f"  {report.relabel} of {report.relabel_labelled} cases labelled under the old "
            "guideline are touched by the rule and sent back for relabelling"
        )
        if report.relabel_sample:
            console.print(f"  e.g. {', '.join(report.relabel_sample)}", markup=False)
    elif report.relabel:
        console.print(f"  {report.relabel} cases sent back for relabelling")
    if report.cancelled:
        console.print(
            f"  cancelled {report.cancelled} open assignments under superseded guidelines "
            "(their cases were re-queued under the current one)"
        )
    if report.waiting:
        console.print(
            f"  {report.waiting} cases are decided but not released: "
            f"casework dataset apply {report.dataset} -m MSG"
        )
    for skipped in report.skipped:
        click.echo(f"not assigned: {skipped.case_id}: {skipped.reason}", err=True)


@example("casework label export refunds --labeller lab-14 --out sheets/")
@label_group.command("export")
@click.argument("dataset")
@click.option(
    "--labeller",
    "labellers",
    multiple=True,
    help="Only this labeller's sheet (repeatable, or comma-separated; default: everyone).",
)
@SHEETS_OUT
@pass_project
def export_cmd(project: Project, dataset: str, labellers: tuple[str, ...], out_dir: Path) -> None:
    """Write blind labelling sheets (JSONL and CSV) for labellers with open assignments.

    Sheets hold the situation, the declared tools and the guideline version, and nothing else:
    no agent output, other labels, run results, existing label, satisfiable or provenance.
    """
    chosen = parse_labellers(labellers, "labeller") if labellers else ()
    _render_export(export_sheets(project, dataset, out_dir, kind="label", labellers=chosen))


def _render_export(report: ExportReport) -> None:
    for sheet in report.files:
        console.print(f"{sheet.labeller}: {sheet.rows} cases -> {sheet.jsonl} , {sheet.csv}")
    for labeller in report.idle:
        console.print(f"{labeller}: no open {report.kind} work in {report.dataset}")
    if not report.files and not report.idle:
        console.print(f"{report.dataset}: no open {report.kind} work to export")
    if report.outdated:
        click.echo(
            f"{report.outdated} open assignments are under a superseded guideline and were not "
            f"exported: run `casework label assign {report.dataset} --labellers ...` first.",
            err=True,
        )


@example("casework label import sheets/lab-14.csv")
@label_group.command("import")
@click.argument("sheets", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@pass_project
def import_cmd(project: Project, sheets: tuple[Path, ...]) -> None:
    """Validate returned labelling sheets and store their answers (all or nothing)."""
    _render_import(import_sheets(project, list(sheets), kind="label"))


def _render_import(report: ImportReport) -> None:
    console.print(f"stored {report.total} labels from {report.sheets} sheets")
    for labeller, count in report.stored.items():
        console.print(f"  {labeller}: {count}")
    if report.unanswered:
        console.print(f"  {report.unanswered} lines left unanswered (not stored)")


@example("casework label status refunds", "casework label status refunds --dashboard --format json")
@label_group.command("status")
@click.argument("dataset")
@click.option(
    "--dashboard",
    is_flag=True,
    help="The dashboard view: kappa with its interval and band, open disagreements and reviews.",
)
@FORMAT
@pass_project
def status_cmd(project: Project, dataset: str, dashboard: bool, fmt: str) -> None:
    """Show labelling progress per slice and per labeller, with each slice's calibration.

    With `--dashboard`: per slice rows labelled once and twice, kappa with its 95% interval and
    band, open disagreements and review items; per labeller done, assigned and time per label.
    """
    if dashboard:
        _dashboard(project, dataset, fmt)
        return
    status = labelling_status(project, dataset)
    if fmt == "json":
        from casework.labelling.outputs import LabelStatus  # here: only JSON output needs it

        emit(LabelStatus.model_validate(asdict(status)))
        return
    _render_status(status)


def _render_status(status: LabellingStatus) -> None:
    table = Table(
        "slice", "guideline", "cases", "by status", "kappa (rows)", "policy", "cost per label"
    )
    for s in status.slices:
        cal = s.calibration
        table.add_row(
            s.slice,
            s.guideline_version,
            str(s.cases),
            ", ".join(f"{k} {n}" for k, n in s.counts.items()),
            f"{_kappa(cal.kappa)} ({cal.rows})",
            "calibrated" if cal.calibrated else "calibrating",
            _figure(s.seconds_per_label, "s"),
        )
    console.print(table)
    if status.labellers:
        people = Table("labeller", "open labels", "open adjudications", "done")
        for lab in status.labellers:
            people.add_row(
                lab.labeller, str(lab.open_labels), str(lab.open_adjudications), str(lab.done)
            )
        console.print(people)
    console.print(
        f"calibrated = kappa >= {status.gate:g} over >= {status.min_rows} double-labelled rows"
    )
    console.print(
        "human minutes per accepted case: "
        + _figure(status.minutes_per_accepted_case, "min")
        + " (generated cases reviewed; cost per label: seconds on screen per timed label)"
    )


def _render_release(result: LabelRelease) -> None:
    for held in result.held:
        click.echo(f"held back: {held.case_id}: {held.reason}", err=True)
    if result.record is None:
        console.print(f"{result.dataset}: no decided labels to release.")
        return
    record = result.record
    console.print(
        f"{result.dataset}@{record.number} released: {record.hash[:12]} ({record.counts.cases} cases)"
    )
    for line in record.changes:
        console.print(f"  - {line}")


@label_group.command("release")
@click.argument("dataset")
@click.option("-m", "--message", required=True, help="Why this version exists.")
@pass_project
def release_cmd(project: Project, dataset: str, message: str) -> None:
    """Write decided labels onto DATASET's cases and raw labels to labels.jsonl, as a new version."""
    _render_release(release_labels(project, dataset, message))


@label_group.command("dashboard")
@click.argument("dataset")
@FORMAT
@pass_project
def dashboard_cmd(project: Project, dataset: str, fmt: str) -> None:
    """Show DATASET's labelling dashboard: per slice rows, kappa with its interval and band; per labeller."""
    _dashboard(project, dataset, fmt)


def _dashboard(project: Project, dataset: str, fmt: str) -> None:
    board = dashboard(project, dataset)
    if fmt == "json":
        from casework.labelling.outputs import LabelDashboard  # here: only JSON output needs it

        emit(LabelDashboard.model_validate(board.as_json()))
        return
    table = Table(
        "slice",
        "guideline",
        "rows",
        "once",
        "twice",
        "kappa [95% CI] (rows)",
        "band",
        "disagreements",
        "review items",
        "cost per label",
    )
    for s in board.slices:
        interval = (
            f"{_kappa(s.kappa)} [{_kappa(s.kappa_low)}, {_kappa(s.kappa_high)}] ({s.kappa_rows})"
        )
        band = (s.band or "none") + (" (provisional)" if s.provisional else "")
        table.add_row(
            s.slice,
            s.guideline_version,
            str(s.rows),
            str(s.labelled_once),
            str(s.labelled_twice),
            interval,
            band,
            str(s.open_disagreements),
            str(s.open_review_items),
            _figure(s.seconds_per_label, "s"),
        )
    console.print(table)
    for s in board.slices:
        for rule in s.sent_back_by_rule:
            console.print(
                f"{s.slice}: sent back by rule of {rule.version}: {rule.selector} "
                f"({rule.rows} rows, {rule.open} open)",
                markup=False,
            )
    if board.labellers:
        people = Table("labeller", "done", "assigned", "median s per label")
        for lab in board.labellers:
            people.add_row(
                lab.labeller, str(lab.done), str(lab.assigned), _figure(lab.median_seconds, "s")
            )
        console.print(people)
    console.print(
        f"human minutes per accepted case: {_figure(board.minutes_per_accepted_case, 'min')}"
    )


@click.group("adjudicate")
def adjudicate_group() -> None:
    """Settle disagreements: list them, export and import adjudication sheets, apply decisions.

    Adjudicators are assigned by `casework label assign` (someone who labelled neither side).
    Adjudication sheets show the situation and the disagreeing labels, anonymised as A and B.
    """


@adjudicate_group.command("list")
@click.argument("dataset")
@FORMAT
@pass_project
def adjudicate_list_cmd(project: Project, dataset: str, fmt: str) -> None:
    """List DATASET's open disagreements and who is assigned to adjudicate each."""
    _render_disagreements(project, dataset, fmt)


@adjudicate_group.command("export")
@click.argument("dataset")
@click.option(
    "--adjudicator",
    "adjudicators",
    multiple=True,
    help="Only this adjudicator's sheet (repeatable, or comma-separated; default: everyone).",
)
@SHEETS_OUT
@pass_project
def adjudicate_export_cmd(
    project: Project, dataset: str, adjudicators: tuple[str, ...], out_dir: Path
) -> None:
    """Write adjudication sheets (JSONL and CSV) for adjudicators with open assignments."""
    chosen = parse_labellers(adjudicators, "adjudicator") if adjudicators else ()
    _render_export(export_sheets(project, dataset, out_dir, kind="adjudication", labellers=chosen))


@adjudicate_group.command("import")
@click.argument("sheets", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@pass_project
def adjudicate_import_cmd(project: Project, sheets: tuple[Path, ...]) -> None:
    """Validate returned adjudication sheets and store their decisions (all or nothing)."""
    _render_import(import_sheets(project, list(sheets), kind="adjudication"))


@adjudicate_group.command("apply")
@click.argument("dataset")
@click.option("-m", "--message", required=True, help="Why this version exists.")
@pass_project
def adjudicate_apply_cmd(project: Project, dataset: str, message: str) -> None:
    """Write decided labels onto DATASET's cases as a new version (same as `label release`)."""
    _render_release(release_labels(project, dataset, message))


@adjudicate_group.command("queue")
@click.argument("dataset")
@click.option(
    "--reveal-names", is_flag=True, help="Show who gave labels A and B (hidden by default)."
)
@click.option("--adjudicator", default=None, help="Only cases this person may decide.")
@FORMAT
@pass_project
def adjudicate_queue_cmd(
    project: Project, dataset: str, reveal_names: bool, adjudicator: str | None, fmt: str
) -> None:
    """List DATASET's disagreements, lowest-agreement slice first, labels side by side as A and B."""
    queue = adjudication_queue(project, dataset, reveal_names=reveal_names, adjudicator=adjudicator)
    if fmt == "json":
        from casework.labelling.outputs import AdjudicationQueue  # here: only JSON needs it

        emit(AdjudicationQueue.model_validate(queue.as_json()))
        return
    if not queue.entries:
        console.print(f"{queue.dataset}: no open disagreements.")
        return
    table = Table("case", "slice", "slice kappa", "differs on", "A", "B", "assigned")
    for e in queue.entries:
        sides = []
        for shown in e.labels[:2]:
            who = f" ({e.names[shown.name]})" if e.names else ""
            tools = ", ".join(shown.required_tools) or "-"
            sides.append(f"{shown.outcome}; required {tools}{who}")
        table.add_row(
            e.case_id,
            e.slice,
            f"{_kappa(e.slice_kappa)} ({e.slice_rows})",
            ", ".join(e.differs),
            *sides,
            "yes" if e.assigned else "no",
        )
    console.print(table)
    console.print(
        f"decide: casework adjudicate decide {queue.dataset} CASE --by NAME "
        "--pick A|B | --merge FIELD=A|B ... | --outcome OUTCOME [--required TOOL ...]"
    )


def _merge_fields(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for value in values:
        field_name, sep, side = value.partition("=")
        if not sep:
            raise UsageError(
                f"FIELD=A or FIELD=B with FIELD one of {', '.join(MERGE_FIELDS)}. Got '{value}'.",
                param="fields",
            )
        out[field_name.strip()] = side.strip().upper()
    return out


@adjudicate_group.command("decide")
@click.argument("dataset")
@click.argument("case_id", metavar="CASE")
@click.option("--by", "adjudicator", required=True, help="Who decides (pseudonymous id).")
@click.option("--pick", type=click.Choice(["A", "B"]), default=None, help="Take label A or B.")
@click.option(
    "--merge",
    "fields",
    multiple=True,
    metavar="FIELD=A|B",
    help=f"Merge field by field ({', '.join(MERGE_FIELDS)}; repeatable).",
)
@click.option("--outcome", default=None, help="Write the final label: its outcome.")
@click.option("--required", "required", multiple=True, help="Write: a required tool (repeatable).")
@click.option(
    "--forbidden", "forbidden", multiple=True, help="Write: a forbidden tool (repeatable)."
)
@click.option("--fact", "facts", multiple=True, help="Write: an expected fact (repeatable).")
@click.option("--gap", "gap_note", default=None, help="Tick 'guideline gap' with this note.")
@click.option("--seconds", type=float, default=None, help="Seconds the case was on screen.")
@FORMAT
@pass_project
def adjudicate_decide_cmd(
    project: Project,
    dataset: str,
    case_id: str,
    adjudicator: str,
    pick: str | None,
    fields: tuple[str, ...],
    outcome: str | None,
    required: tuple[str, ...],
    forbidden: tuple[str, ...],
    facts: tuple[str, ...],
    gap_note: str | None,
    seconds: float | None,
    fmt: str,
) -> None:
    """Decide the disagreement on CASE: --pick A|B, --merge FIELD=A|B ..., or --outcome ... (write).

    Stored like an imported adjudication sheet line (a case nobody holds is assigned to the
    adjudicator first, if they labelled neither side); `dataset apply` applies it.
    """
    chosen = [n for n, on in (("pick", pick), ("merge", fields), ("outcome", outcome)) if on]
    if len(chosen) != 1:
        raise UsageError(
            "adjudicate decide: give exactly one of --pick A|B, --merge FIELD=A|B or --outcome."
        )
    if (required or forbidden or facts) and outcome is None:
        raise UsageError("--required, --forbidden and --fact write a label: give --outcome too.")
    label = (
        FinalLabel(outcome, tuple(required), tuple(forbidden), tuple(facts)) if outcome else None
    )
    result = adjudicate(
        project,
        dataset,
        case_id,
        adjudicator=adjudicator,
        choice="merge" if fields else (pick or "write"),  # type: ignore[arg-type]
        fields=_merge_fields(fields) if fields else None,
        label=label,
        gap_note=gap_note,
        seconds=seconds,
    )
    if fmt == "json":
        from casework.labelling.outputs import AdjudicationDecided  # here: only JSON needs it

        emit(AdjudicationDecided.model_validate(result.as_json()))
        return
    final = result.label
    console.print(
        f"{result.case_id}: {final.outcome}; required {', '.join(final.required_tools) or '-'}; "
        f"forbidden {', '.join(final.forbidden_tools) or '-'}"
    )
    if result.gap is not None:
        console.print(f"guideline gap noted on {result.slice} ({result.guideline_version})")
    console.print(f"apply: casework dataset apply {result.dataset} -m MSG")


def _render_disagreements(project: Project, dataset: str, fmt: str) -> None:
    found = list_disagreements(project, dataset)
    if fmt == "json":
        from casework.labelling.outputs import DisagreementList  # here: only JSON needs it

        emit(
            DisagreementList.model_validate(
                [
                    {
                        "case_id": d.case_id,
                        "slice": d.slice,
                        "guideline_version": d.guideline_version,
                        "differs": list(d.differs),
                        "adjudicator": d.adjudicator,
                        "labels": [r.model_dump(mode="json") for r in d.labels],
                    }
                    for d in found
                ]
            )
        )
        return
    if not found:
        console.print(f"{dataset}: no open disagreements.")
        return
    table = Table("case", "slice", "guideline", "differs on", "labels", "adjudicator")
    for d in found:
        labels = "; ".join(f"{r.labeller}: {r.outcome}" for r in d.labels)
        table.add_row(
            d.case_id,
            d.slice,
            d.guideline_version,
            ", ".join(d.differs),
            labels,
            d.adjudicator or "(none: run label assign)",
        )
    console.print(table)
    console.print(f"{len(found)} open disagreements")


@label_group.group("guideline")
def guideline_group() -> None:
    """Versioned labelling guidelines (guidelines/<slice>.md).

    See docs/labelling.md.
    """


@example(
    'casework label guideline bump refunds -m "a partial refund is resolve, not escalate"',
    'casework label guideline bump refunds -m "partially shipped: escalate" --relabel-where '
    "\"situation.fixtures[?tool=='get_order'].response.status | contains(@, 'partially_shipped')\" "
    "--dry-run",
)
@guideline_group.command("bump")
@click.argument("slice_name", metavar="SLICE")
@click.option("-m", "--message", required=True, help="What rule changed, in one line.")
@click.option(
    "--relabel-where",
    "relabel_where",
    metavar="EXPR",
    default=None,
    help="The rows the rule touches: a JMESPath expression over the case (situation, fixtures, "
    "state, label), stored with the new version; `label assign --relabel-under` sends back "
    "only those.",
)
@click.option(
    "--dry-run", is_flag=True, help="Preview the rows --relabel-where selects; write nothing."
)
@pass_project
def bump_cmd(
    project: Project, slice_name: str, message: str, relabel_where: str | None, dry_run: bool
) -> None:
    """Raise SLICE's guideline version (gN -> gN+1) and add a changelog entry.

    Open guideline gap notes of SLICE are listed and marked addressed by the new version. With
    --relabel-where, the rows labelled under the current version that the expression selects are
    counted per dataset, with a sample of their ids, before anything is written.
    """
    if relabel_where is not None:
        for preview in preview_relabel(project, slice_name, relabel_where):
            console.print(
                f"{preview.dataset}: the rule selects {len(preview.selected)} of "
                f"{preview.labelled} rows labelled under {preview.labelled_under}",
                markup=False,
            )
            if preview.sample:
                more = len(preview.selected) - len(preview.sample)
                tail = f", … and {more} more" if more else ""
                console.print(f"  e.g. {', '.join(preview.sample)}{tail}", markup=False)
    elif dry_run:
        raise UsageError(
            "previews the rows a rule selects: give `relabel_where` too.",
            param="dry_run",
            mentions=("relabel_where",),
        )
    if dry_run:
        console.print("dry run: the guideline was not bumped")
        return
    done = bump_with_gaps(project, slice_name, message, relabel_where=relabel_where)
    bump = done.bump
    console.print(f"{bump.slice}: {bump.old} -> {bump.new} ({project.relative(bump.path)})")
    console.print(
        f"rows labelled under the old rule: casework dataset cases DATASET --labelled-under {bump.old}"
    )
    which = "the rows the rule selects" if relabel_where is not None else "them"
    console.print(
        f"send {which} back: casework label assign DATASET --relabel-under {bump.old} --labellers ..."
    )
    if done.addressed:
        console.print(f"guideline gap notes addressed by {bump.new}:")
        for gap in done.addressed:
            where = f" ({gap.dataset}/{gap.case_id})" if gap.case_id else ""
            console.print(f"  - #{gap.id} {gap.author}{where}: {gap.note}", markup=False)


@example("casework label guideline gaps --slice refunds --open")
@guideline_group.command("gaps")
@click.option("--slice", "slice_name", default=None, help="Only this slice's notes.")
@click.option("--open", "open_only", is_flag=True, help="Only notes no bump has addressed yet.")
@FORMAT
@pass_project
def gaps_cmd(project: Project, slice_name: str | None, open_only: bool, fmt: str) -> None:
    """List guideline gap notes (ticked while adjudicating) by slice; `guideline bump` addresses them."""
    gaps = list_gaps(project, slice_name=slice_name, open_only=open_only)
    if fmt == "json":
        from casework.labelling.outputs import GuidelineGapList  # here: only JSON output needs it

        emit(GuidelineGapList.model_validate([g.as_json() for g in gaps]))
        return
    if not gaps:
        console.print("no guideline gap notes")
        return
    table = Table("id", "slice", "guideline", "case", "by", "note", "addressed by")
    for g in gaps:
        table.add_row(
            str(g.id),
            g.slice,
            g.guideline_version,
            g.case_id or "",
            g.author,
            escape(g.note),
            g.addressed_version or "open",
        )
    console.print(table)


@example("casework label guideline show refunds")
@guideline_group.command("show")
@click.argument("slice_name", metavar="SLICE")
@pass_project
def show_cmd(project: Project, slice_name: str) -> None:
    """Print SLICE's guideline (version, then the file)."""
    guideline = read_guideline(project, slice_name)
    click.echo(f"{guideline.version}  ({project.relative(guideline.path)})")
    click.echo(guideline.text, nl=False)


@example("casework label guideline list")
@guideline_group.command("list")
@FORMAT
@pass_project
def list_cmd(project: Project, fmt: str) -> None:
    """List every slice's guideline version and its last change."""
    guidelines = list_guidelines(project)
    if fmt == "json":
        from casework.labelling.outputs import GuidelineList  # here: only JSON output needs it

        emit(
            GuidelineList.model_validate(
                [
                    {
                        "slice": g.slice,
                        "version": g.version,
                        "path": project.relative(g.path),
                        "changelog": list(g.changelog),
                    }
                    for g in guidelines
                ]
            )
        )
        return
    table = Table("slice", "version", "file", "last change")
    for g in guidelines:
        table.add_row(
            g.slice, g.version, project.relative(g.path), g.changelog[0] if g.changelog else ""
        )
    console.print(table)


note_moved(label_group.commands["dashboard"], "label dashboard", "label status --dashboard")
note_moved(label_group.commands["release"], "label release", "dataset apply")

COMMANDS: list[click.Command] = [label_group]

#: The old top-level spellings, hidden for one release: the adjudication commands keep their
#: own implementation and name the review-queue command that replaces each.
ALIASES: list[click.Command] = [
    note_moved(
        adjudicate_group,
        "adjudicate",
        "review",
        subs={
            "list": "review list --kind disagreement",
            "queue": "review list --kind disagreement",
            "export": "review export",
            "import": "review import",
            "decide": "review decide",
            "apply": "dataset apply",
        },
    ),
    moved(guideline_group, "guideline", "label guideline"),
]

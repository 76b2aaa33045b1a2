"""Review queue commands: `review sync|add-cases|list|show|decide|export|import`, and `apply_cmd`.

Every human decision is a kind of review item (leakage-pair, generated-case, disagreement,
judge-verdict); `apply_cmd` (registered as `dataset apply`) releases the decided work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from casework.cli._output import emit
from casework.cli._review_trajectory import add_trials_cmd, agreement_cmd
from casework.cli.context import FORMAT, console, example, pass_project
from casework.dataset import read_cases
from casework.decoding import decode_utf8
from casework.errors import InputError, UsageError
from casework.labelling import MERGE_FIELDS
from casework.project import Project
from casework.review import (
    DISAGREEMENT,
    JUDGE_VERDICT,
    LEAKAGE_PAIR,
    STATUSES,
    ApplyReport,
    ReviewTask,
    add_items,
    apply_decisions,
    decide_from_file,
    decide_task,
    disagreement_names,
    export_review_sheets,
    generated_case_item,
    get_task,
    import_review_sheets,
    list_tasks,
    review_kinds,
    sync_review,
)
from casework.runner.sim_audit import TRAJECTORY

__all__ = ["COMMANDS", "apply_cmd"]

_KINDS_HELP = "leakage-pair, generated-case, disagreement, judge-verdict, trajectory"


@click.group("review")
def review_group() -> None:
    """Review queue: every human decision, decided one item at a time or on sheets.

    Kinds: leakage pairs, generated cases, disagreements, judge verdicts, trajectories
    (`review add-trials`); `dataset apply`
    releases the decided work as one version. See docs/review.md.
    """


@example("casework review sync refunds")
@review_group.command("sync")
@click.argument("dataset")
@FORMAT
@pass_project
def sync_cmd(project: Project, dataset: str, fmt: str) -> None:
    """Build DATASET's review items: open leakage flags, disagreements, unanswered judge verdicts.

    Safe to run again. Items settled outside the queue (a flag decided in the leakage review
    file, a disagreement adjudicated on a sheet, a relabel) are withdrawn.
    """
    reports = sync_review(project, dataset)
    if fmt == "json":
        from casework.review.outputs import ReviewSync  # here: only JSON output needs it

        emit(
            ReviewSync.model_validate(
                {
                    "dataset": next(iter(reports.values())).dataset,
                    **{
                        what: sorted(i for r in reports.values() for i in getattr(r, what))
                        for what in ("created", "existing", "withdrawn")
                    },
                    "kinds": {kind: r.as_json() for kind, r in reports.items()},
                }
            )
        )
        return
    for kind, report in reports.items():
        console.print(
            f"{report.dataset}: {len(report.created)} new {kind} items, "
            f"{len(report.existing)} already open, {len(report.withdrawn)} withdrawn"
        )


@example("casework review add-cases refunds drafts.jsonl --source gen-v2")
@review_group.command("add-cases")
@click.argument("dataset")
@click.argument("cases_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--source", required=True, help="What generated the cases (shown to reviewers).")
@FORMAT
@pass_project
def add_cases_cmd(project: Project, dataset: str, cases_file: Path, source: str, fmt: str) -> None:
    """Queue the generated cases in CASES_FILE (JSONL) for review before they join DATASET."""
    cases = read_cases(cases_file, shown=project.relative(cases_file))
    report = add_items(project, [generated_case_item(dataset, c, source=source) for c in cases])
    if fmt == "json":
        from casework.review.outputs import ReviewAdd  # here: only JSON output needs it

        emit(ReviewAdd(created=list(report.created), existing=list(report.existing)))
        return
    console.print(
        f"{dataset}: {len(report.created)} generated-case items queued, "
        f"{len(report.existing)} already open"
    )


@example("casework review list --kind judge-verdict --status open")
@review_group.command("list")
@click.option("--kind", default=None, metavar="KIND", help=f"Only this kind ({_KINDS_HELP}).")
@click.option(
    "--status", type=click.Choice(STATUSES), default=None, help="Only items in this status."
)
@click.option("--dataset", default=None, help="Only this dataset's items.")
@click.option(
    "--reveal-names",
    is_flag=True,
    help="With --kind disagreement: show who gave labels A and B (hidden by default).",
)
@FORMAT
@pass_project
def list_cmd(
    project: Project,
    kind: str | None,
    status: str | None,
    dataset: str | None,
    reveal_names: bool,
    fmt: str,
) -> None:
    """List review items, oldest first (disagreements alone: lowest-agreement slice first).

    Items are blind; --reveal-names (disagreements only) adds who labelled each open one.
    """
    if reveal_names and kind != DISAGREEMENT:
        raise UsageError("--reveal-names shows labellers: give --kind disagreement too.")
    tasks = list_tasks(project, kind=kind, status=status, dataset=dataset)
    names = disagreement_names(project, tasks) if reveal_names else {}
    if fmt == "json":
        from casework.review.outputs import ReviewItemList  # here: only JSON output needs it

        emit(
            ReviewItemList.model_validate(
                [t.as_json() | ({"names": names.get(t.id)} if reveal_names else {}) for t in tasks]
            )
        )
        return
    if not tasks:
        console.print("no review items")
        return
    columns = ["id", "kind", "dataset", "subject", "slice", "status", "decision", "reviewer"]
    table = Table(*columns, *(["names"] if reveal_names else []))
    for t in tasks:
        who = ", ".join(f"{k}: {v}" for k, v in names.get(t.id, {}).items())
        table.add_row(
            str(t.id),
            t.kind,
            t.dataset,
            escape(t.subject),
            t.slice or "",
            t.status,
            t.decision or "",
            t.reviewer or "",
            *([escape(who)] if reveal_names else []),
        )
    console.print(table)


def _highlighted(text: str, spans: list[list[int]]) -> str:
    out, at = [], 0
    for start, end in spans:
        out += [escape(text[at:start]), f"[reverse]{escape(text[start:end])}[/reverse]"]
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def _label_text(label: dict[str, Any]) -> str:
    return (
        f"{label['outcome']}; required {', '.join(label['required_tools']) or '-'}; "
        f"forbidden {', '.join(label['forbidden_tools']) or '-'}; "
        f"facts {'; '.join(label['answer_facts']) or '-'}"
    )


def _render_payload(task: ReviewTask) -> None:
    p = task.payload
    if task.kind == LEAKAGE_PAIR:
        console.print(f"Jaccard {p['jaccard']:.3f}, {p['shared_count']} shared shingles")
        for side in ("left", "right"):
            row = p[side]
            console.print(f"\n[bold]{side}: {escape(row['case_id'])} ({row['split']})[/bold]")
            console.print(_highlighted(row["text"], row["highlight"]))
    elif task.kind == DISAGREEMENT:
        kappa = "undefined" if p["slice_kappa"] is None else f"{p['slice_kappa']:.2f}"
        console.print(
            f"slice {escape(p['slice'])} ({p['guideline_version']}): kappa {kappa} on "
            f"{p['slice_rows']} rows; labels differ on {', '.join(p['differs'])}"
        )
        for turn in p["situation"].get("turns", []):
            console.print(f"{turn['role']}: {escape(str(turn.get('content', '')))}")
        for label in p["labels"]:
            console.print(f"[bold]{label['name']}[/bold]: {escape(_label_text(label))}")
    elif task.kind == JUDGE_VERDICT:
        console.print(f"reviewer: {p['reviewer']} · {escape(p['question'])}")
        if p.get("rubric"):
            console.print(f"rubric: {escape(p['rubric'])}")
        if p.get("fact"):
            console.print(f"fact: {escape(p['fact'])}")
        for turn in p["conversation"]:
            console.print(f"{turn['role']}: {escape(str(turn.get('content', '')))}")
        for call in p["tool_calls"]:
            console.print(escape(f"  -> {call['name']}({json.dumps(call['arguments'])})"))
        console.print(f"[bold]reply[/bold]: {escape(p['reply'])}")
    elif task.kind == TRAJECTORY:
        _render_trajectory(p)
    else:
        console.print(escape(json.dumps(p, indent=2, ensure_ascii=False)))


def _render_trajectory(p: dict[str, Any]) -> None:
    who = p.get("reviewer") or "adjudication (neither reviewer)"
    console.print(f"trial {escape(p['case_id'])} #{p['trial']} · for {escape(who)}")
    for turn in p["prefix"]:
        console.print(f"  (prefix) {turn['role']}: {escape(turn['text'])}")
    for s in p["steps"]:
        if s["role"] == "tool_call":
            got = f"error {s['error']}" if "error" in s else json.dumps(s.get("result"))
            text = f"{s['name']}({json.dumps(s['arguments'])}) -> {got}"
        else:
            text = f"{s['role']}: {s['text']}"
        console.print(f"[{s['index']}] {escape(text)}")
    if p.get("state_diff"):
        console.print(f"state diff: {escape(json.dumps(p['state_diff']))}")
    for r in p.get("reviews", []):
        console.print(escape(f"{r['reviewer']}: {json.dumps(r)}"))


def _render_task(task: ReviewTask) -> None:
    console.print(f"review item {task.id}: {task.kind} · {task.dataset} · {escape(task.subject)}")
    console.print(
        f"status: {task.status}"
        + (f" ({task.decision} by {task.reviewer})" if task.decision else "")
    )
    _render_payload(task)
    kind = review_kinds()[task.kind]
    if task.status != "open":
        return
    how = "|".join(kind.decisions)
    if task.kind == DISAGREEMENT:
        how = "--pick A|B | --merge FIELD=A|B ... | --outcome OUTCOME [--required TOOL ...]"
    elif task.kind == JUDGE_VERDICT:
        how = "yes|no" if task.payload["kind"] == "answer_fact" else "|".join(kind.decisions[:4])
    elif task.kind == TRAJECTORY:
        how = "fail --step I --category C --severity S --fault F | none"
    console.print(f"\ndecide: casework review decide {task.id} {how} --reviewer NAME")


@example("casework review show 12")
@review_group.command("show")
@click.argument("task_id", metavar="ID", type=int)
@FORMAT
@pass_project
def show_cmd(project: Project, task_id: int, fmt: str) -> None:
    """Show review item ID with what a reviewer needs to decide it.

    A disagreement shows the two blind labels as A and B (never who gave them, never an agent's
    output); a judge verdict shows its blind sheet line (never the judge's verdict).
    """
    task = get_task(project, task_id)
    if fmt == "json":
        from casework.review.outputs import ReviewItem  # here: only JSON output needs it

        emit(ReviewItem.model_validate(task.as_json()))
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


def _adjudication(
    decision: str | None,
    pick: str | None,
    fields: tuple[str, ...],
    label: dict[str, Any] | None,
    gap_note: str | None,
) -> tuple[str | None, dict[str, Any] | None]:
    """The decision and data a disagreement's options spell (none given: the positional one)."""
    chosen = [n for n, on in (("pick", pick), ("merge", fields), ("outcome", label)) if on]
    if len(chosen) > 1 or (chosen and decision is not None):
        raise UsageError(
            "review decide: give one of DECISION, --pick A|B, --merge FIELD=A|B or --outcome."
        )
    data: dict[str, Any] = {}
    if fields:
        decision, data["fields"] = "merge", _merge_fields(fields)
    elif label is not None:
        decision, data["label"] = "write", label
    elif pick is not None:
        decision = pick
    if gap_note is not None:
        data["gap_note"] = gap_note
    return decision, data or None


@example(
    "casework review decide 7 --pick B --by adj-1",
    "casework review decide --decisions decisions.jsonl",
)
@review_group.command("decide")
@click.argument("task_id", metavar="[ID]", type=int, required=False)
@click.argument("decision", required=False)
@click.option(
    "--decisions",
    "decisions_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Decide in bulk from a JSONL file, one decision a line (all lines or none).",
)
@click.option("--reviewer", "--by", "reviewer", default=None, help="Who decides (pseudonymous id).")
@click.option("--reason", default=None, help="Why (required to reject a generated case).")
@click.option("--seconds", type=float, default=None, help="Seconds the item was on screen.")
@click.option(
    "--edited",
    "data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="For an edit: a file holding the edited case as JSON.",
)
@click.option(
    "--pick", type=click.Choice(["A", "B"]), default=None, help="Disagreement: take A or B."
)
@click.option(
    "--merge",
    "fields",
    multiple=True,
    metavar="FIELD=A|B",
    help=f"Disagreement: merge field by field ({', '.join(MERGE_FIELDS)}; repeatable).",
)
@click.option("--outcome", default=None, help="Disagreement: write the final label, its outcome.")
@click.option("--required", multiple=True, help="With --outcome: a required tool (repeatable).")
@click.option("--forbidden", multiple=True, help="With --outcome: a forbidden tool (repeatable).")
@click.option(
    "--fact", "facts", multiple=True, help="With --outcome: an expected fact (repeatable)."
)
@click.option(
    "--gap", "gap_note", default=None, help="Disagreement: tick 'guideline gap' with this note."
)
@click.option("--step", type=int, default=None, help="Trajectory fail: the first failing step.")
@click.option("--category", default=None, help="Trajectory fail: a category of the taxonomy.")
@click.option("--severity", default=None, help="Trajectory fail: minor, major or critical.")
@click.option(
    "--fault", default=None, help="Trajectory fail: agent, simulated_user, environment or case."
)
@FORMAT
@pass_project
def decide_cmd(
    project: Project,
    task_id: int | None,
    decision: str | None,
    decisions_file: Path | None,
    reviewer: str | None,
    reason: str | None,
    seconds: float | None,
    data: Path | None,
    pick: str | None,
    fields: tuple[str, ...],
    outcome: str | None,
    required: tuple[str, ...],
    forbidden: tuple[str, ...],
    facts: tuple[str, ...],
    gap_note: str | None,
    step: int | None,
    category: str | None,
    severity: str | None,
    fault: str | None,
    fmt: str,
) -> None:
    """Decide review item ID; the first of two reviewers deciding one item wins.

    \b
    leakage-pair:   move-left | move-right | keep | template (applied by `dataset apply`)
    generated-case: accept | edit --edited FILE | reject --reason WHY (joins the working tree)
    disagreement:   --pick A|B | --merge FIELD=A|B ... | --outcome O [--required T ...]
                    [--gap NOTE]; stored as an adjudication sheet line is, by an adjudicator
                    who labelled neither side
    judge-verdict:  resolve|clarify|refuse|escalate (outcome) or yes|no (fact), by the
                    reviewer the verdict was given to
    trajectory:     fail --step I --category C --severity S --fault F | none, by the reviewer
                    it was given to (an adjudication: by neither reviewer)

    With --decisions FILE, each line of FILE decides one item of any kind: {"item": ID or case
    id, "decision": ..., "reviewer": ..., "seconds": ...} plus what the kind takes ("reason";
    "case" for an edit; "fields", "label" or "gap_note" for a disagreement). Every line is
    checked before any is stored; a bad line is reported as FILE:LINE and nothing is decided.
    """  # noqa: D301 (\b keeps click from rewrapping the kinds' table)
    marked = {"step": step, "category": category, "severity": severity, "fault": fault}
    marked = {k: v for k, v in marked.items() if v is not None}
    if decisions_file is not None:
        single = (task_id, decision, reviewer, reason, seconds, data, pick, outcome, gap_note)
        if marked:
            raise UsageError("--decisions decides from the file alone: give no ID or options.")
        if any(v is not None for v in single) or fields or required or forbidden or facts:
            raise UsageError("--decisions decides from the file alone: give no ID or options.")
        _decide_file(project, decisions_file, fmt)
        return
    if task_id is None or reviewer is None:
        raise UsageError("review decide: give ID and --reviewer (or --decisions FILE).")
    if (required or forbidden or facts) and outcome is None:
        raise UsageError("--required, --forbidden and --fact write a label: give --outcome too.")
    label = None
    if outcome is not None:
        label = {
            "outcome": outcome,
            "required_tools": list(required),
            "forbidden_tools": list(forbidden),
            "answer_facts": list(facts),
        }
    chosen, carried = _adjudication(decision, pick, fields, label, gap_note)
    if chosen is None:
        raise UsageError("review decide: give the DECISION (see `casework review show ID`).")
    edited = _edited(data)
    if marked:
        if edited is not None or carried is not None:
            raise UsageError("--step, --category, --severity and --fault are a trajectory's.")
        carried = marked
    if edited is not None and carried is not None:
        raise UsageError("--edited is for a generated case; the other options for a disagreement.")
    task = decide_task(
        project,
        task_id,
        chosen,
        reviewer=reviewer,
        reason=reason,
        seconds=seconds,
        data=edited or carried,
    )
    if fmt == "json":
        from casework.review.outputs import ReviewItem  # here: only JSON output needs it

        emit(ReviewItem.model_validate(task.as_json()))
        return
    console.print(f"review item {task.id} ({task.kind}, {escape(task.subject)}): {task.decision}")
    if _to_apply(task):
        console.print(f"apply decided work: casework dataset apply {task.dataset} -m MSG")


def _decide_file(project: Project, path: Path, fmt: str) -> None:
    decided = decide_from_file(project, path)
    if fmt == "json":
        from casework.review.outputs import ReviewItemList  # here: only JSON output needs it

        emit(ReviewItemList.model_validate([t.as_json() for t in decided]))
        return
    counts: dict[str, int] = {}
    for t in decided:
        counts[f"{t.kind} {t.decision}"] = counts.get(f"{t.kind} {t.decision}", 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing"
    console.print(f"decided {len(decided)} item(s): {summary}", markup=False)
    for name in sorted({t.dataset for t in decided if _to_apply(t)}):
        console.print(f"apply decided work: casework dataset apply {name} -m MSG")


def _to_apply(task: ReviewTask) -> bool:
    return task.kind in (LEAKAGE_PAIR, DISAGREEMENT) or task.decision in ("accept", "edit")


@example("casework review export --kind judge-verdict --out sheets/")
@review_group.command("export")
@click.option(
    "--kind",
    required=True,
    type=click.Choice([DISAGREEMENT, JUDGE_VERDICT]),
    help="Adjudication sheets (disagreement) or verdict sheets (judge-verdict).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the sheets to.",
)
@click.option("--dataset", default=None, help="The dataset (required for disagreement).")
@click.option(
    "--person", "people", multiple=True, help="Only this adjudicator or reviewer (repeatable)."
)
@click.option(
    "--sheet-format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="Verdict sheet format (adjudication sheets come as both).",
)
@FORMAT
@pass_project
def export_cmd(
    project: Project,
    kind: str,
    out_dir: Path,
    dataset: str | None,
    people: tuple[str, ...],
    sheet_format: str,
    fmt: str,
) -> None:
    """Write the sheets of one kind's open items, one per person, for deciding offline.

    disagreement: each adjudicator's adjudication sheet (JSONL and CSV), labels as A and B.
    judge-verdict: each reviewer's open sampled verdicts, re-issued and signed (`judge sample`
    draws new ones). Return sheets with `review import`.
    """
    written = export_review_sheets(
        project,
        kind,
        out_dir,
        dataset=dataset,
        people=people,
        sheet_format="csv" if sheet_format == "csv" else "jsonl",
    )
    if fmt == "json":
        from casework.review.outputs import ReviewSheets  # here: only JSON output needs it

        emit(ReviewSheets({name: [str(p) for p in paths] for name, paths in written.items()}))
        return
    if not written:
        console.print(f"no open {kind} items to put on a sheet")
    for name, paths in written.items():
        console.print(f"wrote {', '.join(project.relative(p) for p in paths)} ({name})")


@example(
    "casework review import sheets/verdicts-rev-1.jsonl sheets/refunds.adj-1.adjudication.jsonl"
)
@review_group.command("import")
@click.argument("sheets", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@FORMAT
@pass_project
def import_cmd(project: Project, sheets: tuple[Path, ...], fmt: str) -> None:
    """Store returned adjudication and judge-verdict SHEET...; each sheet's kind is read from it.

    Each kind is stored all or nothing, signatures checked; label sheets stay `label import`.
    """
    report = import_review_sheets(project, list(sheets))
    if fmt == "json":
        from casework.review.outputs import ReviewImport  # here: only JSON output needs it

        emit(ReviewImport.model_validate(report.as_json()))
        return
    if report.adjudications is not None:
        adj = report.adjudications
        console.print(
            f"disagreement: {adj.total} adjudications stored from {adj.sheets} sheet(s), "
            f"{adj.unanswered} left blank"
        )
    if report.verdicts is not None:
        v = report.verdicts
        console.print(
            f"judge-verdict: {v.stored} verdict(s) stored ({v.replaced} replacing earlier "
            f"answers), {v.unanswered} left blank"
        )
        agree = v.agreement
        if agree.items:
            kappa = "–" if agree.kappa is None else f"{agree.kappa:.3f}"
            if agree.method and agree.low is not None and agree.high is not None:
                # several trials of one case: the interval counts cases
                kappa += f" [{agree.low:.3f}, {agree.high:.3f}] ({agree.method.split(':')[0]})"
            console.print(
                f"human–human agreement on {agree.items} item(s) graded by two people: "
                f"{agree.agreeing}/{agree.items} agree, kappa {kappa}"
            )


def _render_apply(report: ApplyReport) -> None:
    record = report.record
    if record is None and not report.applied:
        console.print(f"{report.dataset}: nothing decided to apply")
    elif record is None:
        console.print(f"{report.dataset}: no case changed, no new version")
    else:
        console.print(
            f"{report.dataset}@{record.number} released: {record.hash[:12]} "
            f"({record.counts.cases} cases)"
        )
        for line in record.changes:
            console.print(f"  - {escape(line)}")
    console.print(f"generated-case: {len(report.generated)} released")
    console.print(
        f"labels: {report.labelled} labelled, {report.relabelled} relabelled, "
        f"{report.adjudicated} by adjudication, {report.raw_labels} raw labels"
    )
    console.print(
        f"leakage-pair: {len(report.moved)} moved, {report.kept} kept, "
        f"{report.templates} template-like"
        + (f"; {report.superseded} other flags no longer cross splits" if report.superseded else "")
    )
    for held in report.held:
        console.print(f"held: {escape(held.case_id)}: {escape(held.reason)}")


@example('casework dataset apply refunds -m "week 48 review"')
@click.command("apply")
@click.argument("dataset")
@click.option("-m", "--message", required=True, help="Why this version exists.")
@FORMAT
@pass_project
def apply_cmd(project: Project, dataset: str, message: str, fmt: str) -> None:
    """Release all of DATASET's decided work as one new version (nothing decided: no version).

    Decided labels and adjudications, decided leakage flags (rows move to dev) and generated cases
    accepted in review go into one release; prints what it applied per kind.
    """
    report = apply_decisions(project, dataset, message=message)
    if fmt == "json":
        from casework.review.outputs import DatasetApply  # here: only JSON output needs it

        emit(DatasetApply.model_validate(report.as_json()))
    else:
        _render_apply(report)


review_group.add_command(add_trials_cmd)
review_group.add_command(agreement_cmd)
COMMANDS: list[click.Command] = [review_group]

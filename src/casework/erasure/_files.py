"""How each kind of file casework writes loses the rows that leave.

Each eraser takes the erasure's context and returns how many items it removed (trials, flags,
shape members, keys, copies listed); paths it rewrote go into the context.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from casework.atomic import atomic_write_bytes
from casework.dataset.copies import read_copies, write_copies
from casework.dataset.lock import dataset_lock
from casework.erasure._target import Context, Target, datasets_of, mined_id
from casework.errors import CaseworkError
from casework.gate._gather import slice_kappas
from casework.leakage.flagfile import read_flags, write_flags
from casework.project import Project
from casework.report import write_report
from casework.review._sample import read_tuning, tuning_path
from casework.runner import load_run
from casework.runner.redact import LogRedaction, redact_run_logs
from casework.shapes import Shape, load_shapes, shape_set_names
from casework.shapes._store import ShapeSet, save_shapes, shapes_content, shapes_file

FileEraser = Callable[[Context], int]


def erase_flag_files(ctx: Context) -> int:
    """Drop the review flags naming a removed row from `leakage.jsonl` (their shingles are text)."""
    total = 0
    for name in datasets_of(ctx.project, ctx.target):
        ids = ctx.target.ids(name)
        with dataset_lock(ctx.project, name):
            flags = read_flags(ctx.project, name)
            kept = [f for f in flags if f.left_id not in ids and f.right_id not in ids]
            if len(kept) != len(flags) and not ctx.dry_run:
                write_flags(ctx.project, name, kept)
        total += len(flags) - len(kept)
    return total


def erase_run_logs(ctx: Context) -> int:
    """Rewrite each run log without the trials of removed rows (header and counts too)."""
    needles = sorted(ctx.target.needles)
    for name in datasets_of(ctx.project, ctx.target):
        ids = ctx.target.ids(name)
        ctx.run_logs += redact_run_logs(ctx.project, name, ids, needles, dry_run=ctx.dry_run)
    ctx.handled.update(log.path.resolve() for log in ctx.run_logs)
    return sum(log.trials for log in ctx.run_logs)


def _kappas(project: Project, log: LogRedaction) -> dict[str, float | None]:
    """Labeller kappas for a regenerated report; none when the run's version is gone (purged)."""
    try:
        return slice_kappas(project, load_run(project, str(log.path)))
    except CaseworkError:
        return {}


def erase_reports(ctx: Context) -> int:
    """Regenerate the report of each redacted run; delete other reports holding removed rows."""
    project = ctx.project
    for log in ctx.run_logs:
        html = log.path.with_suffix(".html")
        if html.is_file():
            if not ctx.dry_run:
                write_report(project, str(log.path), html, labeller_kappa=_kappas(project, log))
            ctx.reports.append(html)
    needles = [n.encode() for n in sorted(ctx.target.needles) if n]
    folder = project.path(project.config.paths.runs)
    for html in sorted(folder.glob("*.html")) if folder.is_dir() else []:
        if html in ctx.reports:
            continue
        if any(n in html.read_bytes() for n in needles):
            if not ctx.dry_run:
                html.unlink()
            ctx.reports_deleted.append(html)
    ctx.handled.update(p.resolve() for p in (*ctx.reports, *ctx.reports_deleted))
    return len(ctx.reports) + len(ctx.reports_deleted)


def _example_names(target: Target, case_id: str, session: str, text: str) -> bool:
    return case_id in target.all_ids() or session in target.needles or target.marks(text)


def discover_in_shapes(project: Project, target: Target) -> None:
    """Name the mined conversations of the request that only shapes hold (no dataset row).

    A session named by the request names its mined id; a shape example whose session or text
    holds a mark of the request names its id and session too.
    """
    target.add({i for n in target.needles if (i := mined_id(n))}, ())
    for name in shape_set_names(project):
        try:
            shapes = load_shapes(project, name).shapes
        except CaseworkError:
            continue  # left unread here; erase_shapes reports it
        for shape in shapes:
            for ex in (*shape.representatives, *shape.exemplars):
                if _example_names(target, ex.case_id, ex.session, ex.text):
                    target.add({ex.case_id}, {ex.session})


def _shape_without(shape: Shape, target: Target) -> tuple[Shape | None, int]:
    """The shape without the members that leave (``None``: it must go), and members removed.

    A shape whose most central member leaves goes whole: its situation, and possibly its name,
    are that conversation's text.
    """
    ids = target.all_ids()
    gone = [m for m in shape.members if m in ids]
    central = shape.representatives[0] if shape.representatives else None
    if central is not None and _example_names(target, central.case_id, central.session, ""):
        return None, shape.size
    if target.marks(json.dumps([shape.name, shape.situation], ensure_ascii=False)):
        return None, shape.size
    if not gone:
        return shape, 0

    def keep(examples: Sequence[object]) -> list[object]:
        return [e for e in examples if getattr(e, "case_id", None) not in ids]

    kept = shape.model_copy(
        update={
            "members": [m for m in shape.members if m not in ids],
            "size": max(1, shape.size - len(gone)),
            "representatives": keep(shape.representatives),
            "exemplars": keep(shape.exemplars),
            "terms": [t for t in shape.terms if not target.marks(t)],
        }
    )
    return kept, len(gone)


def _shape_set_without(ctx: Context, found: ShapeSet) -> int:
    kept: list[Shape] = []
    removed = 0
    for shape in found.shapes:
        new, gone = _shape_without(shape, ctx.target)
        removed += gone
        if new is not None:
            kept.append(new)
    if removed == 0 or ctx.dry_run:
        return removed
    content = shapes_content(kept)
    last = found.version
    version = last.model_copy(
        update={
            "number": last.number + 1,
            "hash": hashlib.sha256(content.encode("utf-8")).hexdigest(),
            "created_at": ctx.now,
            "message": f"forget: removed {removed} member(s)",
            "shapes": len(kept),
        }
    )
    save_shapes(ctx.project, found.name, kept, version)
    return removed


def erase_shapes(ctx: Context) -> int:
    """Rewrite each shape set without the members that leave, as a new shape-set version."""
    total = 0
    for name in shape_set_names(ctx.project):
        path = shapes_file(ctx.project, name)
        try:
            found = load_shapes(ctx.project, name)
        except CaseworkError:
            ctx.unreadable.append(path)
            continue
        removed = _shape_set_without(ctx, found)
        if removed:
            ctx.handled.add(path.resolve())
        total += removed
    return total


def erase_tuning(ctx: Context) -> int:
    """Drop the keys of `judge/tuning.jsonl` that name a removed row (`run/case/trial…`)."""
    path = tuning_path(ctx.project)
    try:
        keys = read_tuning(ctx.project)
    except CaseworkError:
        ctx.unreadable.append(path)
        return 0
    datasets: dict[str, str | None] = {}
    for key in keys:
        run_id = key.partition("/")[0]
        if run_id not in datasets:
            try:
                datasets[run_id] = load_run(ctx.project, run_id).header.dataset
            except CaseworkError:
                datasets[run_id] = None
    kept = [k for k in keys if k.split("/")[1] not in ctx.target.ids(datasets[k.split("/")[0]])]
    if len(kept) != len(keys):
        ctx.handled.add(path.resolve())
        if not ctx.dry_run:
            text = "".join(json.dumps(k, ensure_ascii=False) + "\n" for k in kept)
            atomic_write_bytes(path, text.encode("utf-8"))
    return len(keys) - len(kept)


def erase_copies(ctx: Context) -> int:
    """List the recorded copies (sheets, eval sets) that held removed rows; unname them there.

    The copies themselves are out of reach; the record keeps their paths and loses the ids.
    """
    records = read_copies(ctx.project)
    out = []
    changed = False
    for rec in records:
        ids = ctx.target.ids(rec.dataset)
        held = [i for i in rec.case_ids if i in ids]
        if held:
            ctx.copies.append(rec.model_copy(update={"case_ids": held}))
            rec = rec.model_copy(update={"case_ids": [i for i in rec.case_ids if i not in ids]})
            changed = True
        out.append(rec)
    if changed and not ctx.dry_run:
        write_copies(ctx.project, out)
    ctx.handled.update(Path(c.path).resolve() for c in ctx.copies)
    return len(ctx.copies)

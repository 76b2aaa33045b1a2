"""ADK eval sets in and out of a project: import as a new dataset version, export a version.

Entry points: :func:`import_adk` (`casework import adk`) and :func:`export_adk`
(`casework export adk`). The conversion itself is :mod:`casework.interop.adk._convert`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from casework.atomic import atomic_write_text
from casework.dataset import declared_tools, load_dataset, release, select_cases
from casework.dataset.copies import record_copies
from casework.dataset.lock import dataset_lock
from casework.dataset.versions import CASES_FILE
from casework.errors import CaseworkError, InputError, InputErrors, Problem, UsageError
from casework.interop.adk._convert import ImportOptions, cases_from_adk, eval_set_from_cases
from casework.interop.adk._format import AdkFile, AdkFormat, read_adk_file
from casework.names import check_name
from casework.project import Project
from casework.schema import Case, Split, VersionRecord

__all__ = ["ExportReport", "ImportReport", "export_adk", "import_adk"]


@dataclass(frozen=True)
class ImportReport:
    """What `import-adk` read and released."""

    dataset: str
    files: list[str]
    formats: dict[AdkFormat, int]
    imported: list[str]
    version: VersionRecord | None
    notes: list[str]
    """What the files hold that casework did not import."""
    undeclared_tools: list[str] | None
    """Tools the imported cases name that the agent does not declare (``None``: unknown, the
    declarations could not be read)."""


def import_adk(
    project: Project,
    paths: Sequence[Path],
    dataset: str,
    options: ImportOptions,
    message: str | None = None,
) -> ImportReport:
    """Import the eval cases of ADK files as new cases of ``dataset`` and release a version.

    Every file is read before anything is written; an id already in the dataset is an error.

    Raises:
        UsageError: No file, or an empty slice.
        InputErrors: A file is not an ADK eval file, or an imported id already exists (every
            problem of every file listed; nothing is written).
    """
    if not paths:
        raise UsageError("import-adk: give at least one ADK eval file.")
    if not options.slice.strip():
        raise UsageError("must not be empty.", param="slice")
    check_name(options.slice, "slice")
    problems: list[Problem] = []
    files: list[AdkFile] = []
    for path in paths:
        try:
            files.append(read_adk_file(path, project.relative(path)))
        except InputError as exc:
            problems.extend(exc.problems)
    InputErrors.raise_if_any(problems)
    imported = cases_from_adk(files, options)
    with dataset_lock(project, dataset):
        existing = _existing(project, dataset)
        known = {c.id for c in existing}
        InputErrors.raise_if_any(
            Problem(
                item.path,
                None,
                item.id_field,
                f"case id '{item.case.id}' is already in dataset '{dataset}'; "
                "import beside it under another id prefix",
                item.case.id,
                has_got=True,
            )
            for item in imported
            if item.case.id in known
        )
        new = [item.case for item in imported]
        shown = [f.path for f in files]
        version = release(
            project,
            dataset,
            [*existing, *new],
            message or f"import-adk: {len(new)} case(s) from {', '.join(shown)}",
        )
    return ImportReport(
        dataset=dataset,
        files=shown,
        formats=dict(Counter(f.format for f in files)),
        imported=[c.id for c in new],
        version=version,
        notes=[n for f in files for n in f.notes],
        undeclared_tools=_undeclared(project, new),
    )


def _existing(project: Project, name: str) -> list[Case]:
    if not (project.dataset_dir(name) / CASES_FILE).exists():
        return []
    return list(load_dataset(project, name).cases)


def _undeclared(project: Project, cases: Sequence[Case]) -> list[str] | None:
    try:
        declared = declared_tools(project)
    except CaseworkError:
        return None
    return sorted({n for c in cases for n in c.tool_names()} - set(declared))


@dataclass(frozen=True)
class ExportReport:
    """What `export-adk` wrote and what it left out."""

    ref: str
    out: str
    eval_set_id: str
    exported: list[str]
    frozen: int
    unlabelled: int
    unshaped: list[str]
    left_out: dict[str, int] = field(default_factory=dict)
    """Exported cases holding something ADK cannot express, by what it is."""


def export_adk(
    project: Project,
    ref: str,
    out: Path,
    *,
    slices: Sequence[str] = (),
    splits: Sequence[Split] = (),
) -> ExportReport:
    """Write a dataset version as one ADK EvalSet JSON file (atomically).

    Frozen and unlabelled cases are skipped and counted; so are cases whose conversation does not
    start and end with a user turn.

    Raises:
        UsageError: Unknown dataset.
        CaseworkError: No case left to export (nothing is written then).
        VersionNotFound: Unknown version.
        InputErrors: The dataset files are malformed.
    """
    ds = load_dataset(project, ref)
    cases = select_cases(ds.cases, slices=slices, splits=splits)
    number = f"v{ds.version.number}" if ds.version else "working"
    eval_set_id = re.sub(r"\W", "_", f"{ds.name}_{number}_{ds.hash[:12]}", flags=re.ASCII)
    export = eval_set_from_cases(
        cases,
        eval_set_id=eval_set_id,
        name=ds.ref,
        description=f"casework dataset {ds.ref}, content sha256 {ds.hash}",
    )
    shown = project.relative(out)
    if not export.exported:
        raise CaseworkError(
            f"{ds.ref}: no case to export to {shown} ({len(cases)} selected: "
            f"{export.frozen} frozen, {export.unlabelled} unlabelled, "
            f"{len(export.unshaped)} not starting and ending with a user turn)."
        )
    text = json.dumps(export.eval_set, indent=2, ensure_ascii=False) + "\n"
    atomic_write_text(out, text)
    # The eval set leaves casework's reach: `forget` lists it by path when it held a row.
    written = [c.id for c in cases if json.dumps(c.id, ensure_ascii=False) in text]
    record_copies(project, "ADK eval set", ds.name, [out], written)
    return ExportReport(
        ref=ds.ref,
        out=shown,
        eval_set_id=eval_set_id,
        exported=export.exported,
        frozen=export.frozen,
        unlabelled=export.unlabelled,
        unshaped=export.unshaped,
        left_out=dict(sorted(export.left_out.items())),
    )

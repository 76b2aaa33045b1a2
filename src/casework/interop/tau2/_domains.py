"""τ²-bench domains in: the tasks, a split file, the domain's database and its tools.

Entry points: :func:`import_tau2` (project level: the domain's tasks become the cases of one
slice, released as one version) over :func:`read_tau2_domain` (files to a :class:`Tau2Domain`;
the conversion itself is the pure :func:`cases_from_tau2`). A domain is named (`airline`: the
installed ``tau2`` package's) or given as its data folder; the tools are τ²'s own declarations
when the code beside the data is the installed package's, else ``tools.json`` or ``tools.py``
read statically (never imported), or any file given as ``tools``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.atomic import atomic_write_bytes
from casework.dataset.lock import dataset_lock
from casework.dataset.store import load_dataset
from casework.dataset.store import release as release_cases
from casework.dataset.versions import CASES_FILE
from casework.decoding import load_json, load_toml
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.interop.tau2._layout import find_code, installed_domain
from casework.interop.tau2._tasks import Tau2Domain, Tau2Options, cases_from_tau2
from casework.interop.tau2._tools import (
    Tau2Tool,
    tools_from_json,
    tools_from_package,
    tools_from_python_file,
)
from casework.names import check_name, name_problem
from casework.project import Project
from casework.schema._base import Split
from casework.schema._records import Case
from casework.schema._version import VersionRecord

#: τ²-bench split names and the casework split each becomes (``base``, ``full``, ``small``
#: list tasks again: ignored).
TAU2_SPLITS: dict[str, Split] = {"train": "dev", "dev": "dev", "test": "holdout"}


def _splits(data: Any, shown: str) -> dict[str, Split]:
    if not isinstance(data, dict):
        raise InputError(shown, None, None, "a split file is an object of split: [task id]", data)
    out: dict[str, Split] = {}
    problems: list[Problem] = []
    for name, ids in data.items():
        if name == "base" or name not in TAU2_SPLITS:
            continue
        if not isinstance(ids, list):
            problems.append(
                Problem(shown, None, f"/{name}", "must be a list of task ids", ids, True)
            )
            continue
        for i, tid in enumerate(ids):
            key = str(tid)
            split = TAU2_SPLITS[name]
            if key in out and out[key] != split:
                problems.append(
                    Problem(shown, None, f"/{name}/{i}", "task is in two splits", tid, True)
                )
            out[key] = split
    InputErrors.raise_if_any(problems)
    return out


def _read_tools(path: Path, shown: str) -> dict[str, Tau2Tool]:
    """Tools of a ``tools.json`` or a ``tools.py`` (read statically)."""
    if not path.is_file():
        raise InputError(shown, None, None, "file not found")
    if path.suffix == ".py":
        return tools_from_python_file(path, shown)
    return tools_from_json(load_json(path.read_bytes(), shown), shown)


def _domain_tools(
    folder: Path, shown: str, tools_file: Path | None, tools_shown: str | None
) -> tuple[dict[str, Tau2Tool], str | None, dict[str, Tau2Tool], str | None]:
    """The agent's tools, where they came from, the user's tools and the evaluator's domain."""
    code = find_code(folder)
    user: dict[str, Tau2Tool] = {}
    if code.module is not None and code.user_tools is not None:
        user = tools_from_package(f"{code.module}.user_tools", str(code.user_tools))
    if tools_file is not None:
        where = tools_shown or str(tools_file)
        evaluator = folder.resolve().name if code.module is not None else None
        return _read_tools(tools_file, where), where, user, evaluator
    if (folder / "tools.json").is_file():
        where = f"{shown}/tools.json"
        tools = tools_from_json(load_json((folder / "tools.json").read_bytes(), where), where)
        return tools, "tools.json", user, None
    if code.module is not None:
        module = f"{code.module}.tools"
        return tools_from_package(module, str(code.tools)), module, user, folder.resolve().name
    if code.tools is not None:
        inside = code.tools.parent == folder.resolve()
        where = f"{shown}/tools.py" if inside else str(code.tools)
        return _read_tools(code.tools, where), "tools.py", user, None
    return {}, None, user, None


def _database(folder: Path, shown: str) -> tuple[Any, bytes] | None:
    """The database (``db.json``, or telecom's ``db.toml``) and its bytes as JSON."""
    if (folder / "db.json").is_file():
        data = (folder / "db.json").read_bytes()
        return load_json(data, f"{shown}/db.json"), data
    if (folder / "db.toml").is_file():
        where = f"{shown}/db.toml"
        # load_toml bounds what tomllib would let through: nesting, integers of 4,300+ digits.
        db = load_toml((folder / "db.toml").read_bytes(), where)
        try:
            text = json.dumps(db, indent=1, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InputError(where, None, None, f"holds a value JSON cannot: {exc}") from None
        return db, (text + "\n").encode("utf-8")
    return None


def read_tau2_domain(
    folder: Path,
    shown: str,
    split_file: Path | None = None,
    split_shown: str | None = None,
    *,
    tasks_file: str = "tasks.json",
    tools_file: Path | None = None,
    tools_shown: str | None = None,
) -> Tau2Domain:
    """Read a τ²-bench domain's data folder: tasks, ``split_tasks.json``, database, tools.

    Args:
        folder: The domain's data folder.
        shown: How to name it in messages.
        split_file: A split file (default: ``split_tasks.json`` in ``folder``, when there).
        split_shown: How to name ``split_file``.
        tasks_file: The tasks file's name in ``folder`` (telecom: ``tasks_small.json``…).
        tools_file: A ``tools.json`` or ``tools.py`` to read instead of the domain's own.
        tools_shown: How to name ``tools_file``.

    Raises:
        InputError: A missing tasks file, or a file that is not what it should be.
    """
    tasks_path = folder / tasks_file
    tasks_shown = f"{shown}/{tasks_file}"
    if not folder.is_dir():
        raise InputError(shown, None, None, "not a folder (give the τ²-bench domain folder)")
    if not tasks_path.is_file():
        raise InputError(tasks_shown, None, None, "file not found")
    tasks = load_json(tasks_path.read_bytes(), tasks_shown)
    if not isinstance(tasks, list):
        raise InputError(tasks_shown, None, None, "tasks must be a JSON list", tasks)
    if split_file is None and (folder / "split_tasks.json").is_file():
        split_file, split_shown = folder / "split_tasks.json", f"{shown}/split_tasks.json"
    splits: dict[str, Split] = {}
    if split_file is not None:
        where = split_shown or str(split_file)
        if not split_file.is_file():
            raise InputError(where, None, None, "file not found")
        splits = _splits(load_json(split_file.read_bytes(), where), where)
    tools, source, user, evaluator = _domain_tools(folder, shown, tools_file, tools_shown)
    found = _database(folder, shown)
    if found is not None and not isinstance(found[0], dict):
        raise InputError(f"{shown}/db.json", None, None, "the database must be a JSON object")
    return Tau2Domain(
        folder.resolve().name, tasks, tasks_shown, splits, found, tools, source, user, evaluator
    )


@dataclass(frozen=True)
class Tau2ImportReport:
    """What `casework import tau2` did.

    Attributes:
        dataset: The dataset.
        slice: The slice the domain's cases make up (replaced as a whole).
        imported: Ids of the cases.
        renamed: Original task id to case id, for the ids the name rule refuses.
        state: The database copied into the project (``None``: the domain has none).
        tools: The tools file written (``None``: the domain declares no tools).
        tools_source: Where the tools were read (``tau2.domains.airline.tools``, a file).
        user_tools: The user's own tools file written (telecom's device), or ``None``.
        evaluator: The τ² domain whose evaluator scores the cases (``None``: unknown to τ²).
        lost: Per task (original id), the parts of τ²'s reward basis nothing can score: those
            cases are not gradable.
        not_carried: What the tasks held that casework's own checks leave out, per kind.
        version: The release (``None``: content unchanged).
    """

    dataset: str
    slice: str
    imported: list[str]
    renamed: dict[str, str]
    state: str | None
    tools: str | None
    tools_source: str | None
    user_tools: str | None
    evaluator: str | None
    lost: dict[str, list[str]]
    not_carried: dict[str, int]
    version: VersionRecord | None


def _copy_in(project: Project, data: bytes, rel: str) -> dict[str, str]:
    target = project.path(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or target.read_bytes() != data:
        atomic_write_bytes(target, data)
    return {"path": rel, "sha256": hashlib.sha256(data).hexdigest()}


def _catalogue(tools: dict[str, Tau2Tool]) -> bytes:
    decls = [t.declaration for t in tools.values()]
    return (json.dumps(decls, indent=2, ensure_ascii=False) + "\n").encode()


def _source_folder(folder: Path | None, domain: str | None) -> Path:
    if (folder is None) == (domain is None):
        raise UsageError(
            "give either a τ²-bench domain (`domain`) or its data folder, one of the two.",
            param="domain",
            mentions=("folder",),
        )
    return folder if folder is not None else installed_domain(str(domain))


def import_tau2(
    project: Project,
    folder: Path | None,
    dataset: str,
    options: Tau2Options,
    split_file: Path | None = None,
    message: str | None = None,
    *,
    domain: str | None = None,
    tasks_file: str = "tasks.json",
    tools_file: Path | None = None,
) -> Tau2ImportReport:
    """Import a τ²-bench domain's tasks as the slice of ``dataset`` and release a version.

    The database is copied to ``states/<dataset>/<slice>.db.json`` (telecom's TOML as JSON),
    the tools to ``catalogues/<dataset>/<slice>.tools.json`` and the user's own tools to
    ``catalogues/<dataset>/<slice>.user-tools.json`` (each case names them, pinned by sha256).
    The slice's cases are replaced as a whole, so importing a later revision of the task file
    releases a version whose diff is exactly the changed, added and removed tasks.

    Args:
        project: The project.
        folder: The domain's data folder (or give ``domain``).
        dataset: The dataset the cases go to.
        options: Slice, split and id prefix.
        split_file: A split file other than the domain's ``split_tasks.json``.
        message: Release message.
        domain: A domain of the installed τ²-bench (``airline``, ``retail``, ``telecom``).
        tasks_file: The tasks file's name in the folder.
        tools_file: A ``tools.json`` or ``tools.py`` for any other layout.

    Raises:
        UsageError: A bad dataset, slice, id prefix or domain.
        InputErrors: Bad files or tasks (all of them, located); nothing is written.
    """
    check_name(dataset, "dataset")
    if Path(tasks_file).name != tasks_file or tasks_file in ("", ".", ".."):
        raise UsageError(f"a file name in the domain's folder. Got {tasks_file!r}.", param="tasks")
    if options.id_prefix and name_problem(options.id_prefix + "0") is not None:
        why = name_problem(options.id_prefix + "0")
        raise UsageError(f"ids would not be names: a name {why}.", param="id_prefix")
    source = _source_folder(folder, domain)
    shown = project.relative(source)
    read = read_tau2_domain(
        source,
        shown,
        split_file,
        project.relative(split_file) if split_file else None,
        tasks_file=tasks_file,
        tools_file=tools_file,
        tools_shown=project.relative(tools_file) if tools_file else None,
    )
    slice_ = options.slice or read.name
    if name_problem(slice_) is not None:
        raise UsageError(f"slice '{slice_}': {name_problem(slice_)} (give --slice)", param="slice")
    options = Tau2Options(slice_, options.split, options.id_prefix)
    db, db_bytes = read.db if read.db is not None else (None, None)
    probe = {"path": "states/x.json", "sha256": "0" * 64}
    cases, notes = cases_from_tau2(
        read, options, db, probe if db is not None else None, probe if read.user_tools else None
    )
    with dataset_lock(project, dataset):
        kept = _other_slices(project, dataset, slice_, cases, read.tasks_file)
        base = f"{dataset}/{slice_}"
        state_ref = _copy_in(project, db_bytes, f"states/{base}.db.json") if db_bytes else None
        tools_rel = f"catalogues/{base}.tools.json" if read.tools else None
        pin = _copy_in(project, _catalogue(read.tools), tools_rel) if tools_rel else None
        user_rel = f"catalogues/{base}.user-tools.json" if read.user_tools else None
        user = _copy_in(project, _catalogue(read.user_tools), user_rel) if user_rel else None
        cases = [_with(c, state_ref, pin, user) for c in cases]
        version = release_cases(
            project,
            dataset,
            [*kept, *cases],
            message or f"import tau2: {len(cases)} task(s) of {shown}",
        )
    prefix = options.id_prefix if options.id_prefix is not None else f"{read.name}-"
    renamed = {
        str(c.provenance.original_id): c.id
        for c in cases
        if c.id != f"{prefix}{c.provenance.original_id}"
    }
    return Tau2ImportReport(
        dataset,
        slice_,
        [c.id for c in cases],
        renamed,
        state_ref["path"] if state_ref else None,
        tools_rel,
        read.tools_source,
        user_rel,
        read.evaluator,
        notes.lost,
        dict(sorted(notes.counts.items())),
        version,
    )


def _other_slices(
    project: Project, dataset: str, slice_: str, cases: Sequence[Case], shown: str
) -> list[Case]:
    """The dataset's cases outside ``slice_`` (kept); an id shared with them is an error."""
    existing = (
        list(load_dataset(project, dataset).cases)
        if (project.dataset_dir(dataset) / CASES_FILE).exists()
        else []
    )
    kept = [c for c in existing if c.slice != slice_]
    clash = {c.id for c in kept} & {c.id for c in cases}
    InputErrors.raise_if_any(
        Problem(shown, None, "id", "case id is in another slice of the dataset", i, True)
        for i in sorted(clash)
    )
    return kept


def _with(
    case: Case,
    state_ref: dict[str, str] | None,
    tools: dict[str, str] | None,
    user_tools: dict[str, str] | None,
) -> Case:
    """``case`` naming the files as written (the conversion named placeholders)."""
    data = case.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    situation = data["situation"]
    if state_ref is not None:
        situation["state_ref"] = state_ref
    if tools is not None:
        situation["tools_file"] = tools["path"]
        situation["tools_sha256"] = tools["sha256"]
    scoring = data["oracle"].get("tau2")
    if scoring is not None and user_tools is not None:
        scoring["user_tools"] = user_tools
    return Case.model_validate(data)

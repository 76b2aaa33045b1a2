"""Deletion requests and retention: `casework dataset forget` and `casework dataset expire`.

Entry points: :func:`forget` (rows naming a customer's email, account or session) and
:func:`expire` (rows past ``retain_until``). Each releases a new dataset version whose changelog
counts the removals without identifiers, drops the removed rows from the local version cache, and
writes the expressions :func:`history_recipe` hands to `git filter-repo` to purge git history.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from casework.atomic import atomic_write_text
from casework.dataset import DatasetScan, StageProgress, read_versions, release, scan_in_jobs
from casework.dataset.jsonl import canonical_line, fast_canonical
from casework.dataset.lock import dataset_lock
from casework.dataset.stream import one_stage
from casework.dataset.versions import CASES_FILE, VERSIONS_FILE, files_hash, purge_cached
from casework.errors import UsageError
from casework.privacy.keys import PseudonymKey, check_fingerprints, load_key
from casework.privacy.pseudonyms import normalise, pseudonym
from casework.project import Project
from casework.schema import Case, VersionRecord

__all__ = ["Removal", "expire", "forget", "history_recipe", "is_expired", "subject_pseudonyms"]


@dataclass(frozen=True)
class Removal:
    """What one dataset lost.

    Attributes:
        dataset: Dataset name.
        removed: Rows removed (deletion request and expiry together).
        expired: Of those, rows past their retention date.
        kept: Rows left.
        version: The new release (``None`` on a dry run or when nothing was removed).
        purge_file: Expressions for `git filter-repo --replace-text` (``None`` if nothing removed
            or on a dry run).
        cache_purged: Cached old versions (under `.casework/versions`) deleted because they held
            removed rows.
        files: The dataset's files, relative to the project, for the history recipe.
        removed_ids: Ids of the removed rows (also on a dry run), for removing their other
            copies (workbench, run logs, reports); never printed.
        needles: Strings only those rows' copies hold: their ids, the pseudonyms of their
            subjects, session and trace (and those a deletion request named); never printed.
    """

    dataset: str
    removed: int
    expired: int
    kept: int
    version: VersionRecord | None
    purge_file: Path | None
    cache_purged: int
    files: tuple[str, ...]
    removed_ids: tuple[str, ...] = ()
    needles: tuple[str, ...] = ()


def is_expired(case: Case, today: date) -> bool:
    """Whether ``case`` is past its retention date: ``retain_until`` is before ``today`` (UTC).

    On the ``retain_until`` date itself the row may still be released; from the next day on,
    the first version released must not hold it.
    """
    until = case.provenance.retain_until
    return until is not None and until < today


def subject_pseudonyms(
    project: Project,
    *,
    emails: Sequence[str] = (),
    accounts: Sequence[str] = (),
    sessions: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> set[str]:
    """The pseudonyms a deletion request names (computed with the project's key).

    An account id is looked up as both kinds that hold one: `account` and `customer`.

    Raises:
        ConfigError: No usable pseudonym key.
    """
    key = load_key(project, environ if environ is not None else os.environ)
    return _request_pseudonyms(project, key, emails, accounts, sessions)


def _request_pseudonyms(
    project: Project,
    key: PseudonymKey,
    emails: Sequence[str],
    accounts: Sequence[str],
    sessions: Sequence[str],
) -> set[str]:
    regions = project.config.privacy.phone_regions
    out = set()
    requests = (("email", emails), ("account", accounts), ("customer", accounts))
    for kind, values in (*requests, ("session", sessions)):
        for value in values:
            if value.strip():
                norm = normalise(kind, value, phone_regions=regions)
                out.add(pseudonym(key.secret, kind, norm))
    return out


def _names(case: Case, pseudonyms: AbstractSet[str]) -> bool:
    prov = case.provenance
    if prov.source_session in pseudonyms or not pseudonyms.isdisjoint(prov.subjects):
        return True
    # The row as the dataset file holds it (strictly read: no NaN to look for first).
    line = fast_canonical(case) or canonical_line(case).encode("utf-8")
    return any(p.encode("utf-8") in line for p in pseudonyms)


@dataclass
class _Selection:
    """Which rows of one dataset leave: fed one case at a time, keeping only what leaves.

    A scan's job (:class:`casework.dataset.CaseJob`): picklable, so a large tree is read on
    every core, one selection per chunk, merged afterwards.
    """

    today: date
    wanted: frozenset[str]
    """Pseudonyms a deletion request names (empty: expiry only)."""
    chosen: list[str] = field(default_factory=list)
    """Ids of the rows that leave (expired or naming the customer), in file order."""
    expired: int = 0
    """How many of them are past their retention date."""
    needles: set[str] = field(default_factory=set)
    """Ids and pseudonyms of what the leaving rows name (see :func:`_needles`)."""
    keys: Counter[str] = field(default_factory=Counter)
    """Pseudonym key fingerprints of the mined rows, counted."""
    cases: int = 0

    def add(self, case: Case) -> None:
        """Look at one row."""
        self.cases += 1
        prov = case.provenance
        if prov.scrub is not None:
            self.keys[prov.scrub.key_fingerprint] += 1
        expired = is_expired(case, self.today)
        if expired or (self.wanted and _names(case, self.wanted)):
            self.chosen.append(case.id)
            self.expired += expired
            self.needles |= _needles([case], frozenset())

    def merge(self, other: _Selection) -> None:
        """Add what ``other`` (a later chunk of the same file) found."""
        self.chosen += other.chosen
        self.expired += other.expired
        self.needles |= other.needles
        self.keys.update(other.keys)
        self.cases += other.cases


def _needles(removed: Sequence[Case], extra: frozenset[str]) -> set[str]:
    """What marks a copy of one of ``removed``: ids and pseudonyms of what names the customer."""
    out = set(extra)
    for case in removed:
        prov = case.provenance
        out.add(case.id)
        out.update(prov.subjects)
        out.update(p for p in (prov.source_session, prov.source_trace) if p)
    return out


def _datasets(project: Project, names: Sequence[str]) -> list[str]:
    if names:
        return list(dict.fromkeys(names))
    found = project.dataset_names()
    if not found:
        raise UsageError(f"{project.relative(project.datasets_dir)}: no datasets in this project.")
    return found


def _purge_cache(project: Project, name: str, removed_ids: set[str]) -> int:
    """Delete cached old versions of ``name`` that hold any removed row."""
    folder = project.dataset_dir(name)
    versions = read_versions(folder, project.relative(folder / VERSIONS_FILE))
    return purge_cached(project.state_dir, versions, removed_ids)


def _purge_expressions(removed_ids: Sequence[str]) -> str:
    """`git filter-repo --replace-text` lines deleting each removed row everywhere it is committed.

    Per row: its line of `cases.jsonl` (canonical JSON, `": "` separators), every line holding
    its `case_id` with or without spaces (raw labels, run-log trials in compact JSON), then its id
    in the run-log headers' `case_ids` list and `skipped` object, keeping the JSON valid.
    """
    lines = []
    for case_id in sorted(removed_ids):
        q = re.escape(f'"{case_id}"')
        lines += [
            f'regex:(?m)^\\{{"schema_version":\\s*1,\\s*"id":\\s*{q},[^\\n]*\\n==>',
            f'regex:(?m)^[^\\n]*"case_id":\\s*{q}[^\\n]*\\n==>',
            # the id as an element of a list, or a key of an object (run-log headers)
            f"regex:\\[\\s*{q}\\s*\\]==>[]",
            f"regex:(?<=\\[)\\s*{q}\\s*,\\s*==>",
            f"regex:,\\s*{q}(?=\\s*[,\\]])==>",
            f'regex:\\{{\\s*{q}:\\s*"[^"\\n]*"\\s*\\}}==>{{}}',
            f'regex:(?<=\\{{)\\s*{q}:\\s*"[^"\\n]*"\\s*,\\s*==>',
            f'regex:,\\s*{q}:\\s*"[^"\\n]*"(?=\\s*[,}}])==>',
        ]
    return "\n".join(lines) + "\n"


def _select(
    project: Project,
    name: str,
    today: date,
    wanted: frozenset[str],
    precheck: Callable[[str, Iterable[str]], None] | None,
    on_progress: StageProgress | None = None,
) -> tuple[DatasetScan, _Selection]:
    """Read the working tree of ``name`` row by row (on every core when large), once a content.

    A command that plans (a dry run) and then removes reads each tree once: the selection is
    kept by the tree's version hash, which also tells that the tree did not change between.
    ``on_progress`` is told the stage ``reading NAME`` as the cases file is read.
    """
    memo = (
        project.dataset_dir(name).resolve(),
        files_hash(project.dataset_dir(name)),
        today,
        wanted,
    )
    found = _SELECTED.get(memo)
    if found is None:
        scan, parts = scan_in_jobs(
            project,
            name,
            lambda: _Selection(today, wanted),
            keep_labels=False,
            on_progress=one_stage(on_progress, f"reading {name}"),
        )
        selection = parts[0]
        for part in parts[1:]:
            selection.merge(part)
        found = (scan, selection)
        _SELECTED[(memo[0], scan.hash, today, wanted)] = found  # what was read
        while len(_SELECTED) > _SELECTED_KEPT:
            del _SELECTED[next(iter(_SELECTED))]
    if precheck is not None:
        precheck(name, found[1].keys.elements())
    return found


#: Selections by dataset folder, version hash of its content, date and pseudonyms (the last few).
_SELECTED: dict[tuple[Path, str, date, frozenset[str]], tuple[DatasetScan, _Selection]] = {}
_SELECTED_KEPT = 8


def _remove(
    project: Project,
    names: Sequence[str],
    wanted: frozenset[str],
    *,
    now: datetime,
    today: date | None,
    message: str,
    reason: str,
    dry_run: bool,
    precheck: Callable[[str, Iterable[str]], None] | None = None,
    on_progress: StageProgress | None = None,
) -> list[Removal]:
    """Release every dataset without the rows that leave (``wanted`` names, or past retention).

    Each dataset is read as a stream (its rows are never all held); a dataset whose rows leave is
    read again under its lock only if it changed meanwhile, and released through
    :func:`casework.dataset.release` with ``without`` (rows the latest release holds are not parsed
    again).
    """
    today = today or now.date()
    out = []
    all_removed: list[str] = []
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    purge_file = project.state_dir / "purge" / f"{reason}-{stamp}.txt"
    # Every dataset passes the precheck before any changes.
    selected = {
        n: _select(project, n, today, wanted, precheck, on_progress)
        for n in _datasets(project, names)
    }
    for name, (scan, selection) in selected.items():
        folder = project.dataset_dir(name)
        files = tuple(project.relative(folder / f) for f in (CASES_FILE, "labels.jsonl"))
        version, purged = None, 0
        if selection.chosen and not dry_run:
            with dataset_lock(project, name):
                if files_hash(folder) != scan.hash:  # changed meanwhile: again, under the lock
                    scan, selection = _select(project, name, today, wanted, precheck, on_progress)
                chosen = set(selection.chosen)
                if chosen:
                    changes = []
                    if len(chosen) > selection.expired:
                        changes.append(
                            f"{reason}: removed {len(chosen) - selection.expired} row(s)"
                        )
                    if selection.expired:
                        changes.append(
                            f"expire: removed {selection.expired} row(s) past their retention date"
                        )
                    version = release(
                        project, name, None, message, without=chosen, changes=changes, now=now
                    )
                    purged = _purge_cache(project, name, chosen)
                    all_removed.extend(chosen)
        removed = len(selection.chosen)
        out.append(
            Removal(
                name,
                removed,
                selection.expired,
                selection.cases - removed,
                version,
                purge_file if removed and not dry_run else None,
                purged,
                files,
                tuple(sorted(selection.chosen)),
                tuple(sorted(selection.needles | wanted)),
            )
        )
    if all_removed:
        atomic_write_text(purge_file, _purge_expressions(sorted(all_removed)))
    return out


def forget(
    project: Project,
    *,
    emails: Sequence[str] = (),
    accounts: Sequence[str] = (),
    sessions: Sequence[str] = (),
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    dry_run: bool = False,
    environ: Mapping[str, str] | None = None,
    on_progress: StageProgress | None = None,
) -> list[Removal]:
    """Remove every row naming a customer, in every dataset (or those named).

    A row goes when its subjects, its source session or any of its text holds a pseudonym of
    one of the given emails, accounts or sessions. Rows past their retention date leave in the
    same release. The changelog counts rows; it never names the customer. ``on_progress`` is
    told each dataset's reading (stage ``reading NAME``).

    Raises:
        UsageError: No identifier given, or a named dataset does not exist.
        ConfigError: No usable pseudonym key (pseudonyms cannot be computed without it), or
            a dataset holds rows mined under another key (checked before anything changes).
    """
    if not any(v.strip() for v in (*emails, *accounts, *sessions)):
        raise UsageError(
            "forget: name at least one `email`, `account` or `session`.",
            mentions=("email", "account", "session"),
        )
    key = load_key(project, environ if environ is not None else os.environ)
    wanted = _request_pseudonyms(project, key, emails, accounts, sessions)

    def same_key(name: str, fingerprints: Iterable[str]) -> None:
        check_fingerprints(
            key,
            fingerprints,
            f"dataset '{name}'",
            "the pseudonyms of the identifiers cannot match those rows, so nothing of that "
            "customer would be removed",
        )

    return _remove(
        project,
        datasets,
        frozenset(wanted),
        now=now or datetime.now(UTC),
        today=None,
        message="forget: deletion request",
        reason="forget",
        dry_run=dry_run,
        precheck=same_key,
        on_progress=on_progress,
    )


def expire(
    project: Project,
    *,
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    today: date | None = None,
    dry_run: bool = False,
    on_progress: StageProgress | None = None,
) -> list[Removal]:
    """Remove rows past their ``retain_until`` date (see :func:`is_expired`) from every dataset.

    ``today`` (default: the UTC date of ``now``) decides what has expired; a later date shows
    what a future run will remove (with ``dry_run``). ``on_progress``: as for :func:`forget`.

    Raises:
        UsageError: A named dataset does not exist.
    """
    return _remove(
        project,
        datasets,
        frozenset(),
        now=now or datetime.now(UTC),
        today=today,
        message="expire: retention",
        reason="expire",
        dry_run=dry_run,
        on_progress=on_progress,
    )


def history_recipe(removals: Sequence[Removal]) -> str:
    """How to purge removed rows from git history (which still holds every committed version).

    Returns an empty string when nothing was removed.
    """
    done = [r for r in removals if r.removed and r.purge_file is not None]
    if not done:
        return ""
    files = ", ".join(r.files[0] for r in done)
    purge_files = sorted({str(r.purge_file) for r in done})
    lines = [
        f"Git history still holds the removed rows: every earlier commit of {files} keeps them.",
        "To purge them (a deletion request usually requires it), in a fresh clone of the repository:",
        "  pip install git-filter-repo",
        *(f"  git filter-repo --replace-text {f} --force" for f in purge_files),
        "  git push --force --all && git push --force --tags",
        "Then have everyone re-clone, and delete forks, CI caches and build artefacts that hold "
        "old versions.",
        "Releases older than this one no longer match the rewritten files: they cannot be "
        "materialised any more (that is the point).",
    ]
    return "\n".join(lines)

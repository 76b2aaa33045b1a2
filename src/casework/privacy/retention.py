"""Deletion requests and retention: `casework forget` and `casework expire`.

Entry points: :func:`forget` (rows naming a customer's email, account or session) and
:func:`expire` (rows past ``retain_until``). Each releases a new dataset version whose changelog
counts the removals without identifiers, drops the removed rows from the local version cache, and
writes the expressions :func:`history_recipe` hands to `git filter-repo` to purge git history.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from casework.atomic import atomic_write_text
from casework.dataset import (
    CASES_FILE,
    VERSIONS_FILE,
    Dataset,
    canonical_line,
    dataset_lock,
    load_dataset,
    purge_cached,
    read_versions,
    release,
)
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


def _names(case: Case, pseudonyms: set[str]) -> bool:
    prov = case.provenance
    if prov.source_session in pseudonyms or pseudonyms.intersection(prov.subjects):
        return True
    line = canonical_line(case)
    return any(p in line for p in pseudonyms)


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


def _remove(
    project: Project,
    names: Sequence[str],
    select: Callable[[Case], bool],
    *,
    now: datetime,
    today: date | None,
    message: str,
    reason: str,
    dry_run: bool,
    precheck: Callable[[Dataset], None] | None = None,
    extra: frozenset[str] = frozenset(),
) -> list[Removal]:
    today = today or now.date()
    out = []
    all_removed: list[str] = []
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    purge_file = project.state_dir / "purge" / f"{reason}-{stamp}.txt"
    loaded = [load_dataset(project, name) for name in _datasets(project, names)]
    for ds in loaded:  # every dataset passes before any changes
        if precheck is not None:
            precheck(ds)
    for name in [ds.name for ds in loaded]:
        with dataset_lock(project, name):
            ds = load_dataset(project, name)  # again, under the lock
            if precheck is not None:
                precheck(ds)
            expired = {c.id for c in ds.cases if is_expired(c, today)}
            chosen = {c.id for c in ds.cases if select(c)} | expired
            kept = [c for c in ds.cases if c.id not in chosen]
            folder = project.dataset_dir(name)
            files = tuple(project.relative(folder / f) for f in (CASES_FILE, "labels.jsonl"))
            version, purged = None, 0
            if chosen and not dry_run:
                changes = []
                if chosen - expired:
                    changes.append(f"{reason}: removed {len(chosen - expired)} row(s)")
                if expired:
                    changes.append(
                        f"expire: removed {len(expired)} row(s) past their retention date"
                    )
                version = release(
                    project,
                    name,
                    kept,
                    message,
                    changes=changes,
                    labels=[rec for rec in ds.labels if rec.case_id not in chosen],
                    now=now,
                )
                purged = _purge_cache(project, name, chosen)
                all_removed.extend(chosen)
            out.append(
                Removal(
                    name,
                    len(chosen),
                    len(expired),
                    len(kept),
                    version,
                    purge_file if chosen and not dry_run else None,
                    purged,
                    files,
                    tuple(sorted(chosen)),
                    tuple(sorted(_needles([c for c in ds.cases if c.id in chosen], extra))),
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
) -> list[Removal]:
    """Remove every row naming a customer, in every dataset (or those named).

    A row goes when its subjects, its source session or any of its text holds a pseudonym of
    one of the given emails, accounts or sessions. Rows past their retention date leave in the
    same release. The changelog counts rows; it never names the customer.

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

    def same_key(ds: Dataset) -> None:
        check_fingerprints(
            key,
            (c.provenance.scrub.key_fingerprint for c in ds.cases if c.provenance.scrub),
            f"dataset '{ds.name}'",
            "the pseudonyms of the identifiers cannot match those rows, so nothing of that "
            "customer would be removed",
        )

    return _remove(
        project,
        datasets,
        lambda c: _names(c, wanted),
        now=now or datetime.now(UTC),
        today=None,
        message="forget: deletion request",
        reason="forget",
        dry_run=dry_run,
        precheck=same_key,
        extra=frozenset(wanted),
    )


def expire(
    project: Project,
    *,
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    today: date | None = None,
    dry_run: bool = False,
) -> list[Removal]:
    """Remove rows past their ``retain_until`` date (see :func:`is_expired`) from every dataset.

    ``today`` (default: the UTC date of ``now``) decides what has expired; a later date shows
    what a future run will remove (with ``dry_run``).

    Raises:
        UsageError: A named dataset does not exist.
    """
    return _remove(
        project,
        datasets,
        lambda c: False,
        now=now or datetime.now(UTC),
        today=today,
        message="expire: retention",
        reason="expire",
        dry_run=dry_run,
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

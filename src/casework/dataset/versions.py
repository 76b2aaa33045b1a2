"""Dataset versions: content hashes, the append-only release log, and recovering old content.

A version is the sha256 of the canonical content: ``cases.jsonl`` then ``labels.jsonl``, each
preceded by its file name and a NUL byte. Old content is recovered from, in order, the working
tree, the local cache ``.casework/versions/`` (written at release: each distinct line once, see
:mod:`casework.dataset._objects`; full copies per version from older caches) and git history.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import xxhash

from casework.dataset._objects import read_stored, remove_versions, stored_case_ids
from casework.dataset.jsonl import read_records
from casework.errors import InputErrors, Problem, UsageError, VersionNotFound
from casework.schema import VersionRecord

__all__ = [
    "CASES_FILE",
    "LABELS_FILE",
    "VERSIONS_FILE",
    "Content",
    "cached_files",
    "content_hash",
    "files_hash",
    "files_hashes",
    "materialise",
    "parse_ref",
    "pieces_hash",
    "purge_cached",
    "read_chunks",
    "read_versions",
    "resolve_version",
]

CASES_FILE = "cases.jsonl"
LABELS_FILE = "labels.jsonl"
VERSIONS_FILE = "versions.jsonl"

_HEX = re.compile(r"^[0-9a-f]{4,64}$")


@dataclass(frozen=True)
class Content:
    """Raw canonical bytes of one dataset version."""

    cases: bytes
    labels: bytes

    @classmethod
    def known(cls, cases: bytes, labels: bytes, digest: str) -> Content:
        """Content whose version hash the caller has already computed (from the same bytes)."""
        content = cls(cases, labels)
        content.__dict__["hash"] = digest
        return content

    @cached_property
    def hash(self) -> str:
        """The version hash of this content (computed once)."""
        return content_hash(self.cases, self.labels)


def parse_ref(ref: str) -> tuple[str, str | None]:
    """Split ``name@version`` into its parts (version ``None`` when absent).

    ``name@working`` names the working tree explicitly, like a bare ``name``.
    """
    name, sep, version = ref.partition("@")
    if not name or (sep and not version):
        raise UsageError(f"'{ref}': expected DATASET or DATASET@VERSION.")
    return name, (version if sep else None)


def content_hash(cases: bytes, labels: bytes) -> str:
    """sha256 over the file name ``cases.jsonl``, a NUL, its bytes, then the same for labels."""
    return pieces_hash((cases,), labels)


def pieces_hash(
    cases: Iterable[bytes | memoryview], labels: bytes | Iterable[bytes | memoryview]
) -> str:
    """:func:`content_hash` of cases (and labels) given piece by piece (never joined)."""
    digest = hashlib.sha256()
    digest.update(CASES_FILE.encode() + b"\0")
    for piece in cases:
        digest.update(piece)
    digest.update(LABELS_FILE.encode() + b"\0")
    for label_piece in (labels,) if isinstance(labels, bytes) else labels:
        digest.update(label_piece)
    return digest.hexdigest()


def files_hash(dataset_dir: Path) -> str:
    """:func:`content_hash` of a dataset's files as they are, read in chunks (a missing file: empty)."""
    return files_hashes(dataset_dir)[0]


def files_hashes(dataset_dir: Path) -> tuple[str, bytes, bytes]:
    """:func:`files_hash`, and the XXH3-128 of each file's bytes as read in the same pass.

    The second pair tells, cheaply, whether bytes read later are the ones this hash covers.
    """
    digest = hashlib.sha256()
    each = []
    for name in (CASES_FILE, LABELS_FILE):
        digest.update(name.encode() + b"\0")
        seen = xxhash.xxh3_128()
        for chunk in read_chunks(dataset_dir / name):
            digest.update(chunk)
            seen.update(chunk)
        each.append(seen.digest())
    return digest.hexdigest(), each[0], each[1]


def read_chunks(path: Path, size: int = 1 << 24) -> Iterator[bytes]:
    """A file's bytes in chunks (none when it does not exist)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return
    with handle:
        while chunk := handle.read(size):
            yield chunk


def read_versions(dataset_dir: Path, shown: str) -> list[VersionRecord]:
    """The release log of a dataset, oldest first (empty when never released).

    Raises:
        InputErrors: A bad line, or a broken chain: releases must be numbered 1, 2, … in file
            order, each naming the one before it as its parent (the first naming none).
    """
    versions = read_records(
        dataset_dir / VERSIONS_FILE,
        VersionRecord,
        shown=shown,
        key=lambda v: str(v.number),
        key_field="number",
        missing_ok=True,
    ).records
    InputErrors.raise_if_any(_chain_problems(versions, shown))
    return versions


def _chain_problems(versions: list[VersionRecord], shown: str) -> list[Problem]:
    problems = []
    previous: VersionRecord | None = None
    for line, record in enumerate(versions, start=1):
        want = previous.number + 1 if previous else 1
        if record.number != want:
            problems.append(
                Problem(
                    shown,
                    line,
                    "number",
                    f"release {want} expected here (releases are numbered in file order; was the "
                    "file reordered or edited? restore it with `git checkout`)",
                    record.number,
                    has_got=True,
                )
            )
        parent = previous.hash if previous else None
        if record.parent != parent:
            problems.append(
                Problem(
                    shown,
                    line,
                    "parent",
                    "does not name the release on the line before"
                    + (f" ({parent[:12]})" if parent else " (the first release has no parent)"),
                    record.parent,
                    has_got=True,
                )
            )
        previous = record
    return problems


def resolve_version(versions: list[VersionRecord], name: str, ref: str) -> VersionRecord:
    """Find the release ``ref`` names: ``latest``, a release number (under 7 digits) or a hash prefix.

    Raises:
        VersionNotFound: No release matches, or a hash prefix is ambiguous.
    """
    if not versions:
        raise VersionNotFound(
            f"{name}@{ref}: dataset '{name}' has no releases yet (release it first)."
        )
    if ref == "latest":
        return versions[-1]
    if ref.isdigit() and len(ref) < 7:
        number = int(ref)
        for v in versions:
            if v.number == number:
                return v
        raise VersionNotFound(
            f"{name}@{ref}: no release number {number}; releases are 1 to {versions[-1].number}."
        )
    if not _HEX.match(ref):
        raise VersionNotFound(
            f"{name}@{ref}: not a version: use a release number, a hash prefix (4+ hex digits) or 'latest'."
        )
    found = [v for v in versions if v.hash.startswith(ref)]
    if len(found) > 1:
        raise VersionNotFound(
            f"{name}@{ref}: hash prefix is ambiguous ({len(found)} releases match); give more digits."
        )
    if not found:
        raise VersionNotFound(f"{name}@{ref}: no release has a hash starting with '{ref}'.")
    return found[0]


def _cache_dir(state_dir: Path, digest: str) -> Path:
    return state_dir / "versions" / digest


def cached_files(state_dir: Path, content: Content) -> dict[str, Path]:
    """Old-layout cache copies of a version's files, by file name (full copies per version).

    The cache now stores lines by hash (:mod:`casework.dataset._objects`); this layout is still
    read by :func:`materialise` (caches written before) but no longer written.
    """
    folder = _cache_dir(state_dir, content.hash)
    return {CASES_FILE: folder / CASES_FILE, LABELS_FILE: folder / LABELS_FILE}


def purge_cached(state_dir: Path, records: Sequence[VersionRecord], case_ids: Set[str]) -> int:
    """Delete the cached versions among ``records`` that hold any of ``case_ids``, in either layout.

    Lines no remaining version uses are deleted with them (no copy of a removed row stays).

    Returns:
        How many versions were deleted.
    """
    needles = [f'"id": "{i}"'.encode() for i in case_ids]
    gone = []
    for record in records:
        ids = stored_case_ids(state_dir, record.hash)
        if ids is not None:
            if not case_ids.isdisjoint(ids):
                gone.append(record.hash)
            continue
        cases = _cache_dir(state_dir, record.hash) / CASES_FILE
        if cases.exists() and any(n in cases.read_bytes() for n in needles):
            gone.append(record.hash)
    if gone:
        remove_versions(state_dir, gone)
    return len(gone)


def _read_or_empty(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _git_commits(dataset_dir: Path, max_commits: int) -> tuple[Path, str, str, list[str]] | None:
    """The repository root, the files' paths in it, and the commits that touched them (newest first)."""
    top = _git(["rev-parse", "--show-toplevel"], dataset_dir)
    if top.returncode != 0:
        return None
    root = Path(top.stdout.decode().strip())
    rel = dataset_dir.resolve().relative_to(root.resolve())
    cases_rel = (rel / CASES_FILE).as_posix()
    labels_rel = (rel / LABELS_FILE).as_posix()
    log = _git(
        ["log", f"--max-count={max_commits}", "--format=%H", "--", cases_rel, labels_rel], root
    )
    if log.returncode != 0:
        return None
    return root, cases_rel, labels_rel, log.stdout.decode().split()


def version_from_git(dataset_dir: Path, digest: str, into: Path, max_commits: int = 1000) -> bool:
    """Write the files of the commit whose content has version hash ``digest`` into ``into``.

    Each commit's files stream from `git show` to ``into/cases.jsonl`` and ``into/labels.jsonl``
    while hashed (neither is held whole); the newest match is left there. ``False``: no commit
    of the last ``max_commits`` holds it (or this is not a git work tree).
    """
    found = _git_commits(dataset_dir, max_commits)
    if found is None:
        return False
    root, cases_rel, labels_rel, commits = found
    into.mkdir(parents=True, exist_ok=True)
    for commit in commits:
        seen = hashlib.sha256()
        ok = True
        for name, rel in ((CASES_FILE, cases_rel), (LABELS_FILE, labels_rel)):
            seen.update(name.encode() + b"\0")
            shown = _show_into(root, f"{commit}:{rel}", into / name, seen)
            ok = ok and (shown or name == LABELS_FILE)  # a commit without labels: none
        if ok and seen.hexdigest() == digest:
            return True
    return False


def _show_into(root: Path, spec: str, path: Path, seen: hashlib._Hash) -> bool:
    """Stream `git show SPEC` into ``path`` and ``seen``; whether git found it."""
    with (
        path.open("wb") as out,
        subprocess.Popen(
            ["git", "show", spec], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc,
    ):
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 24):
            seen.update(chunk)
            out.write(chunk)
    return proc.returncode == 0


def _from_git(dataset_dir: Path, digest: str, max_commits: int = 1000) -> Content | None:
    found = _git_commits(dataset_dir, max_commits)
    if found is None:
        return None
    root, cases_rel, labels_rel, commits = found
    for commit in commits:
        cases = _git(["show", f"{commit}:{cases_rel}"], root)
        if cases.returncode != 0:
            continue
        labels = _git(["show", f"{commit}:{labels_rel}"], root)
        content = Content(cases.stdout, labels.stdout if labels.returncode == 0 else b"")
        if content.hash == digest:
            return content
    return None


def materialise(
    dataset_dir: Path, state_dir: Path, record: VersionRecord, shown_name: str
) -> Content:
    """Recover the exact content of a release.

    Raises:
        VersionNotFound: The content is neither in the working tree, the cache nor git history.
    """
    here = Content(
        _read_or_empty(dataset_dir / CASES_FILE), _read_or_empty(dataset_dir / LABELS_FILE)
    )
    if here.hash == record.hash:
        return here
    stored = read_stored(state_dir, record.hash)
    if stored is not None and Content(*stored).hash == record.hash:
        return Content(*stored)
    cached = _cache_dir(state_dir, record.hash)
    if (cached / CASES_FILE).exists():
        content = Content((cached / CASES_FILE).read_bytes(), _read_or_empty(cached / LABELS_FILE))
        if content.hash == record.hash:
            return content
    found = _from_git(dataset_dir, record.hash)
    if found is not None:
        return found
    raise VersionNotFound(
        f"{shown_name}@{record.number}: release {record.number} ({record.hash[:12]}) is in the release log, "
        "but its content is not in the working tree, the local cache (.casework/versions) or any git "
        f"commit of {CASES_FILE}; commit datasets after releasing so old versions stay recoverable."
    )

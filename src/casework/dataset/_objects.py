"""The content-addressed version store: each distinct line once, a version as its line hashes.

Layout under ``.casework/versions/`` (git-ignored):

- ``objects/<digest>-<token>.pack``: lines (each with its newline) new in one release, end to end
  (``<digest>``: the first 16 hex digits of that release's hash, or random ones when a first
  release's hash is computed while its pack is written; only manifests name packs), written past
  the page cache where the system allows;
  ``objects/<...>.idx``: for each line of the pack its hash (hex), offset and length.
- ``<version hash>/manifest``: JSON naming the packs the version draws from, its cases' ids,
  line hashes and per-line summaries (what the release log counts; each distinct summary once),
  and its labels' line hashes; the hashes end to end in base64 (format 2; format 1 wrote them
  in hex and is still read). A version rebuilds byte for byte by joining its lines in order.

Every file is UTF-8 text, so a scan of the project for an identifier finds the store's copies.

A line's hash is XXH3-128 of its bytes without the newline (:func:`line_hash`); the version hash
(sha256, :func:`casework.dataset.versions.content_hash`) is checked on every rebuild, so a damaged
store is never read as a version. Writers and the purge hold the store's lock
(``versions/.lock``), so a purge never drops a pack a release is writing.
Entry points: :func:`write_version`, :func:`read_index`, :func:`read_stored`, :func:`fetch_lines`,
:func:`remove_versions`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import orjson
import xxhash

from casework.atomic import atomic_direct_writer, atomic_write_bytes, atomic_writer
from casework.dataset._apart import apart, fork_ok

__all__ = [
    "Summary",
    "VersionIndex",
    "fetch_lines",
    "line_hash",
    "read_index",
    "read_stored",
    "remove_versions",
    "stored_case_ids",
    "write_stored",
    "write_version",
]

_FORMAT = 2
#: Manifest formats read: 1 wrote line hashes as hex, 2 as base64 (two thirds of the bytes:
#: at 100k cases a manifest took 11.7 MB, three quarters of a 1% release's cost in the store).
_FORMATS = (1, 2)
_PACK = re.compile(r"^[0-9a-f]{16}-[0-9a-f]{8}$")
_MANIFEST = "manifest"
_WRITE_BATCH = (
    1024  # lines joined per write of a pack (two small writes a line cost 7% of a release)
)

Summary = tuple[str, str, str, str, str, bool, bool, str, bool]
"""What the release log needs of one case: slice, split, source, outcome (``unlabelled``),
oracle class, satisfiable, frozen, guideline version (``""``: none), requires-and-forbids."""


def line_hash(line: bytes | memoryview) -> bytes:
    """The 16-byte hash of one line (its bytes without the newline)."""
    return xxhash.xxh3_128_digest(line)


@dataclass(frozen=True)
class VersionIndex:
    """A stored version: its cases (id-sorted) as ids, line hashes and summaries; its labels."""

    digest: str
    ids: list[str]
    hashes: list[bytes]
    summaries: list[Summary]
    label_hashes: list[bytes]
    packs: list[str] = field(default_factory=list)

    def positions(self) -> dict[bytes, int]:
        """Line hash -> index of the case line with that hash."""
        return {h: i for i, h in enumerate(self.hashes)}


def _root(state_dir: Path) -> Path:
    return state_dir / "versions"


def _objects(state_dir: Path) -> Path:
    return _root(state_dir) / "objects"


def _manifest_path(state_dir: Path, digest: str) -> Path:
    return _root(state_dir) / digest / _MANIFEST


@contextlib.contextmanager
def _store_lock(state_dir: Path) -> Iterator[None]:
    from filelock import FileLock  # here: ~50 ms of import that `dataset versions` never needs

    _root(state_dir).mkdir(parents=True, exist_ok=True)
    with FileLock(str(_root(state_dir) / ".lock")):
        yield


def _encode(index: VersionIndex) -> bytes:
    kinds: dict[Summary, int] = {}
    rows = [kinds.setdefault(s, len(kinds)) for s in index.summaries]
    body = {
        "format": _FORMAT,
        "packs": index.packs,
        "ids": index.ids,
        "hashes": _join_hashes(index.hashes),
        "kinds": list(kinds),
        "rows": rows,
        "labels": _join_hashes(index.label_hashes),
    }
    return orjson.dumps(body)


def _join_hashes(hashes: Sequence[bytes]) -> str:
    return base64.b64encode(b"".join(hashes)).decode("ascii")


def _split_hashes(text: str, form: int) -> list[bytes]:
    raw = bytes.fromhex(text) if form == 1 else base64.b64decode(text, validate=True)
    if len(raw) % 16:
        raise ValueError("not whole line hashes")
    return [raw[i : i + 16] for i in range(0, len(raw), 16)]


def read_index(state_dir: Path, digest: str) -> VersionIndex | None:
    """The stored index of version ``digest`` (``None``: not in the store, or unreadable)."""
    try:
        body = orjson.loads(_manifest_path(state_dir, digest).read_bytes())
        if (
            not isinstance(body, dict)
            or body.get("format") not in _FORMATS
            or not all(_PACK.match(p) for p in body["packs"])
        ):
            return None  # unknown format, or pack names that are not ours (paths stay inside)
        form = body["format"]
        ids, hashes = list(body["ids"]), _split_hashes(body["hashes"], form)
        kinds = [tuple(k) for k in body["kinds"]]
        summaries = [kinds[r] for r in body["rows"]]
        if not (len(ids) == len(hashes) == len(summaries)):
            return None
        return VersionIndex(
            digest,
            ids,
            hashes,
            summaries,
            _split_hashes(body["labels"], form),
            list(body["packs"]),
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None  # a damaged manifest: the caller rebuilds from packs or git, or parses


def stored_case_ids(state_dir: Path, digest: str) -> list[str] | None:
    """The case ids of a stored version (``None``: not stored in this layout)."""
    index = read_index(state_dir, digest)
    return None if index is None else index.ids


def _read_idx(path: Path) -> dict[bytes, tuple[int, int]]:
    out = {}
    for line in path.read_bytes().splitlines():
        digest, offset, length = line.split(b" ")
        out[bytes.fromhex(digest.decode())] = (int(offset), int(length))
    return out


def _locations(state_dir: Path, packs: Sequence[str]) -> dict[bytes, tuple[str, int, int]]:
    out: dict[bytes, tuple[str, int, int]] = {}
    for pack in packs:
        for digest, (offset, length) in _read_idx(_objects(state_dir) / f"{pack}.idx").items():
            out.setdefault(digest, (pack, offset, length))
    return out


def fetch_lines(
    state_dir: Path, index: VersionIndex, wanted: Iterable[bytes]
) -> dict[bytes, bytes] | None:
    """The bytes (without newline) of the lines with these hashes (``None``: the store is damaged)."""
    try:
        where = _locations(state_dir, index.packs)
        out: dict[bytes, bytes] = {}
        by_pack: dict[str, list[tuple[int, int, bytes]]] = {}
        for digest in set(wanted):
            if digest not in where:
                return None
            pack, offset, length = where[digest]
            by_pack.setdefault(pack, []).append((offset, length, digest))
        for pack, spans in by_pack.items():
            with open(_objects(state_dir) / f"{pack}.pack", "rb") as handle:
                for offset, length, digest in sorted(spans):
                    handle.seek(offset)
                    line = handle.read(length)
                    if len(line) != length or line_hash(line) != digest:
                        return None
                    out[digest] = line
        return out
    except OSError:
        return None


def _stored_pieces(
    state_dir: Path,
    packs: Sequence[str],
    where: dict[bytes, tuple[str, int, int]],
    hashes: Sequence[bytes],
) -> Iterator[bytes]:
    """The lines ``hashes`` name (each in ``where``), each with its newline, in order.

    Each pack is read in one pass (a seek only where the order jumps).
    """
    handles = {p: open(_objects(state_dir) / f"{p}.pack", "rb") for p in packs}  # noqa: SIM115
    try:
        for digest in hashes:
            pack, offset, length = where[digest]
            handle = handles[pack]
            if handle.tell() != offset:
                handle.seek(offset)
            yield handle.read(length + 1)
    finally:
        for handle in handles.values():
            handle.close()


def _stored_files(state_dir: Path, digest: str) -> tuple[Iterator[bytes], Iterator[bytes]] | None:
    """A stored version's cases and labels as lines with their newlines (``None``: not whole).

    Raises:
        OSError: An index or pack could not be read.
    """
    index = read_index(state_dir, digest)
    if index is None:
        return None
    where = _locations(state_dir, index.packs)
    if any(h not in where for h in index.hashes) or any(h not in where for h in index.label_hashes):
        return None
    return (
        _stored_pieces(state_dir, index.packs, where, index.hashes),
        _stored_pieces(state_dir, index.packs, where, index.label_hashes),
    )


def read_stored(state_dir: Path, digest: str) -> tuple[bytes, bytes] | None:
    """Rebuild a stored version's cases and labels bytes (the caller checks the version hash)."""
    try:
        files = _stored_files(state_dir, digest)
        if files is None:
            return None
        return b"".join(files[0]), b"".join(files[1])
    except OSError:
        return None


def write_stored(state_dir: Path, digest: str, into: Path) -> str | None:
    """Write a stored version's files into ``into`` line by line (neither is held whole).

    ``into/cases.jsonl`` and ``into/labels.jsonl`` get the version's lines, each with its
    newline, read from the packs in order, hashed as written.

    Returns:
        The version hash of what was written (the caller compares it with ``digest``), or
        ``None``: the version is not stored, a pack lacks a line, or a file could not be read
        or written.
    """
    seen = hashlib.sha256()
    try:
        files = _stored_files(state_dir, digest)
        if files is None:
            return None
        for name, pieces in zip(("cases.jsonl", "labels.jsonl"), files, strict=True):
            seen.update(name.encode() + b"\0")
            with open(into / name, "wb") as out:
                batch: list[bytes] = []
                for piece in pieces:
                    batch.append(piece)
                    if len(batch) == _WRITE_BATCH:
                        _write_hashed(out, batch, seen)
                if batch:
                    _write_hashed(out, batch, seen)
    except OSError:
        return None
    return seen.hexdigest()


def _write_hashed(out: BinaryIO, batch: list[bytes], seen: hashlib._Hash) -> None:
    """Write the joined ``batch`` to ``out`` and ``seen``, then empty it."""
    block = b"".join(batch)
    seen.update(block)
    out.write(block)
    batch.clear()


def _write_pack(
    state_dir: Path,
    stem: str,
    lines: Iterable[tuple[bytes, bytes | memoryview]],
    tmp_dir: Path | None,
) -> bool:
    """Write the pack ``stem`` of ``(hash, line)`` pairs and its index; ``False`` when empty."""
    # One buffer, not an object a line: at 1M cases and 2M labels a list of entries and its
    # joined copy held about 0.4 GB.
    entries = bytearray()
    offset = 0
    target = _objects(state_dir) / f"{stem}.pack"
    batch: list[bytes | memoryview] = []
    # Packs are read back only to rebuild an older version: written past the page cache.
    with atomic_direct_writer(target, tmp_dir=tmp_dir) as handle:
        for digest, line in lines:
            batch.append(line)
            entries += b"%s %d %d\n" % (digest.hex().encode(), offset, len(line))
            offset += len(line) + 1
            if len(batch) == _WRITE_BATCH:
                batch.append(b"")  # ends the last line (one copy of the block, not two)
                handle.write(b"\n".join(batch))
                batch.clear()
        if batch:
            batch.append(b"")
            handle.write(b"\n".join(batch))
    if not entries:
        target.unlink()
        return False
    with atomic_writer(_objects(state_dir) / f"{stem}.idx", tmp_dir=tmp_dir) as index:
        index.write(entries)
    return True


def write_version(
    state_dir: Path,
    index: VersionIndex,
    line_of: Callable[[int], bytes | memoryview],
    label_lines: Sequence[bytes | memoryview],
    base: VersionIndex | None,
    tmp_dir: Path | None = None,
    digest_later: Callable[[], str] | None = None,
    order: tuple[Sequence[int], Sequence[int]] | None = None,
    beside: Callable[[], object] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> None:
    """Store a version: its lines not yet in ``base``'s packs go to a new pack, then its manifest.

    Args:
        state_dir: The project's `.casework/` folder.
        index: The version (``packs`` is filled in here).
        line_of: The bytes (without newline) of case line ``i``.
        label_lines: The labels file's lines, without newlines.
        base: A stored version (the parent) whose lines need not be written again.
        tmp_dir: Where temp files wait (one the release lock cleans after a crash).
        digest_later: The version hash, when ``index.digest`` is left empty because it is
            computed meanwhile (asked for once the pack is written; its error is raised).
        order: The case and the label positions in the order their lines are best read (each
            position once; default: by position). A pack's lines may lie in any order: its
            index says where each is.
        beside: Work to start once the pack is being written (staging the release's files, on
            a thread): the pack is then written by a forked child where one may be forked
            (:func:`~casework.dataset._apart.fork_ok`), else here after starting ``beside``.
            Not called when the version is stored already.
        on_progress: Where the progress of a pack written by a child goes (the child's
            ``line_of`` tells it through :func:`~casework.dataset._apart.told`).
    """
    with _store_lock(state_dir):
        if digest_later is None and read_index(state_dir, index.digest) is not None:
            return
        packs = [
            p for p in (base.packs if base else []) if (_objects(state_dir) / f"{p}.idx").exists()
        ]
        known = set(_locations(state_dir, packs))
        case_order, label_order = order or (
            range(len(index.hashes)),
            range(len(index.label_hashes)),
        )

        # Each new line is read only as the pack is written (a first release of 100k cases
        # otherwise held all 563 MB of them at once), once however often it occurs.
        def lines() -> Iterator[tuple[bytes, bytes | memoryview]]:
            written: set[bytes] = set()
            for i in case_order:
                digest = index.hashes[i]
                if digest not in known and digest not in written:
                    written.add(digest)
                    yield digest, line_of(i)
            for i in label_order:
                digest = index.label_hashes[i]
                if digest not in known and digest not in written:
                    written.add(digest)
                    yield digest, label_lines[i]

        # A pack is named for the version that wrote it (or by chance, when that is not known
        # yet): only the manifests' lists of packs are read.
        stem = f"{index.digest[:16] or secrets.token_hex(8)}-{secrets.token_hex(4)}"
        wrote = _write_pack_beside(state_dir, stem, lines, tmp_dir, beside, on_progress)
        if wrote:
            packs.append(stem)
        # The manifest does not hold the version hash: encoded while another thread may still
        # be computing it (1.3 s at 1M cases, otherwise spent after the wait).
        manifest = _encode(
            VersionIndex(
                index.digest, index.ids, index.hashes, index.summaries, index.label_hashes, packs
            )
        )
        version = index.digest
        if digest_later is not None:
            try:
                version = digest_later()
            except BaseException:  # the release failed: no manifest will name this pack
                _drop_pack(state_dir, stem if wrote else None)
                raise
            if read_index(state_dir, version) is not None:  # stored already: ours is spare
                _drop_pack(state_dir, stem if wrote else None)
                return
        atomic_write_bytes(_manifest_path(state_dir, version), manifest, tmp_dir=tmp_dir)


def _write_pack_beside(
    state_dir: Path,
    stem: str,
    lines: Callable[[], Iterable[tuple[bytes, bytes | memoryview]]],
    tmp_dir: Path | None,
    beside: Callable[[], object] | None,
    on_progress: Callable[[int, int], None] | None,
) -> bool:
    """:func:`_write_pack`, with ``beside`` started (see :func:`write_version`)."""
    if beside is not None and fork_ok():
        pack = apart(lambda: _write_pack(state_dir, stem, lines(), tmp_dir))
        try:
            beside()
        except BaseException:
            pack.close()
            raise
        return pack.result(on_progress)
    if beside is not None:
        beside()
    return _write_pack(state_dir, stem, lines(), tmp_dir)


def _drop_pack(state_dir: Path, stem: str | None) -> None:
    """Remove a pack just written and its index (``None``: none was written)."""
    if stem is not None:
        for suffix in (".pack", ".idx"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_objects(state_dir) / f"{stem}{suffix}")


def remove_versions(state_dir: Path, digests: Iterable[str]) -> None:
    """Delete stored versions (either layout), then every stored line no version still uses.

    Packs holding both kept and dropped lines are rewritten without the dropped ones (a purge
    must leave no copy of a forgotten row).
    """
    with _store_lock(state_dir):
        for digest in digests:
            shutil.rmtree(_root(state_dir) / digest, ignore_errors=True)
        _collect(state_dir)


def _collect(state_dir: Path) -> None:
    manifests = {p.parent.name: p for p in _root(state_dir).glob(f"*/{_MANIFEST}")}
    indexes = {d: read_index(state_dir, d) for d in manifests}
    used: dict[str, set[bytes]] = {}
    for index in indexes.values():
        if index is None:
            continue
        wanted = {*index.hashes, *index.label_hashes}
        for pack in index.packs:
            used.setdefault(pack, set()).update(wanted)
    renamed: dict[str, str | None] = {}
    for idx in sorted(_objects(state_dir).glob("*.idx")):
        pack = idx.stem
        if not _PACK.match(pack):
            continue
        entries = _read_idx(idx)
        keep = used.get(pack, set()) & set(entries)
        if len(keep) == len(entries):
            continue
        renamed[pack] = _rewrite_pack(state_dir, pack, entries, keep)
    for digest, index in indexes.items():
        if index is None or not set(index.packs) & set(renamed):
            continue
        packs = [renamed.get(p, p) for p in index.packs]
        kept = VersionIndex(
            digest,
            index.ids,
            index.hashes,
            index.summaries,
            index.label_hashes,
            [p for p in packs if p is not None],
        )
        atomic_write_bytes(manifests[digest], _encode(kept))
    for pack in renamed:
        for suffix in (".idx", ".pack"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_objects(state_dir) / f"{pack}{suffix}")
    for orphan in _objects(state_dir).glob("*.pack"):
        if not orphan.with_suffix(".idx").exists():
            orphan.unlink()


def _rewrite_pack(
    state_dir: Path, pack: str, entries: dict[bytes, tuple[int, int]], keep: set[bytes]
) -> str | None:
    if not keep:
        return None
    stem = f"{pack.partition('-')[0]}-{secrets.token_hex(4)}"
    with open(_objects(state_dir) / f"{pack}.pack", "rb") as handle:

        def lines() -> Iterator[tuple[bytes, bytes]]:
            for digest, (offset, length) in sorted(entries.items(), key=lambda e: e[1][0]):
                if digest in keep:
                    handle.seek(offset)
                    yield digest, handle.read(length)

        _write_pack(state_dir, stem, lines(), None)
    return stem

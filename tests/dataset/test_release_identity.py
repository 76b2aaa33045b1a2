"""A first release writes the same bytes as the code before the release streamed its labels.

The hashes below were recorded by the code of 2026-12-05 08:00 UTC (commit fae6c22), before
the workers read the labels from disk and sent their rows back compactly: the released files,
the release log (a fixed time) and every store object (a pack's lines by hash, as its index
places them: since commit fae6c22 a pack takes its lines in the order of the files they come
from, so only their order changed; a manifest with its pack names, which are partly random,
replaced by their contents' hashes; the pack content hashes below were computed so on the
code before that change, and agree). A tree from the
benchmark's generator, released as it is (canonical) and as a person might leave it (labels
shuffled, some lines spaced otherwise), in one process and on forked workers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest

from casework.dataset.store import release
from casework.dataset.versions import CASES_FILE, LABELS_FILE, VERSIONS_FILE
from casework.project import load_project

NAME = "refunds"
WHEN = datetime(2026, 12, 5, 8, 0, tzinfo=UTC)
_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "dataset_data.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dataset_data", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _untidy(folder: Path) -> None:
    """Shuffle the labels and re-space every third line of both files (valid, not canonical)."""
    rng = random.Random(3)
    for file in (CASES_FILE, LABELS_FILE):
        lines = (folder / file).read_bytes().splitlines()
        if file == LABELS_FILE:
            rng.shuffle(lines)
        out = [
            json.dumps(json.loads(line), separators=(",", ":")).encode() if i % 3 == 0 else line
            for i, line in enumerate(lines)
        ]
        (folder / file).write_bytes(b"".join(line + b"\n" for line in out))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _pack_content(pack: Path) -> str:
    """A pack's lines by hash, whatever their order in it: its index names each line's place,
    and the lines fill the pack (each newline-ended), none left out or overlapping."""
    data = pack.read_bytes()
    entries: list[tuple[int, int, bytes]] = []
    for row in pack.with_suffix(".idx").read_bytes().splitlines():
        digest, offset, length = row.split()
        entries.append((int(offset), int(length), digest))
    entries.sort()
    at = 0
    for start, size, _ in entries:
        assert start == at and data[start + size : start + size + 1] == b"\n"
        at = start + size + 1
    assert at == len(data)
    lines = sorted((d, data[o : o + n]) for o, n, d in entries)
    return _digest(b"".join(d + b" " + line + b"\n" for d, line in lines))


def _store_digests(state: Path) -> list[str]:
    """Every store object's content (a manifest's pack names replaced by their contents')."""
    objects = state / "versions" / "objects"
    packs = {p.stem: _pack_content(p) for p in objects.glob("*.pack")}
    out = [f"pack {d}" for d in packs.values()]
    for manifest in (state / "versions").glob("*/manifest"):
        body = json.loads(manifest.read_bytes())
        body["packs"] = [packs[p] for p in body["packs"]]
        out.append(f"{manifest.parent.name[:16]} {_digest(json.dumps(body).encode())}")
    return sorted(out)


def _release(root: Path, untidy: bool) -> list[str]:
    cases = _generator().make_project(root, 120, seed=5)
    if untidy:
        _untidy(cases.parent)
    project = load_project(root)
    record = release(project, NAME, None, "first", now=WHEN)
    assert record is not None
    folder = project.dataset_dir(NAME)
    files = [f"{f} {_digest((folder / f).read_bytes())}" for f in (CASES_FILE, LABELS_FILE)]
    log = _digest((folder / VERSIONS_FILE).read_bytes())
    return [record.hash[:16], *files, f"{VERSIONS_FILE} {log}", *_store_digests(root / ".casework")]


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("untidy", [False, True])
def test_a_first_release_writes_the_bytes_recorded_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, untidy: bool
) -> None:
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: workers)
    got = _release(tmp_path / "p", untidy)
    assert got == RECORDED[untidy]


#: Recorded before the change (both trees release to the same content).
_BYTES = [
    "721297aa9256ef15",
    "cases.jsonl 9f2356357e09b90e",
    "labels.jsonl 7369b78b5eff0536",
    "versions.jsonl 11155f3fef22294d",
    "721297aa9256ef15 faabc2dbd1b1e197",
    "pack 246fe82d7e75fafb",
]
RECORDED: dict[bool, list[str]] = {False: _BYTES, True: _BYTES}

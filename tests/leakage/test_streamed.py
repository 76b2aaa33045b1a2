"""The streamed LSH join finds what the in-memory join finds, within its memory setting."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import Result

from casework.errors import InputError, UsageError
from casework.leakage import scan
from casework.leakage.batches import sets_of
from casework.leakage.lsh import choose_params, lsh_join
from casework.leakage.pairs import Pairs, iter_pairs_within_groups, pairs_within_groups
from casework.leakage.scan import find_split_pairs
from casework.leakage.scratch import LOCK_NAME, clean_scratch, scratch_folder
from casework.leakage.streamed import (
    _BAND_SHARE,
    _band_parts,
    _unique_keys,
    streamed_lsh_join,
)
from casework.project import Project, load_project
from casework.schema import Case
from casework.shingling._sets import I64
from tests.leakage.corpora import case_row, planted

THRESHOLD = 0.8


def _in_memory(texts: list[str], groups: I64 | None = None) -> Pairs:
    params = choose_params(THRESHOLD, 256)
    sketch = sets_of(texts, k=3, num_perm=params.num_perm)
    found, _ = lsh_join(sketch.sets, THRESHOLD, signatures=sketch.signatures, groups=groups)
    return found


def _assert_same(a: Pairs, b: Pairs) -> None:
    assert a.left.tolist() == b.left.tolist()
    assert a.right.tolist() == b.right.tolist()
    assert a.shared.tolist() == b.shared.tolist()
    assert a.jaccard.tolist() == b.jaccard.tolist()


def _boundary_corpus(n: int, step: int) -> tuple[list[str], set[tuple[int, int]]]:
    """Planted corpus, plus exact copies on both sides of every batch boundary."""
    texts = planted(n, seed=7, share=0.1)
    spanning = set()
    for cut in range(step, n, step):
        texts[cut] = texts[cut - 1]
        spanning.add((cut - 1, cut))
    return texts, spanning


@pytest.mark.parametrize("memory_mb", [0.02, 64.0])
def test_streamed_join_equals_in_memory_join_across_batches(
    tmp_path: Path, memory_mb: float
) -> None:
    step = 97
    texts, spanning = _boundary_corpus(3_000, step)
    expected = _in_memory(texts)
    assert spanning <= expected.as_set()
    batches = (texts[i : i + step] for i in range(0, len(texts), step))
    found, params, stats = streamed_lsh_join(
        batches, THRESHOLD, scratch=tmp_path, memory_mb=memory_mb
    )
    _assert_same(found, expected)
    assert (params.bands, params.rows) == (26, 8)
    assert stats.rows == len(texts)
    assert stats.batches == -(-len(texts) // step)
    # The tiny setting sorts each band in several key-range parts and verifies in many blocks.
    assert (stats.band_parts > 1) == (memory_mb < 1)
    assert (stats.blocks > 1) == (memory_mb < 1)


def test_streamed_join_keeps_only_pairs_across_groups(tmp_path: Path) -> None:
    texts, _ = _boundary_corpus(2_000, 50)
    groups = np.arange(len(texts), dtype=np.int64) % 3
    expected = _in_memory(texts, groups)
    assert len(expected) < len(_in_memory(texts))
    batches = (texts[i : i + 50] for i in range(0, len(texts), 50))
    lines: list[str] = []
    found, _, _ = streamed_lsh_join(
        batches, THRESHOLD, scratch=tmp_path, memory_mb=0.02, groups=groups, progress=lines.append
    )
    _assert_same(found, expected)
    assert lines[0] == "sketched 50 rows" and "sketched 2,000 rows" in lines
    assert any(line.startswith("band 26 of 26: ") for line in lines)
    assert lines[-1].startswith("verified ")


def test_no_scratch_file_is_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Mapped pages count as resident memory: a 10M-row scan that mapped its 11 GB pairs file
    # peaked at 12 GB, and one that mapped its signatures to verify (a candidate's rows lie
    # anywhere in the file) at 7.27 GB. Verification reads two blocks of rows whole instead.
    mapped: list[str] = []
    real = np.memmap

    def recording(path: Path, *args: object, **kwargs: object) -> object:
        mapped.append(Path(path).name)
        return real(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "memmap", recording)
    texts, _ = _boundary_corpus(1_000, 100)
    batches = (texts[i : i + 100] for i in range(0, len(texts), 100))
    streamed_lsh_join(batches, THRESHOLD, scratch=tmp_path, memory_mb=0.01)
    assert mapped == []


def test_a_bucket_over_the_budget_is_split_and_deduplicated_in_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 1_000
    left = rng.integers(0, n - 1, 50_000)
    right = np.minimum(left + rng.integers(1, 50, 50_000), n - 1)
    keys = left * n + right
    path = tmp_path / "pairs-0.i64"
    keys.astype(np.int64).tofile(path)
    parts = list(_unique_keys(path, 0, n, n, budget=40_000))
    # 50,000 pairs at 40 bytes in a 40 kB budget: one split into 100 parts of half the budget.
    assert len(parts) == 100
    assert np.concatenate(parts).tolist() == np.unique(keys).tolist()
    assert list(tmp_path.iterdir()) == []


def test_pairs_of_big_groups_come_in_parts_of_the_size_asked() -> None:
    rng = np.random.default_rng(5)
    # One key held by 300 rows (44,850 pairs), many small groups, many single rows.
    keys = np.concatenate([np.zeros(300), rng.integers(1, 400, 700), np.arange(10**6, 10**6 + 500)])
    members = rng.permutation(len(keys)).astype(np.int64)
    whole = pairs_within_groups(members, keys.astype(np.uint64))
    parts = list(iter_pairs_within_groups(members, keys.astype(np.uint64), max_pairs=1_000))
    assert len(parts) > 40
    # Parts split between elements, never inside one element's run of partners (at most 299).
    assert max(len(a) for a, _ in parts) <= 1_000 + 299
    left = np.concatenate([a for a, _ in parts])
    right = np.concatenate([b for _, b in parts])
    assert left.tolist() == whole[0].tolist() and right.tolist() == whole[1].tolist()
    assert len(whole[0]) >= 300 * 299 // 2


def test_a_band_and_its_pairs_each_keep_to_a_share_of_the_setting() -> None:
    # 1,000,000 live rows at about 96 bytes each in a 100 MB setting: 40 MB a part, 3 parts.
    assert _band_parts(1_000_000, 100 * 2**20) == 3
    assert _band_parts(1_000_000, 10 * 2**30) == 1
    assert _BAND_SHARE < 0.5


def _peak_bytes(texts: list[str], memory_mb: float | None, scratch: Path) -> int:
    tracemalloc.start()
    try:
        if memory_mb is None:
            _in_memory(texts)
        else:
            step = 200
            streamed_lsh_join(
                (texts[i : i + step] for i in range(0, len(texts), step)),
                THRESHOLD,
                scratch=scratch,
                memory_mb=memory_mb,
            )
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_follows_the_setting_not_the_row_count(tmp_path: Path) -> None:
    small, large = planted(1_000, seed=1), planted(8_000, seed=1)
    # Warm up: first calls import and cache (scipy's binomial, Arrow kernels), which tracemalloc
    # would count.
    _peak_bytes(small[:300], None, tmp_path)
    _peak_bytes(small[:300], 0.25, tmp_path)
    in_memory = [_peak_bytes(t, None, tmp_path) for t in (small, large)]
    streamed = [_peak_bytes(t, 0.25, tmp_path) for t in (small, large)]
    # 8x the rows: the in-memory join grows (2.5x here, past its fixed costs); the streamed one
    # keeps to its setting (plus a few bytes a row for the sizes and offsets it holds).
    assert in_memory[1] > 2 * in_memory[0]
    assert streamed[1] < 1.5 * streamed[0]
    assert streamed[1] < in_memory[1] / 4


def test_the_scratch_folder_is_removed_when_the_join_fails(tmp_path: Path) -> None:
    root = tmp_path / "leakage"

    def batches() -> object:
        yield ["where is my refund for order 1234567"]
        raise RuntimeError("the reader broke")

    with pytest.raises(RuntimeError), scratch_folder(root) as folder:
        streamed_lsh_join(batches(), THRESHOLD, scratch=folder, memory_mb=1)  # type: ignore[arg-type]
    assert list(root.iterdir()) == []


_HOLDER = """
import sys, time
from pathlib import Path
from casework.leakage.scratch import scratch_folder
with scratch_folder(Path(sys.argv[1])) as folder:
    (folder / "band-0.u64").write_bytes(b"x" * 64)
    print(folder, flush=True)
    time.sleep(600)
"""


def test_a_killed_scan_leaves_a_folder_the_next_scan_removes(tmp_path: Path) -> None:
    root = tmp_path / "leakage"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(root)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        folder = Path(holder.stdout.readline().strip())
        assert (folder / LOCK_NAME).exists()
        later = time.time() + 3_600
        # Alive and locked: kept, however old.
        assert clean_scratch(root, now=later) == []
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert folder.is_dir()
    # Killed (the lock died with it) but fresh: kept a minute, in case a scan is starting.
    assert clean_scratch(root) == []
    os.utime(folder, (time.time() - 120, time.time() - 120))
    with scratch_folder(root) as mine:
        assert not folder.exists()
        assert mine.parent == root
    assert list(root.iterdir()) == []


def test_any_scan_removes_what_a_killed_streamed_scan_left(tmp_path: Path) -> None:
    root = tmp_path / ".casework" / "tmp" / "leakage"
    left_behind = root / "scan-1-dead"
    left_behind.mkdir(parents=True)
    (left_behind / "signatures.u32").write_bytes(b"x" * 64)
    os.utime(left_behind, (time.time() - 120, time.time() - 120))
    # An exact scan of a few rows never streams, and still cleans up.
    find_split_pairs(_cases(planted(30, seed=2)), THRESHOLD, memory_mb=2048, scratch=root)
    assert list(root.iterdir()) == []


def _cases(texts: list[str]) -> list[Case]:
    splits = ("dev", "holdout", "smoke")
    return [
        Case.model_validate(case_row(f"c{i:05d}", splits[i % 3], t)) for i, t in enumerate(texts)
    ]


def test_a_scan_over_its_memory_setting_streams_and_says_so(tmp_path: Path) -> None:
    cases = _cases(planted(1_500, seed=5, share=0.2))
    scratch = tmp_path / ".casework" / "tmp" / "leakage"
    plain = find_split_pairs(cases, THRESHOLD, method="lsh")
    bounded = find_split_pairs(cases, THRESHOLD, method="lsh", memory_mb=0.5, scratch=scratch)
    assert plain.streamed is None and plain.notes == []
    assert bounded.streamed is not None and bounded.streamed.batches > 1
    assert bounded.pairs == plain.pairs and plain.pairs
    assert len(bounded.notes) == 1
    assert bounded.notes[0].startswith("the in-memory LSH join of 1,500 rows needs about 5 MB,")
    assert "it streamed through disk" in bounded.notes[0]
    assert list(scratch.iterdir()) == []
    with pytest.raises(UsageError) as caught:
        find_split_pairs(cases, THRESHOLD, method="lsh", memory_mb=0.5)
    assert caught.value.param == "scratch"


def test_the_exact_join_hands_over_to_lsh_above_the_setting(tmp_path: Path) -> None:
    cases = _cases(planted(1_000, seed=5, share=0.2))
    exact = find_split_pairs(cases, THRESHOLD, method="exact")
    handed = find_split_pairs(cases, THRESHOLD, method="exact", memory_mb=4)
    assert exact.method == "exact" and handed.method == "lsh"
    assert handed.params is not None
    assert handed.notes == [
        "the exact join of 1,000 rows needs about 8 MB, over the memory setting (4 MB): "
        "MinHash-LSH ran instead (recall ≥ 0.99 at the threshold, every pair verified exactly)"
    ]
    # On this corpus LSH misses nothing the exact join finds.
    assert handed.pairs == exact.pairs
    with pytest.raises(UsageError) as caught:
        find_split_pairs(cases, THRESHOLD, memory_mb=0)
    assert caught.value.param == "memory_mb"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("10", "Input should be greater than or equal to 64. Got 10."),
        (
            '"lots"',
            "Input should be a valid integer, unable to parse string as an integer. Got 'lots'.",
        ),
    ],
)
def test_a_bad_memory_setting_is_a_located_config_error(
    tmp_path: Path, value: str, problem: str
) -> None:
    (tmp_path / "casework.toml").write_text(
        f'name = "t"\n[leakage]\nmemory_mb = {value}\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        load_project(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'casework.toml'}:3: leakage.memory_mb: {problem}"


def test_the_scan_command_says_it_streamed(
    leak_project: Project, run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fixture's dataset is small: claim the in-memory join would not fit, as it would not
    # at millions of rows, so the command takes the streamed path.
    monkeypatch.setattr(scan, "in_memory_mb", lambda rows: 10**6)
    text = run_cli("leakage", "scan", "support", "--method", "lsh")
    # Exit 1: the planted leaks are open flags.
    assert text.exit_code == 1, text.output
    assert "memory: the in-memory LSH join of " in text.stdout
    assert "it streamed through disk" in text.stdout
    data = json.loads(
        run_cli("leakage", "scan", "support", "--method", "lsh", "--format", "json").stdout
    )
    assert len(data["notes"]) == 1 and "streamed through disk" in data["notes"][0]
    assert list((leak_project.root / ".casework" / "tmp" / "leakage").iterdir()) == []

"""The leakage benchmark's corpus is scale-free: each block of rows writes with its own words."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from casework.shingling._shingles import shingle_hashes

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
# The generator is a script beside the package, not a typed module: imported by name.
leakage_data = importlib.import_module("leakage_data")


def test_each_tenant_shares_shingles_only_through_planted_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(leakage_data, "TENANT_ROWS", 300)
    rows = leakage_data.generate(900, seed=4, planted=0.0)
    first = set().union(*(shingle_hashes(t) for t in rows[:300]))
    for tenant in (1, 2):
        block = rows[300 * tenant : 300 * (tenant + 1)]
        shared = [t for t in block if shingle_hashes(t) & first]
        # Only an all-number shingle (an amount's pounds and pence) can be common to two tenants.
        assert len(shared) < 0.1 * len(block)
    # The first block is the generator of old, untouched (corpora up to a block are unchanged).
    monkeypatch.setattr(leakage_data, "TENANT_ROWS", 10**9)
    assert leakage_data.generate(300, seed=4, planted=0.0) == rows[:300]


def test_a_streamed_corpus_equals_the_generated_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(leakage_data, "TENANT_ROWS", 250)
    path = tmp_path / "corpus.txt"
    leakage_data.write_corpus(1_000, path, seed=2)
    assert path.read_text(encoding="utf-8").split("\n")[:-1] == leakage_data.generate(1_000, seed=2)

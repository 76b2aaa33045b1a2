"""Ray Data engine: same batch functions, identical results to the local engine (2 local CPUs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from casework.dataset import load_dataset
from casework.leakage import Method, scan_corpus, sets_of
from casework.leakage.scan import find_split_pairs
from casework.project import Project
from tests.leakage.corpora import planted

ray = pytest.importorskip("ray")

pytestmark = [
    # The worker's local Ray of two CPUs, shared with the other Ray tests (tests/ray_cluster.py).
    pytest.mark.usefixtures("ray_local"),
    # Ray's own modules warn about their own deprecated settings; those are not ours to fix.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray", "ignore::FutureWarning:ray"),
]


def test_ray_sketch_equals_local() -> None:
    from casework.leakage.ray_engine import ray_sketch

    texts = planted(1500, seed=3)
    local = sets_of(texts, k=3, num_perm=64)
    remote = ray_sketch(texts, k=3, num_perm=64, batch_rows=400)
    assert np.array_equal(local.sets.hashes, remote.sets.hashes)
    assert np.array_equal(local.sets.offsets, remote.sets.offsets)
    assert local.signatures is not None and remote.signatures is not None
    assert np.array_equal(local.signatures, remote.signatures)


def test_ray_lsh_pipeline_equals_local_join() -> None:
    """Signatures, band buckets and verification all on Ray workers: the local join's pairs."""
    from casework.leakage import choose_params, lsh_join
    from casework.leakage.ray_lsh import ray_lsh_join

    # The pipeline must spread over at least two worker processes.
    assert ray.cluster_resources()["CPU"] >= 2
    texts = planted(700, seed=5, share=0.2)
    params = choose_params(0.8, 256)
    sketch = sets_of(texts, k=3, num_perm=params.num_perm)
    # Without groups (every pair qualifies); test_ray_scan_equals_local covers splits as groups.
    local, _ = lsh_join(sketch.sets, 0.8, signatures=sketch.signatures)
    remote, used = ray_lsh_join(texts, 0.8, batch_rows=200, partitions=3)
    assert used == params
    assert len(local) > 20
    assert np.array_equal(remote.left, local.left)
    assert np.array_equal(remote.right, local.right)
    assert np.array_equal(remote.shared, local.shared)
    assert np.array_equal(remote.jaccard, local.jaccard)


def test_ray_scan_equals_local(leak_project: Project) -> None:
    cases = load_dataset(leak_project, "support").cases
    methods: tuple[Method, ...] = ("exact", "lsh")
    for method in methods:
        local = find_split_pairs(cases, 0.8, method=method)
        remote = find_split_pairs(cases, 0.8, method=method, engine="ray")
        assert remote.pairs == local.pairs
        assert remote.engine == "ray"


def test_ray_corpus_scan_equals_local(leak_project: Project, tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    texts = planted(600, seed=11)
    copy = "hello there where is my refund for order 4411223 i returned the red lamp last week thank you"
    for part in range(3):
        rows = texts[part * 200 : (part + 1) * 200] + ([copy] if part == 1 else [])
        (folder / f"part-{part}.jsonl").write_text(
            "".join(json.dumps({"text": t}) + "\n" for t in rows), encoding="utf-8"
        )
    local = scan_corpus(leak_project, [str(folder)])
    remote = scan_corpus(leak_project, [str(folder)], engine="ray")
    assert remote.hits == local.hits
    assert remote.documents == local.documents == 601
    assert any(h.case_id == "h-near" and h.file.endswith("part-1.jsonl") for h in remote.hits)

"""Ray Data engine (``--engine ray``, extra ``casework[ray]``): the local batch functions on Ray.

Results are identical to the local engine.

Shingling and MinHash of a scan run as ``map_batches`` over the texts; a corpus scan broadcasts the
eval-row index once (``ray.put``) and streams every corpus file in a worker. Ray is started on
first use (local mode unless ``RAY_ADDRESS`` names a cluster). Entry points: :func:`ray_sketch`,
:func:`ray_scan_files`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from casework.errors import Problem, UsageError
from casework.leakage.batches import (
    BATCH_ROWS,
    Sketch,
    merge_sketches,
    sets_from_lists,
    sets_to_lists,
    sketch_batch,
)
from casework.leakage.corpus_index import CorpusHit, CorpusIndex, scan_file

__all__ = ["ensure_ray", "ray_scan_files", "ray_sketch"]


def ensure_ray() -> Any:
    """Import Ray and start it if needed; a clear error when the extra is not installed.

    Raises:
        UsageError: Ray is not installed (``pip install "casework[ray]"``).
    """
    try:
        import ray
        import ray.data  # configures Ray Data's loggers on import; quietened below
    except ImportError as exc:
        raise UsageError(
            'Ray is not installed. Install the extra: pip install "casework[ray]".',
            param="engine",
        ) from exc
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        ray.init(
            address=address or None,
            num_cpus=None if address else (os.cpu_count() or 1),
            include_dashboard=False if not address else None,
            ignore_reinit_error=True,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    # casework shows its own summary; Ray Data's per-operator INFO lines would bury it.
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    return ray


def _sketch_table(batch: pa.Table, k: int, num_perm: int) -> pa.Table:
    sketch = sketch_batch(batch.column("text"), k=k, num_perm=num_perm)
    columns: dict[str, Any] = {"i": batch.column("i"), "sets": sets_to_lists(sketch.sets)}
    if sketch.signatures is not None:
        flat = pa.array(sketch.signatures.reshape(-1))
        columns["sig"] = pa.FixedSizeListArray.from_arrays(flat, num_perm)
    return pa.table(columns)


def ray_sketch(
    texts: Sequence[str], *, k: int, num_perm: int = 0, batch_rows: int = BATCH_ROWS
) -> Sketch:
    """Shingle sets (and signatures) of ``texts`` computed by Ray Data workers, in input order."""
    ray = ensure_ray()
    table = pa.table(
        {
            "i": pa.array(np.arange(len(texts), dtype=np.int64)),
            "text": pa.array(list(texts), pa.large_string()),
        }
    )
    data = ray.data.from_arrow(table).map_batches(
        _sketch_table,
        batch_format="pyarrow",
        batch_size=batch_rows,
        fn_kwargs={"k": k, "num_perm": num_perm},
        zero_copy_batch=True,
    )
    parts = [ray.get(ref) for ref in data.to_arrow_refs()]
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return merge_sketches([sketch_batch([], k=k, num_perm=num_perm)], num_perm)
    result = pa.concat_tables(parts).combine_chunks()
    order = np.argsort(result.column("i").to_numpy(), kind="stable")
    result = result.take(pa.array(order))
    sets = sets_from_lists(result.column("sets"))
    sigs = None
    if num_perm:
        flat = result.column("sig").combine_chunks().values.to_numpy(zero_copy_only=False)
        sigs = np.asarray(flat, dtype=np.uint32).reshape(len(result), num_perm)
    return Sketch(sets, sigs)


def _scan_rows(batch: dict[str, Any], index_ref: Any, text_field: str) -> dict[str, Any]:
    import ray

    index: CorpusIndex = ray.get(index_ref[0])
    hits: list[CorpusHit] = []
    documents = 0
    problems: list[Problem] = []
    for path in batch["path"]:
        file_hits, count, file_problems = scan_file(index, str(path), text_field)
        hits.extend(file_hits)
        documents += count
        problems.extend(file_problems)
    return {
        "hits": np.array([hits], dtype=object),
        "documents": np.array([documents], dtype=np.int64),
        "problems": np.array([problems], dtype=object),
    }


def ray_scan_files(
    index: CorpusIndex, files: Sequence[str], text_field: str
) -> tuple[list[CorpusHit], int, list[Problem]]:
    """Score every corpus file in a Ray worker against the broadcast index (one task per file)."""
    ray = ensure_ray()
    # Wrapped in a list so Ray passes the reference itself instead of resolving it per call.
    index_ref = [ray.put(index)]
    data = ray.data.from_items([{"path": f} for f in files], override_num_blocks=max(1, len(files)))
    results = data.map_batches(
        _scan_rows,
        batch_size=1,
        batch_format="numpy",
        fn_kwargs={"index_ref": index_ref, "text_field": text_field},
    ).take_all()
    hits: list[CorpusHit] = []
    problems: list[Problem] = []
    documents = 0
    for row in results:
        hits.extend(row["hits"])
        documents += int(row["documents"])
        problems.extend(row["problems"])
    return hits, documents, problems

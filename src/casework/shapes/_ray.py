"""Ray Data engine of a large shapes build (``engine="ray"``, extra ``casework[ray]``).

Reading and scrubbing run as one Ray Data task per trace file; embedding and assignment run as
``map_batches`` over the spilled conversations with the fitted model broadcast once. Results are
identical to the local engine: files come back in file order, and each batch is embedded and
assigned by the same functions. Entry points: :func:`ray_parts`, :func:`ray_assign`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from casework.errors import Problem
from casework.leakage.ray_engine import ensure_ray
from casework.shapes._sample import Row
from casework.shapes._stream import FittedModel, assign
from casework.shapes._traffic import Failing, Traffic, read_part

#: Spilled batches sent to Ray Data at once (each one ``map_batches`` batch).
GROUP = 8


def _read_rows(batch: dict[str, Any], job_ref: list[Any]) -> dict[str, Any]:
    import ray

    job = ray.get(job_ref[0])
    parts, problems = [], []
    for path in batch["path"]:
        part, found = read_part(job, path)
        parts.append(part)
        problems.append(found)
    return {
        "index": batch["index"],
        "part": _objects(parts),
        "problems": _objects(problems),
    }


def _objects(values: list[Any]) -> NDArray[Any]:
    """A 1-d object array of ``values`` (numpy would make lists of lists a 2-d array)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def ray_parts(traffic: Traffic) -> Iterator[tuple[Failing, list[Problem]]]:
    """Each file's failing conversations and problems, read on Ray workers, in file order."""
    ray = ensure_ray()
    job_ref = [ray.put(traffic.job)]  # in a list: Ray passes the reference, not its value
    items = [{"index": i, "path": p} for i, p in enumerate(traffic.files)]
    data = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    data.context.execution_options.preserve_order = True
    out = data.map_batches(
        _read_rows, batch_size=1, batch_format="numpy", fn_kwargs={"job_ref": job_ref}
    )
    for row in out.iter_rows():
        yield row["part"], list(row["problems"])


def _assign_table(batch: pa.Table, model_ref: list[Any]) -> pa.Table:
    import ray

    model: FittedModel = ray.get(model_ref[0])
    labels, dist = assign(model, batch.column("text").to_pylist())
    return pa.table({"i": batch.column("i"), "label": labels, "distance": dist})


def ray_assign(
    model: FittedModel, batches: Iterable[list[Row]], batch_size: int
) -> Iterator[tuple[list[Row], NDArray[np.int64], NDArray[np.float64]]]:
    """Each batch with its rows' shapes and distances, embedded and assigned on Ray workers."""
    ray = ensure_ray()
    model_ref = [ray.put(model)]
    group: list[list[Row]] = []

    def run() -> Iterator[tuple[list[Row], NDArray[np.int64], NDArray[np.float64]]]:
        rows = [r for b in group for r in b]
        table = pa.table(
            {
                "i": pa.array(np.arange(len(rows), dtype=np.int64)),
                "text": pa.array([r.text for r in rows], pa.large_string()),
            }
        )
        data = ray.data.from_arrow(table).map_batches(
            _assign_table,
            batch_format="pyarrow",
            batch_size=batch_size,
            fn_kwargs={"model_ref": model_ref},
            zero_copy_batch=True,
        )
        parts = [p for p in (ray.get(ref) for ref in data.to_arrow_refs()) if p.num_rows]
        result = pa.concat_tables(parts).combine_chunks()
        order = np.argsort(result.column("i").to_numpy(), kind="stable")
        labels = np.asarray(result.column("label").to_numpy()[order], dtype=np.int64)
        dist = np.asarray(result.column("distance").to_numpy()[order], dtype=np.float64)
        start = 0
        for b in group:
            yield b, labels[start : start + len(b)], dist[start : start + len(b)]
            start += len(b)

    for batch in batches:
        group.append(batch)
        if len(group) >= GROUP:
            yield from run()
            group = []
    if group:
        yield from run()

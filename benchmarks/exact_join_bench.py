"""The exact join's two candidate filters (one or two shared prefix shingles), side by side.

On the leakage benchmark's seeded corpus (``leakage_data.py``, word 3-shingles, Jaccard >= 0.8):
for each size, the estimate :func:`casework.leakage.choose_prefix_tokens` decides from (the
one-shingle pair bound and the two-shingle key count), then each filter's candidate count,
candidate-generation time and whole ``exact_join`` time, in one process; the two joins' pairs
must be equal. ``python benchmarks/exact_join_bench.py --sizes 200000,1000000`` gives the figures
of docs/leakage.md (1,000,000 rows needs about 5 GB).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leakage_bench import THRESHOLD, corpus

from casework.leakage import exact_join, sets_of
from casework.leakage import join as _join
from casework.leakage.join import exact_join_mb


def run(n: int) -> None:
    """Print the estimate and both filters' figures at ``n`` rows."""
    sets = sets_of(corpus(n), k=3).sets
    values, offsets = _join._ranked_rows(sets)
    _, _, tok = _join._prefix_postings(values, offsets, THRESHOLD)
    counts = np.unique(tok, return_counts=True)[1].astype(np.float64)
    sizes = np.diff(offsets)
    longer = np.minimum(sizes, sizes - np.ceil(THRESHOLD * sizes - 1e-9).astype(np.int64) + 2)
    bound = (counts * (counts - 1) / 2).sum()
    keys = (longer * (longer - 1) / 2).sum()
    chosen = _join._choose(values, offsets, THRESHOLD)
    print(
        f"{n:,} rows: one-shingle bound {bound:,.0f}, two-shingle keys {keys:,.0f}, chosen {chosen}"
    )
    found = {}
    for tokens in (1, 2):
        start = time.perf_counter()
        left, _ = _join._candidate_pairs(values, offsets, THRESHOLD, None, tokens)
        generation = time.perf_counter() - start
        start = time.perf_counter()
        pairs = exact_join(sets, THRESHOLD, prefix_tokens=tokens)
        whole = time.perf_counter() - start
        found[tokens] = pairs.as_set()
        print(
            f"  {tokens} shingle(s): {len(left):,} candidates in {generation:.2f} s; "
            f"exact_join {whole:.2f} s, {len(pairs):,} pairs"
        )
    assert found[1] == found[2], "the two filters found different pairs"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(
        f"  same pairs; peak memory so far {peak:.2f} GB; the scan's estimate "
        f"(exact_join_mb, above [leakage] memory_mb it hands over to LSH) "
        f"{exact_join_mb(n) / 1024:.2f} GB"
    )


def main() -> None:
    """Run the sizes asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000")
    for n in [int(s) for s in parser.parse_args().sizes.split(",") if s]:
        run(n)


if __name__ == "__main__":
    main()

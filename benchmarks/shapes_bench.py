"""Failure shapes at scale: `build_shapes` on 100,000 planted traces against TF-IDF + k-means.

Traces come from ``examples/refunds/traces-gen/generate.py`` (week 1: 15 planted shapes, one-off
failures, successful traffic; one file per 10,000 traces). In fresh child processes, each timed
(wall and CPU) with its peak RSS (its own, and its largest forked worker's):

- ``ours``: :func:`casework.shapes.build_shapes` with the default (offline TF-IDF + SVD)
  embedder: read, scrub, embed, cluster (agglomerative, sampled above 4,000), name, save;
- ``peer``: the obvious pipeline on the same scrubbed failing texts: scikit-learn TF-IDF and
  k-means with k = the planted number of shapes (given the answer ours has to find).

Both are scored with the adjusted Rand index against the planted labels (every conversation
in no shape is a label of its own). A second, smaller table compares the clustering choice on
the same embedding of one week of 3,000 traces: agglomerative with a distance threshold against
HDBSCAN. ``python benchmarks/shapes_bench.py`` runs 100,000 traces; ``--n`` another size;
``--docs`` rewrites this benchmark's section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
GENERATOR = ROOT / "examples" / "refunds" / "traces-gen" / "generate.py"
KEY = "shapes-bench-key-not-secret-000000000"
CONFIG = """name = "shapes-bench"

[privacy.id_patterns]
order = '\\bORD-\\d{6}\\b'
customer = '\\bCUS-\\d{5}\\b'
"""
PER_FILE = 10_000


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("shapes_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["shapes_generate"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def make_project(folder: Path, n: int, seed: int) -> None:
    """A project with ``n`` week-1 traces under traces/ and their truth in truth.tsv."""
    (folder / "traces").mkdir(parents=True)
    (folder / "casework.toml").write_text(CONFIG, encoding="utf-8")
    gen = _generator()
    truth: list[str] = []
    for part, start in enumerate(range(0, n, PER_FILE)):
        lines, labels = gen.generate(seed + part, 1, min(PER_FILE, n - start))
        path = folder / "traces" / f"part{part:03d}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        truth += [f"{t['session']}\t{t['shape']}" for t in labels]
    (folder / "truth.tsv").write_text("\n".join(truth) + "\n", encoding="utf-8")


def _truth(folder: Path) -> dict[str, str]:
    """Planted shape by draft case id."""
    from casework.privacy import load_key, scrubber_for
    from casework.project import load_project

    project = load_project(folder)
    ctx = scrubber_for(project, load_key(project, {"CASEWORK_PSEUDONYM_KEY": KEY})).conversation()
    out = {}
    for line in (folder / "truth.tsv").read_text(encoding="utf-8").splitlines():
        session, shape = line.split("\t")
        out[f"mined-{ctx.identifier('session', session).partition('_')[2]}"] = shape
    return out


def _ari(truth: dict[str, str], case_ids: list[str], found: list[str]) -> float:
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score([truth[c] for c in case_ids], found))


def child_ours(folder: Path) -> dict[str, Any]:
    """Build shapes; time, shapes found, ARI."""
    from casework.project import load_project
    from casework.shapes import BuildOptions, build_shapes

    project = load_project(folder)
    start, cpu = time.perf_counter(), time.process_time()
    build = build_shapes(
        project, [folder / "traces"], "bench", BuildOptions(environ={"CASEWORK_PSEUDONYM_KEY": KEY})
    )
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    truth = _truth(folder)
    found = {m: s.id for s in build.shapes for m in s.members}
    failing = [c for c, s in truth.items() if s != "success"]
    return {
        "seconds": seconds,
        "cpu": cpu_s,
        "failing": build.failing,
        "shapes": len(build.shapes),
        "singletons": build.saturation.singletons,
        "ari": _ari(truth, failing, [found.get(c, f"alone-{c}") for c in failing]),
    }


def child_peer(folder: Path, k: int) -> dict[str, Any]:
    """The same reading and scrubbing, then TF-IDF and k-means with the planted k."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    from casework.project import load_project
    from casework.shapes import read_failing

    project = load_project(folder)
    start, cpu = time.perf_counter(), time.process_time()
    failing = read_failing(project, [folder / "traces"], environ={"CASEWORK_PSEUDONYM_KEY": KEY})
    x = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(failing.texts)
    labels = KMeans(n_clusters=k, n_init=3, random_state=0).fit_predict(x)
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    truth = _truth(folder)
    return {
        "seconds": seconds,
        "cpu": cpu_s,
        "failing": len(failing.texts),
        "shapes": k,
        "singletons": 0,
        "ari": _ari(truth, failing.case_ids, [str(v) for v in labels]),
    }


def child_choice(folder: Path) -> dict[str, Any]:
    """Agglomerative (threshold) against HDBSCAN on one embedding of the same conversations."""
    import numpy as np
    from sklearn.cluster import HDBSCAN

    from casework.llm import TfidfEmbedder
    from casework.project import load_project
    from casework.shapes import ClusterParams, cluster, read_failing

    project = load_project(folder)
    failing = read_failing(project, [folder / "traces"], environ={"CASEWORK_PSEUDONYM_KEY": KEY})
    x = TfidfEmbedder().embed(failing.texts)
    truth = _truth(folder)
    planted = [truth[c] for c in failing.case_ids]
    tails = sum(1 for p in planted if p.startswith("tail-"))
    rows: dict[str, Any] = {"failing": len(planted), "tails": tails}
    for name, run in (
        ("agglomerative", lambda: cluster(x, ClusterParams())),
        ("hdbscan", lambda: HDBSCAN(min_cluster_size=5, metric="euclidean").fit_predict(x)),
    ):
        start = time.process_time()
        labels = np.asarray(run())
        cpu = time.process_time() - start
        sizes = np.bincount(labels[labels >= 0]) if (labels >= 0).any() else np.zeros(0)
        alone = labels < 0
        found = [f"alone-{i}" if alone[i] else str(v) for i, v in enumerate(labels)]
        from sklearn.metrics import adjusted_rand_score

        rows[name] = {
            "cpu": cpu,
            "ari": float(adjusted_rand_score(planted, found)),
            "clusters": int((sizes >= 5).sum()),
            "noise_or_singletons": int(alone.sum() + (sizes == 1).sum()),
        }
    return rows


def run_child(kind: str, folder: Path, *extra: str) -> dict[str, Any]:
    """Run ``kind`` in a fresh process; its result plus peak RSS (its own and its workers')."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CASEWORK_PSEUDONYM_KEY": KEY}
    argv = [sys.executable, __file__, "--child", kind, str(folder), *extra]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"{kind} failed: {err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def _peaks() -> dict[str, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rss_mb": own,
        "worker_rss_mb": children.ru_maxrss / 1024,
        "worker_cpu": children.ru_utime + children.ru_stime,
    }


def report(
    n: int, ours: dict[str, Any], peer: dict[str, Any], choice: dict[str, Any], load: float
) -> str:
    """The docs section."""

    def row(name: str, r: dict[str, Any]) -> str:
        return (
            f"| {name} | {r['seconds']:.1f} | {r['cpu'] + r['worker_cpu']:.1f} | {r['rss_mb']:.0f} "
            f"(workers ≤ {r['worker_rss_mb']:.0f}) | {r['shapes']} | {r['ari']:.3f} |"
        )

    a, h = choice["agglomerative"], choice["hdbscan"]
    return f"""## Failure shapes: build on {n:,} traces vs TF-IDF + k-means

`python benchmarks/shapes_bench.py --docs` — {datetime.now(UTC).date()}, CPython {platform.python_version()}, {os.cpu_count()} cores, load average {load:.2f} at start (other jobs share the cores).
Traces: `examples/refunds/traces-gen/generate.py` week 1 (15 planted shapes, one-off failures, 60% successful traffic), {ours["failing"]:,} failing conversations.

| pipeline | wall s | CPU s (main + workers) | peak RSS MB | shapes | ARI vs planted |
| --- | ---: | ---: | ---: | ---: | ---: |
{row("casework shapes build (TF-IDF + SVD, agglomerative, k found)", ours)}
{row(f"peer: TF-IDF + k-means, k = {peer['shapes']} given", peer)}

Both read and scrub the traces the same way (`read_failing`, forked workers, one per core); the
CPU column adds the workers' CPU to the main process's. On a shared machine the wall time is
mostly waiting for a core: compare CPU seconds with the 2 cores × wall seconds available. Peak RSS is the main
process's; each forked worker's peak is given beside it (they run at the same time, so the total
is at most main + 2 × worker). Target: under 2 minutes and 4 GB.

The clustering choice, on one embedding of {choice["failing"]:,} failing conversations (3,000 traces, {choice["tails"]} one-off failures):

| clustering | CPU s | clusters (≥ 5) | noise or singletons | ARI |
| --- | ---: | ---: | ---: | ---: |
| agglomerative, average linkage, cosine, threshold 0.9 | {a["cpu"]:.2f} | {a["clusters"]} | {a["noise_or_singletons"]} | {a["ari"]:.3f} |
| HDBSCAN, min_cluster_size 5 (sklearn) | {h["cpu"]:.2f} | {h["clusters"]} | {h["noise_or_singletons"]} | {h["ari"]:.3f} |
"""


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--docs", action="store_true", help="Rewrite the docs section.")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, folder = args.child[0], Path(args.child[1])
        if kind == "ours":
            result = child_ours(folder)
        elif kind == "peer":
            result = child_peer(folder, int(args.child[2]))
        else:
            result = child_choice(folder)
        print(json.dumps({**result, **_peaks()}))
        return
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="shapes-bench-") as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        print(f"generating {args.n:,} traces ...", flush=True)
        make_project(big, args.n, args.seed)
        make_project(small, 3000, args.seed + 1000)
        ours = run_child("ours", big)
        print("ours", ours, flush=True)
        peer = run_child("peer", big, "15")
        print("peer", peer, flush=True)
        choice = run_child("choice", small)
        print("choice", choice, flush=True)
    body = report(args.n, ours, peer, choice, load)
    print(body)
    if args.docs:
        from docs_section import write_bench_section

        write_bench_section("shapes", body)


if __name__ == "__main__":
    main()

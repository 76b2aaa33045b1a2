"""Failure shapes at scale: `build_shapes` on 100,000 to 1,000,000 planted traces vs k-means.

Traces come from ``examples/refunds/traces-gen/generate.py`` (week 1: 15 planted shapes, one-off
failures, successful traffic), generated once, 10,000 traces a file, into ``build/shapes-bench/``
(each file written as soon as it is generated). In fresh child processes, each timed (wall and
CPU) with its peak RSS (its own, and its largest forked worker's):

- ``ours``: :func:`casework.shapes.build_shapes` with the default (offline TF-IDF + SVD)
  embedder: read, scrub, embed, cluster (agglomerative), name, save; above ``[shapes]
  sample_size`` fitted on a seeded sample, the rest assigned in streaming batches
  (``--engine ray``: on Ray Data);
- ``peer``: the obvious pipeline on the same scrubbed failing texts: scikit-learn TF-IDF and
  mini-batch k-means with k = the planted number of shapes (given the answer ours has to find).

Each is scored in another child with the adjusted Rand index against the planted labels of every
failing conversation (one in no shape is a label of its own). A second, smaller table compares
the clustering choice on one embedding of 3,000 traces: agglomerative with a distance threshold
against HDBSCAN. ``python benchmarks/shapes_bench.py --n 100000 200000 1000000`` runs those
sizes (results kept in ``build/shapes-bench/results.json``, so sizes can be run one at a time);
``--only ours|peer`` one pipeline; ``--docs`` rewrites this benchmark's section of
docs/benchmarks.md from every stored result.
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
CACHE = ROOT / "build" / "shapes-bench"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("shapes_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["shapes_generate"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _write_part(seed: int, part: int, n: int) -> None:
    """One cached part: ``n`` week-1 traces of seed ``seed + part`` and their truth, atomically."""
    folder = CACHE / f"seed{seed}"
    lines, labels = _generator().generate(seed + part, 1, n)
    for name, text in (
        (f"part{part:03d}.truth.tsv", "".join(f"{t['session']}\t{t['shape']}\n" for t in labels)),
        (f"part{part:03d}.jsonl", "\n".join(lines) + "\n"),
    ):
        tmp = folder / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(folder / name)


def cached_parts(n: int, seed: int, workers: int = 2) -> list[Path]:
    """The trace files of ``n`` traces (10,000 a file), generated once under build/ and kept.

    Each part is written as soon as it is generated (a process per core), so a million traces
    never sit in memory; the 100,000-trace set is the first ten parts of the million.
    """
    from concurrent.futures import ProcessPoolExecutor

    folder = CACHE / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    sizes = [min(PER_FILE, n - start) for start in range(0, n, PER_FILE)]
    paths = [folder / f"part{i:03d}.jsonl" for i in range(len(sizes))]
    todo = [i for i, size in enumerate(sizes) if size != PER_FILE or not paths[i].exists()]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_write_part, [seed] * len(todo), todo, [sizes[i] for i in todo]))
    return paths


def make_project(folder: Path, n: int, seed: int) -> None:
    """A project with ``n`` week-1 traces under traces/ (hard links to the cached parts)."""
    (folder / "traces").mkdir(parents=True)
    (folder / "casework.toml").write_text(CONFIG, encoding="utf-8")
    for path in cached_parts(n, seed):
        os.link(path, folder / "traces" / path.name)
        truth = path.with_name(path.name.removesuffix(".jsonl") + ".truth.tsv")
        os.link(truth, folder / truth.name)


def _truth(folder: Path) -> dict[str, str]:
    """Planted shape by draft case id."""
    from casework.privacy import load_key, scrubber_for
    from casework.project import load_project

    project = load_project(folder)
    ctx = scrubber_for(project, load_key(project, {"CASEWORK_PSEUDONYM_KEY": KEY})).conversation()
    out = {}
    lines = (
        line
        for path in sorted(folder.glob("*.truth.tsv"))
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    for line in lines:
        session, shape = line.split("\t")
        out[f"mined-{ctx.identifier('session', session).partition('_')[2]}"] = shape
    return out


def _ari(truth: dict[str, str], case_ids: list[str], found: list[str]) -> float:
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score([truth[c] for c in case_ids], found))


def child_ours(folder: Path, engine: str) -> dict[str, Any]:
    """Build shapes (sampled above `[shapes] sample_size`); time, shapes found, sampling."""
    from casework.project import load_project
    from casework.shapes import BuildOptions, build_shapes

    project = load_project(folder)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    build = build_shapes(
        project,
        [folder / "traces"],
        "bench",
        BuildOptions(environ={"CASEWORK_PSEUDONYM_KEY": KEY}, engine=engine),  # type: ignore[arg-type]
    )
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    sampling = build.sampling
    return {
        "seconds": seconds,
        "cpu": cpu_s,
        "load": load,
        "conversations": build.conversations,
        "failing": build.failing,
        "shapes": len(build.shapes),
        "singletons": build.saturation.singletons,
        "sampling": None if sampling is None else sampling.__dict__,
    }


def child_score(folder: Path, name: str) -> dict[str, Any]:
    """ARI of a saved shape set (or a peer's labels file) against the planted shapes, all of them."""
    truth = _truth(folder)
    failing = [c for c, s in truth.items() if s != "success"]
    if name == "bench":
        from casework.project import load_project
        from casework.shapes import load_shapes

        shapes = load_shapes(load_project(folder), name).shapes
        found = {m: s.id for s in shapes for m in s.members}
    else:
        rows = (folder / name).read_text(encoding="utf-8").splitlines()
        found = dict(line.split("\t") for line in rows)
    return {"ari": _ari(truth, failing, [found.get(c, f"alone-{c}") for c in failing])}


def child_peer(folder: Path, k: int) -> dict[str, Any]:
    """The same reading and scrubbing, then TF-IDF and mini-batch k-means with the planted k.

    The peer keeps only each failing conversation's id and text (what it clusters) and writes
    its labels to `peer.tsv` for scoring.
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    from casework.project import load_project
    from casework.shapes._traffic import open_traffic

    project = load_project(folder)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    traffic = open_traffic(project, [folder / "traces"], environ={"CASEWORK_PSEUDONYM_KEY": KEY})
    case_ids: list[str] = []
    texts: list[str] = []
    for part, _ in traffic.parts():
        case_ids += part.case_ids
        texts += part.texts
    x = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(texts)
    model = MiniBatchKMeans(n_clusters=k, n_init=3, batch_size=4096, random_state=0)
    labels = model.fit_predict(x)
    seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    (folder / "peer.tsv").write_text(
        "".join(f"{c}\t{v}\n" for c, v in zip(case_ids, labels, strict=True)), encoding="utf-8"
    )
    return {
        "seconds": seconds,
        "cpu": cpu_s,
        "load": load,
        "failing": len(texts),
        "shapes": k,
        "singletons": 0,
        "sampling": None,
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
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _peaks() -> dict[str, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rss_mb": own,
        "worker_rss_mb": children.ru_maxrss / 1024,
        "worker_cpu": children.ru_utime + children.ru_stime,
    }


def _row(n: int, name: str, r: dict[str, Any]) -> str:
    sampled = r.get("sampling")
    how = (
        f"{sampled['fitted']:,} / {sampled['assigned']:,} / {sampled['unassigned']:,}"
        if sampled
        else "all at once"
    )
    return (
        f"| {n:,} | {r['failing']:,} | {name} | {r['seconds']:.0f} | "
        f"{r['cpu'] + r['worker_cpu']:.0f} | {r['rss_mb']:.0f} (workers ≤ {r['worker_rss_mb']:.0f})"
        f"{' †' if r.get('peaks_polled') else ''}"
        f" | {r['load']:.1f} | {r['shapes']} | {how} | {r['ari']:.3f} |"
    )


def report(results: dict[str, dict[str, Any]], choice: dict[str, Any]) -> str:
    """The docs section, from every stored result (ordered by size)."""
    rows = []
    for key in sorted(results, key=lambda k: (int(k.split(":")[1]), k)):
        kind, n, engine = key.split(":")
        r = results[key]
        name = (
            f"casework shapes build (--engine {engine})"
            if kind == "ours"
            else f"peer: TF-IDF + MiniBatchKMeans, k = {r['shapes']} given"
        )
        rows.append(_row(int(n), name, r))
    a, h = choice["agglomerative"], choice["hdbscan"]
    table = "\n".join(rows)
    return f"""## Failure shapes: build at 100,000 to 1,000,000 traces vs TF-IDF + mini-batch k-means

`python benchmarks/shapes_bench.py --n 100000 200000 1000000 --docs` — {datetime.now(UTC).date()}, CPython {platform.python_version()}, {os.cpu_count()} cores, {_memory_gb()} GB RAM; load average at each run's start in its row (other jobs share the cores).
Traces: `examples/refunds/traces-gen/generate.py` week 1 (15 planted shapes, one-off failures, 60% successful traffic), 10,000 traces a file, generated once into `build/shapes-bench/` (the 100,000 set is the first ten files of the million).

| traces | failing | pipeline | wall s | CPU s (main + workers) | peak RSS MB | load | shapes | fitted / assigned / unassigned | ARI vs planted (all failing) |
| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{table}

Above `[shapes] sample_size` (50,000 failing conversations) casework fits TF-IDF + SVD and the
clustering on a seeded sample and assigns the others in batches of `[shapes] batch_size` (2,000)
to the nearest shape within 1.1 × its sample radius; the sample and one batch are in memory, the
waiting conversations in an anonymous temporary file. The ARI is over every failing conversation
of the set (each one in no shape is a label of its own). Both pipelines read and scrub the traces
the same way (forked workers, one per core); the CPU column adds the workers' CPU to the main
process's. The peer keeps every failing text and its TF-IDF matrix in memory and is given the
answer (k = 15) ours has to find. Peak RSS is the main process's; each forked worker's peak is
given beside it (they run at the same time, so the total is at most main + 2 × worker). On a
shared machine the wall time is mostly waiting for a core: compare CPU seconds with the 2 cores
× wall seconds available.
{_POLLED if any(r.get("peaks_polled") for r in results.values()) else ""}
The clustering choice, on one embedding of {choice["failing"]:,} failing conversations (3,000 traces, {choice["tails"]} one-off failures):

| clustering | CPU s | clusters (≥ 5) | noise or singletons | ARI |
| --- | ---: | ---: | ---: | ---: |
| agglomerative, average linkage, cosine, threshold 0.9 | {a["cpu"]:.2f} | {a["clusters"]} | {a["noise_or_singletons"]} | {a["ari"]:.3f} |
| HDBSCAN, min_cluster_size 5 (sklearn) | {h["cpu"]:.2f} | {h["clusters"]} | {h["noise_or_singletons"]} | {h["ari"]:.3f} |
"""


_POLLED = """
† Peaks read from `/proc` (`VmHWM`, and the workers' `utime + stime`) every 5 s during the run:
that run's stored peaks were the scoring child's (fixed since), its main CPU is its own.
"""


def _memory_gb() -> int:
    return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)


RESULTS = CACHE / "results.json"


def _stored() -> dict[str, dict[str, Any]]:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}


def _store(key: str, result: dict[str, Any]) -> None:
    results = _stored()
    results[key] = result
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def measure(n: int, seed: int, kind: str, engine: str) -> dict[str, Any]:
    """One pipeline on ``n`` traces in fresh child processes (build, then score), stored."""
    with tempfile.TemporaryDirectory(prefix="shapes-bench-", dir=CACHE) as tmp:
        folder = Path(tmp) / "proj"
        make_project(folder, n, seed)
        if kind == "ours":
            result = run_child("ours", folder, engine)
            scored = run_child("score", folder, "bench")
        else:
            result = run_child("peer", folder, "15")
            scored = run_child("score", folder, "peer.tsv")
    # Only the score: the scoring child's own peaks are not the pipeline's.
    result["ari"] = scored["ari"]
    _store(f"{kind}:{n}:{engine}", result)
    return result


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--engine", choices=("local", "ray"), default="local")
    parser.add_argument(
        "--peer-up-to", type=int, default=1_000_000, help="Run the peer up to this many traces."
    )
    parser.add_argument("--only", choices=("ours", "peer"), help="Run one pipeline only.")
    parser.add_argument("--docs", action="store_true", help="Rewrite the docs section.")
    parser.add_argument(
        "--report", action="store_true", help="Run no size: report the stored results only."
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, folder = args.child[0], Path(args.child[1])
        if kind == "ours":
            result = child_ours(folder, args.child[2])
        elif kind == "score":
            result = child_score(folder, args.child[2])
        elif kind == "peer":
            result = child_peer(folder, int(args.child[2]))
        else:
            result = child_choice(folder)
        print(json.dumps({**result, **_peaks()}))
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    for n in [] if args.report else args.n:
        print(f"{n:,} traces (cached under {CACHE}) ...", flush=True)
        if args.only in (None, "ours"):
            print("ours", measure(n, args.seed, "ours", args.engine), flush=True)
        if args.only in (None, "peer") and n <= args.peer_up_to:
            print("peer", measure(n, args.seed, "peer", "local"), flush=True)
    with tempfile.TemporaryDirectory(prefix="shapes-bench-") as tmp:
        small = Path(tmp) / "small"
        (small / "traces").mkdir(parents=True)
        (small / "casework.toml").write_text(CONFIG, encoding="utf-8")
        lines, labels = _generator().generate(args.seed + 1000, 1, 3000)
        (small / "traces" / "part.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (small / "part.truth.tsv").write_text(
            "".join(f"{t['session']}\t{t['shape']}\n" for t in labels), encoding="utf-8"
        )
        choice = run_child("choice", small)
    body = report(_stored(), choice)
    print(body)
    if args.docs:
        from docs_section import write_bench_section

        write_bench_section("shapes", body)


if __name__ == "__main__":
    main()

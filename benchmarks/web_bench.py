"""Web app latency: queue page and label submit p50/p95 under concurrent labellers, live server.

Each backend gets a fresh project (one calibrating slice of ``--cases`` drafts, two labellers per
case) and a real `casework serve` in its own process on a free loopback port; ``--labellers``
threads (httpx) sign in with one-time links and label their whole queues at once. No peer
labelling tool is measured (none is installed here); the floor in the same run is a bare GET of
a static file from the same server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sqlalchemy import create_engine, make_url, text  # noqa: E402
from tests.web.crowd import Tally, crowd_project, label_all  # noqa: E402
from tests.web.live import free_port  # noqa: E402

from casework.labelling import assign_labels  # noqa: E402
from casework.project import load_project  # noqa: E402
from casework.web import add_user  # noqa: E402
from casework.workbench import open_workbench  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _serve(project_dir: Path, url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CASEWORK_DB_URL": url, "PYTHONPATH": str(ROOT / "src")}
    code = "from casework.cli import main; main()"
    args = [sys.executable, "-c", code, "serve", "--port", str(port), "--workers", str(workers)]
    return subprocess.Popen(args, cwd=project_dir, env=env, stdout=subprocess.DEVNULL)


def _wait(base: str) -> None:
    for _ in range(300):
        try:
            httpx.get(f"{base}/", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def run(backend: str, url: str, args: argparse.Namespace, work: Path) -> dict[str, float]:
    os.environ["CASEWORK_DB_URL"] = url
    project = load_project(crowd_project(work / backend, args.cases))
    names = [f"lab-{i:02d}" for i in range(args.labellers)]
    assign_labels(project, "refunds", names)
    with open_workbench(project) as wb:
        links = [add_user(wb, name, ["labeller"]) for name in names]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = _serve(project.root, url, port, args.workers)
    try:
        _wait(base)
        floor = []
        with httpx.Client(base_url=base) as client:
            for _ in range(200):
                start = time.perf_counter()
                client.get("/static/app.css")
                floor.append(time.perf_counter() - start)
        tally = Tally()
        start = time.perf_counter()
        threads = [
            threading.Thread(target=label_all, args=(base, f"{base}/signin/{link}", tally))
            for link in links
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)
    if tally.errors or tally.stored != 2 * args.cases:
        raise RuntimeError(f"{backend}: {tally.stored} stored, {tally.refused}, {tally.errors}")
    return {
        "page_p50": pct(tally.page_times, 0.5),
        "page_p95": pct(tally.page_times, 0.95),
        "submit_p50": pct(tally.submit_times, 0.5),
        "submit_p95": pct(tally.submit_times, 0.95),
        "floor_p50": statistics.median(floor) * 1000,
        "labels_per_s": tally.stored / wall,
        "pages": len(tally.page_times),
        "submits": len(tally.submit_times),
    }


def _pg_database(admin_url: str) -> str:
    name = f"cw_webbench_{uuid.uuid4().hex[:10]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def _drop(admin_url: str, url: str) -> None:
    name = make_url(url).database
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def table(results: dict[str, dict[str, float]], args: argparse.Namespace) -> str:
    lines = [
        "| backend | queue page p50 / p95 (ms) | submit p50 / p95 (ms) | labels/s | static-file floor p50 (ms) | target p95 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for backend, r in results.items():
        ok = "met" if max(r["page_p95"], r["submit_p95"]) < 100 else "**missed**"
        lines.append(
            f"| {backend} | {r['page_p50']:.0f} / {r['page_p95']:.0f} | "
            f"{r['submit_p50']:.0f} / {r['submit_p95']:.0f} | {r['labels_per_s']:.1f} | "
            f"{r['floor_p50']:.1f} | < 100 ms: {ok} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--labellers", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pg-url", default=os.environ.get("CASEWORK_TEST_PG_URL", ""))
    parser.add_argument("--out", type=Path, help="docs page whose section to rewrite")
    args = parser.parse_args()
    args.load = os.getloadavg()[0]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="casework-web-bench-") as tmp:
        work = Path(tmp)
        results["SQLite"] = run("sqlite", f"sqlite:///{work / 'wb.db'}", args, work)
        if args.pg_url:
            url = _pg_database(args.pg_url)
            try:
                results["PostgreSQL"] = run("postgresql", url, args, work)
            finally:
                _drop(args.pg_url, url)
    text_table = table(results, args)
    print(text_table)
    if args.out is not None:
        from docs_section import write_bench_section

        write_bench_section("web", _section(text_table, args, results), args.out)
        print(f"wrote the web section of {args.out}")


def _section(
    text_table: str, args: argparse.Namespace, results: dict[str, dict[str, float]]
) -> str:
    pg = (
        ""
        if "PostgreSQL" in results
        else " PostgreSQL was not measured in this run (no `--pg-url`)."
    )
    return f"""## Web app: labeller queue and submit latency

`python benchmarks/web_bench.py --cases {args.cases} --labellers {args.labellers} --workers {args.workers} --out docs/benchmarks.md`.
{args.labellers} labellers (threads, httpx, keep-alive) sign in with one-time links and label
their whole queues at once against a real `casework serve --workers {args.workers}` on a free
loopback port: {2 * args.cases} labels over {args.cases} cases of one calibrating slice. "Queue
page" is `GET /label`; "submit" is the htmx `POST` that stores a label and returns the next case.
Every request reloads the dataset's labelling state (its files and workbench rows), as the CLI
does. No peer labelling tool (Label Studio, Argilla) was measured: none is installed on this
machine. The floor is a GET of a static file from the same server, unloaded.{pg}
Load average when the run started: {args.load:.1f} on 2 cores (other work shared the machine).

{text_table}
"""


if __name__ == "__main__":
    main()

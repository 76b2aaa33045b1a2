"""Tool environments on a shared state vs the same workload with the state embedded per case.

A τ²-like airline environment (``examples/bookings/env/bookings.py``) over a ~5 MB state (tens of
thousands of flights, thousands of users); each case asks to book seats on one route, its golden
actions book the cheapest flight; a scripted agent searches, prices and books. Variants, each in
its own process (so peak RSS is its own):

- ``shared``: one ``state_ref`` file, the environment serves the tools, the log keeps state diffs;
- ``embedded-env``: the same state inlined in every case (``situation.state``), same environment;
- ``embedded-fixtures``: the state inlined, static fixtures with JSON Patch effects instead of an
  environment (how the workload was written before environments): the log keeps final states.

The embedded variants inline 5 MB per case, so they run at ``--embedded-cases`` (default 20)
and the shared one at both sizes. Writes the figures into docs/benchmarks.md between
``<!-- bench:env -->`` markers.

Usage: ``python benchmarks/env_bench.py [--cases 200] [--k 4] [--state-mb 5] [--embedded-cases 20]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bookings"
AIRPORTS = [
    a + b + c
    for a, b, c in zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZABCD",
        "KLMNOPQRSTUVWXYZABCDEFGHIJKLMN",
        "XYZXYZXYZXYZXYZXYZXYZXYZXYZXYZ",
        strict=True,
    )
]
DATES = [f"2026-12-{d:02d}" for d in range(1, 29)]


def uid(i: int) -> str:
    """User ids in letters, as the agent reads them (`u-aab`)."""
    return "u-" + "".join("abcdefghijklmnopqrstuvwxyz"[(i // 26**p) % 26] for p in (2, 1, 0))


def make_state(mb: float) -> dict[str, Any]:
    """Flights on every route and date until the JSON is about ``mb`` megabytes, and users."""
    flights: dict[str, Any] = {}
    users = {
        uid(i): {
            "name": f"User {i}",
            "membership": "gold" if i % 3 else "basic",
            "balance": 5000.0,
        }
        for i in range(2000)
    }
    size, n = len(json.dumps(users)), 0
    while size < mb * 1_000_000:
        o, d = AIRPORTS[n % 30], AIRPORTS[(n // 30 + 1 + n % 29) % 30]
        if o == d:
            d = AIRPORTS[(n + 1) % 30]
        row = {
            "origin": o,
            "destination": d,
            "date": DATES[(n // 870) % 28],
            "fare": 80.0 + (n * 37) % 400,
            "seats_left": 1 + n % 9,
        }
        flights[f"FL-{n:06d}"] = row
        size += len(json.dumps(row)) + 14
        n += 1
    return {"flights": flights, "users": users, "bookings": {}, "next_booking": 1}


def _request(state: dict[str, Any], i: int) -> tuple[str, dict[str, Any]]:
    """The i-th case's flight: the cheapest one of a route/date with seats (its golden booking)."""
    fid = sorted(state["flights"])[(i * 7919) % len(state["flights"])]
    f = state["flights"][fid]
    same = [
        (g["fare"], k)
        for k, g in state["flights"].items()
        if (g["origin"], g["destination"], g["date"]) == (f["origin"], f["destination"], f["date"])
        and g["seats_left"] > 0
    ]
    return min(same)[1], f


def make_cases(state: dict[str, Any], cases: int, variant: str, sha: str) -> list[dict[str, Any]]:
    out = []
    for i in range(cases):
        fid, f = _request(state, i)
        user = uid(i % 2000)
        text = f"Please book 1 seat from {f['origin']} to {f['destination']} on {f['date']} (user {user})."
        case: dict[str, Any] = {
            "id": f"c-{i:04d}",
            "slice": "bookings",
            "split": "dev",
            "source": "hand",
            "situation": {"goal": "book", "turns": [{"role": "user", "content": text}]},
            "label": {"outcome": "resolve", "required_tools": ["create_booking"]},
        }
        book = {"user_id": user, "flight_id": fid, "passengers": 1}
        if variant == "shared":
            case["situation"]["state_ref"] = {"path": "states/airline.json", "sha256": sha}
        else:
            case["situation"]["state"] = state
        if variant == "embedded-fixtures":
            case["situation"]["fixtures"] = _fixtures(state, f, fid, user)
            case["oracle"] = {
                "class": "state_assertion",
                "assertions": [{"expr": 'bookings."BK-0001".flight_id', "value": fid}],
            }
        else:
            case["oracle"] = {
                "class": "state_assertion",
                "golden_actions": [{"name": "create_booking", "arguments": book}],
            }
        out.append(case)
    return out


def _fixtures(
    state: dict[str, Any], f: dict[str, Any], fid: str, user: str
) -> list[dict[str, Any]]:
    rate = 0.9 if state["users"][user]["membership"] == "gold" else 1.0
    found = sorted(
        (
            {"flight_id": k, **g}
            for k, g in state["flights"].items()
            if (g["origin"], g["destination"], g["date"])
            == (f["origin"], f["destination"], f["date"])
            and g["seats_left"] > 0
        ),
        key=lambda g: (g["fare"], g["flight_id"]),
    )
    total = round(state["flights"][fid]["fare"] * rate, 2)
    booking = {
        "user_id": user,
        "flight_id": fid,
        "passengers": 1,
        "total": total,
        "status": "confirmed",
    }
    return [
        {"tool": "search_flights", "response": found},
        {"tool": "price_booking", "response": total},
        {"tool": "get_user", "response": {"user_id": user, **state["users"][user]}},
        {
            "tool": "create_booking",
            "response": {"booking_id": "BK-0001", **booking},
            "effects": [
                {"op": "add", "path": "/bookings/BK-0001", "value": booking},
                {
                    "op": "replace",
                    "path": f"/flights/{fid}/seats_left",
                    "value": state["flights"][fid]["seats_left"] - 1,
                },
                {
                    "op": "replace",
                    "path": f"/users/{user}/balance",
                    "value": round(state["users"][user]["balance"] - total, 2),
                },
                {"op": "replace", "path": "/next_booking", "value": 2},
            ],
        },
    ]


def build(root: Path, variant: str, cases: int, k: int, mb: float) -> None:
    """A project in ``root`` for one variant."""
    for sub in ("env", "agents"):
        shutil.copytree(EXAMPLE / sub, root / sub)
    state = make_state(mb)
    data = json.dumps(state).encode()
    (root / "states").mkdir()
    (root / "states" / "airline.json").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    config = 'name = "bench"\n[agent]\ntools_from = "env.bookings:declarations"\n'
    if variant != "embedded-fixtures":
        config += '[run]\nenvironment = "env.bookings:BookingsEnv"\n'
    (root / "casework.toml").write_text(config, encoding="utf-8")
    (root / "datasets" / "bench").mkdir(parents=True)
    with (root / "datasets" / "bench" / "cases.jsonl").open("w", encoding="utf-8") as out:
        for case in make_cases(state, cases, variant, sha):
            out.write(json.dumps(case) + "\n")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)


def child(variant: str, cases: int, k: int, mb: float, concurrency: int) -> dict[str, Any]:
    """Run one variant in this process and return its figures."""
    from casework.project import load_project
    from casework.runner import RunRequest, run_agent

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, variant, cases, k, mb)
        os.chdir(root)
        os.environ.pop("CASEWORK_DB_URL", None)
        cases_bytes = (root / "datasets" / "bench" / "cases.jsonl").stat().st_size
        start, cpu = time.perf_counter(), time.process_time()
        summary = run_agent(
            load_project(root),
            RunRequest(
                dataset="bench",
                agent="python:agents.bookings_agent:good",
                k=k,
                concurrency=concurrency,
                use_judge=False,
                store=False,
            ),
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        log_bytes = summary.log.stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "variant": variant,
        "cases": cases,
        "k": k,
        "trials": summary.end.trials,
        "passed": summary.end.passed,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mib": peak,
        "log_bytes": log_bytes,
        "cases_bytes": cases_bytes,
        "state_bytes": len(json.dumps(make_state(mb)).encode()) if variant == "shared" else None,
    }


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['variant']} | {r['cases']} x {r['k']} | {r['passed']}/{r['trials']} | {r['wall_s']:.1f} s | "
        f"{r['cpu_s']:.1f} s | {r['cpu_s'] / r['trials'] * 1000:.0f} ms | {r['peak_rss_mib']:.0f} MiB | {r['cases_bytes'] / 2**20:.1f} MiB | "
        f"{r['log_bytes'] / 2**20:.2f} MiB | {r['log_bytes'] / r['trials'] / 1024:.1f} KiB |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--state-mb", type=float, default=5.0)
    parser.add_argument("--embedded-cases", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-docs", action="store_true", help="print only; do not update docs/benchmarks.md"
    )
    args = parser.parse_args()
    if args.child:
        variant, cases = args.child.split(":")
        print(json.dumps(child(variant, int(cases), args.k, args.state_mb, args.concurrency)))
        return 0
    runs = [
        ("shared", args.cases),
        ("shared", args.embedded_cases),
        ("embedded-env", args.embedded_cases),
        ("embedded-fixtures", args.embedded_cases),
    ]
    results = []
    for variant, cases in runs:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            f"{variant}:{cases}",
            "--k",
            str(args.k),
            "--state-mb",
            str(args.state_mb),
            "--concurrency",
            str(args.concurrency),
        ]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(_row(results[-1]), flush=True)
    state_mib = results[0]["state_bytes"] / 2**20
    fixtures = results[3]
    per_trial = fixtures["log_bytes"] / fixtures["trials"]
    grow = (results[2]["peak_rss_mib"] - results[1]["peak_rss_mib"]) / args.embedded_cases
    report = f"""
## Tool environments on a shared state

Tool environments over a shared state (`benchmarks/env_bench.py`), {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores.
A τ²-like airline environment (`examples/bookings/env/bookings.py`) over a {state_mib:.1f} MiB JSON state
({args.state_mb:g} MB of flights and users); each case books one seat, its golden action books the cheapest
flight; the scripted agent (`examples/bookings/agents/bookings_agent.py:good`) searches, prices, reads the user
and books (4 tool calls); concurrency {args.concurrency}; every trial graded; no workbench (`store=False`). Each
variant runs in its own process (peak RSS is its own). The embedded variants inline {state_mib:.1f} MiB in every
case, so they run at {args.embedded_cases} cases; the shared variant runs at both sizes. Wall and CPU time
cover `run_agent` only (loading, golden replay, trials, grading, the log), not building the project; the
machine is shared, so CPU time (the process's own) is the steadier figure.

| variant | cases x k | passed | wall | CPU | CPU per trial | peak RSS | cases.jsonl | run log | log per trial |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(_row(r) for r in results)}

- `shared`: one `state_ref` file, tools served by the environment, the log keeps each trial's state diff.
- `embedded-env`: the same state inlined as `situation.state` in every case, same environment.
- `embedded-fixtures` (the peer: the workload as written before environments): the state inlined, static
  fixtures with JSON Patch effects; the log keeps every final state. At {args.cases} x {args.k} its log would be
  {per_trial * args.cases * args.k / 2**30:.1f} GiB ({per_trial / 2**20:.1f} MiB per trial times {args.cases * args.k} trials: each line holds a whole final state).
- Peak RSS of `embedded-env` grows by about {grow:.0f} MiB per case over `shared` at the same size
  ({results[2]["peak_rss_mib"]:.0f} vs {results[1]["peak_rss_mib"]:.0f} MiB at {args.embedded_cases} cases): about
  {grow * (args.cases - args.embedded_cases) / 1024:.1f} GiB more at {args.cases} cases (linear estimate), which is why the embedded variants run smaller.
"""
    print(report)
    if not args.no_docs:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from docs_section import write_bench_section

        write_bench_section("env", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

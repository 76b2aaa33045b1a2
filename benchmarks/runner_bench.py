"""Runner overhead: 2,000 cases x k=4 against a simulated agent sleeping 50 ms per turn, concurrency 64.

Compares `casework run` (fixture tools, grading, run log, workbench) with the ideal time
(trials x turns x 50 ms / concurrency) and with a named peer in the same process: a bare
``asyncio.Semaphore`` loop that only sleeps (no tools, grading or storage). Memory is sampled
(current RSS) at every 10% of the trials to show it stays flat. Writes its figures into
docs/benchmarks.md between ``<!-- bench:runner -->`` markers.

Usage: ``python benchmarks/runner_bench.py [--cases 2000] [--k 4] [--concurrency 64] [--turns 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from docs_section import write_bench_section

from casework.project import load_project
from casework.runner import RunRequest, Tools, TrialRecord, run_agent
from casework.schema import AgentInput, Trajectory

SLEEP_S = 0.05
TURNS = 2


async def simulated_agent(request: AgentInput, tools: Tools) -> Trajectory:
    """Each turn: 50 ms of "model latency", then one tool call; the last turn refunds."""
    order = request.turns[-1].content.split()[-1]
    for turn in range(TURNS):
        await asyncio.sleep(SLEEP_S)
        if turn == TURNS - 1:
            tools.call("issue_refund", order_id=order, amount=10)
        else:
            tools.call("get_order", order_id=order)
    return Trajectory(final_reply="refunded", outcome="resolve", agent_version="sim-1")


def _case(i: int) -> dict[str, object]:
    order = f"o{i}"
    return {
        "id": f"c-{i:05d}",
        "slice": f"s{i % 4}",
        "split": "dev",
        "source": "hand",
        "situation": {
            "goal": "refund",
            "turns": [{"role": "user", "content": f"refund order {order}"}],
            "fixtures": [
                {
                    "tool": "get_order",
                    "match": {"order_id": order},
                    "response": {"id": order, "total": 10},
                },
                {
                    "tool": "issue_refund",
                    "match": {"order_id": order},
                    "response": {"ok": True},
                    "effects": [
                        {
                            "op": "add",
                            "path": "/ledger/-",
                            "value": {"order": order, "amount": "${args.amount}"},
                        }
                    ],
                },
            ],
            "state": {"ledger": []},
        },
        "label": {"outcome": "resolve", "required_tools": ["get_order", "issue_refund"]},
        "oracle": {
            "class": "state_assertion",
            "assertions": [{"expr": "length(ledger)", "value": 1}],
        },
    }


def make_project(root: Path, cases: int) -> None:
    (root / "datasets" / "bench").mkdir(parents=True)
    (root / "casework.toml").write_text('name = "bench"\n[agent]\ntools = ""\n', encoding="utf-8")
    lines = "".join(json.dumps(_case(i)) + "\n" for i in range(cases))
    (root / "datasets" / "bench" / "cases.jsonl").write_text(lines, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class Sampler:
    """Samples RSS at every 10% of the trials."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.samples: list[tuple[int, float]] = []
        self.first = self.last = 0.0

    def started(self, total: int, done: int) -> None:
        self.total = total
        self.first = time.perf_counter()
        self.samples.append((0, rss_mib()))

    def trial_done(self, record: TrialRecord) -> None:
        self.done += 1
        self.last = time.perf_counter()
        if self.done % max(1, self.total // 10) == 0:
            self.samples.append((self.done, rss_mib()))


async def bare_peer(trials: int, concurrency: int) -> float:
    """The named peer: asyncio.Semaphore + gather over the same sleeps, nothing else."""
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            for _ in range(TURNS):
                await asyncio.sleep(SLEEP_S)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(trials)))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--no-docs", action="store_true", help="print only; do not update docs/benchmarks.md"
    )
    args = parser.parse_args()
    trials = args.cases * args.k
    ideal = trials * TURNS * SLEEP_S / args.concurrency
    peer = asyncio.run(bare_peer(trials, args.concurrency))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, args.cases)
        os.chdir(root)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        os.environ.pop("CASEWORK_DB_URL", None)
        sampler = Sampler()
        start = time.perf_counter()
        summary = run_agent(
            load_project(root),
            RunRequest(
                dataset="bench",
                agent="python:runner_bench:simulated_agent",
                k=args.k,
                concurrency=args.concurrency,
                use_judge=False,
            ),
            observer=sampler,
        )
        wall = time.perf_counter() - start
        steady = sampler.last - sampler.first
        setup = sampler.first - start
        log_mib = summary.log.stat().st_size / 2**20
    assert summary.end.passed == trials, summary.end
    rss = [mib for _, mib in sampler.samples]
    first_half = rss[1 : len(rss) // 2 + 1] or rss
    report = f"""
Runner overhead (`benchmarks/runner_bench.py`), {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores.
{args.cases:,} cases x k={args.k} = {trials:,} trials, simulated agent sleeping {int(SLEEP_S * 1000)} ms per turn x {TURNS} turns
(one fixture tool call per turn), concurrency {args.concurrency}; every trial graded (tools + state assertion),
logged to `runs/<id>.jsonl` ({log_mib:.1f} MiB) and stored in the SQLite workbench.

| what | wall time | efficiency vs ideal |
| --- | ---: | ---: |
| ideal (trials x turns x 50 ms / concurrency) | {ideal:.2f} s | 100% |
| peer: bare `asyncio.Semaphore` loop, sleeps only | {peer:.2f} s | {ideal / peer:.1%} |
| `casework run` (python adapter), first to last trial | {steady:.2f} s | {ideal / steady:.1%} |
| `casework run` end to end (+ {setup:.2f} s loading {args.cases:,} cases and opening the workbench, + {wall - steady - setup:.2f} s closing) | {wall:.2f} s | {ideal / wall:.1%} |

Memory (current RSS) sampled every 10% of the trials: {", ".join(f"{m:.0f}" for m in rss)} MiB
(first half max {max(first_half):.0f} MiB, end {rss[-1]:.0f} MiB).
"""
    print(report)
    if not args.no_docs:
        write_bench_section("runner", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Runner overhead: 25,000 cases x k=4 (100,000 trials) against a simulated agent sleeping 50 ms per turn.

At each concurrency (64 and 512 by default), compares `casework run` in one process and sharded
across ``--workers`` processes (fixture tools, grading, run log, workbench) with the ideal time
(trials x turns x 50 ms / concurrency) and with a named peer in the same run: a bare
``asyncio.Semaphore`` loop that only sleeps (no tools, grading or storage). Reports CPU seconds
and the load average, since the figures mean little on a shared machine without them. Writes
into docs/benchmarks.md between ``<!-- bench:runner -->`` markers.

The issue's targets are for runs of 100,000 trials and more (at 8,000 trials the bare loop alone
reaches about 93% of ideal at concurrency 512, which leaves a run 0.1 s for loading its cases,
starting its workers and merging). Usage:
``python benchmarks/runner_bench.py [--cases 25000] [--k 4] [--concurrency 64,512] [--workers 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from docs_section import write_bench_section

from casework.project import load_project
from casework.runner import RunRequest, Tools, TrialRecord
from casework.runner.shards import run_sharded
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
    """Samples RSS at every 10% of the trials, and CPU seconds at the first and last trial."""

    def __init__(self, cpu_now: Callable[[], float]) -> None:
        self.total = 0
        self.done = 0
        self.samples: list[tuple[int, float]] = []
        self.first = self.last = 0.0
        self._cpu_now = cpu_now
        self.cpu_first = self.cpu_last = 0.0

    def started(self, total: int, done: int) -> None:
        self.total = total
        self.first = time.perf_counter()
        self.samples.append((0, rss_mib()))

    def trial_done(self, record: TrialRecord) -> None:
        self.trial_passed(record.verdict.passed)

    def trial_passed(self, passed: bool | None) -> None:
        """As the CLI's progress bar: a sharded run's parent then validates no trial line."""
        self.done += 1
        self.last = time.perf_counter()
        if self.done == 1:
            self.cpu_first = self._cpu_now()
        if self.done == self.total:
            self.cpu_last = self._cpu_now()
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


def _cpu_s() -> float:
    """CPU seconds of this process and of its waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Descendants:
    """CPU seconds of the processes below this one that RUSAGE_CHILDREN does not count (yet).

    The runner forks its shard workers from a process without threads (this one), so they are
    children: RUSAGE_CHILDREN counts them once joined, and until then /proc shows their CPU, read
    when asked. Workers started from a fork server (a parent with threads, or no fork) are its
    children, never waited for here: with ``follow``, a thread samples /proc every 0.1 s and keeps
    the last reading of each such process. Not otherwise, as that thread would itself make the
    runner start its workers from the fork server.

    Inactive for a run in one process: a scan of /proc costs milliseconds of this process's CPU
    (on a busy machine), which would be counted against the run it measures.
    """

    def __init__(self, active: bool = True, follow: bool = False) -> None:
        self.active = active
        self.follow = active and follow
        #: Last reading of each process below a child of this one (never waited for here).
        self.deep: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def _sample(self) -> float:
        """Read /proc: keep the processes below children, return the children's CPU now."""
        parent: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(entry)] = int(fields[1])
            cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / self._tick
        me = os.getpid()
        children = 0.0
        for pid in cpu:
            up, hops = parent.get(pid), 0
            while up is not None and up != me and hops < 8:
                up, hops = parent.get(up), hops + 1
            if up != me:
                continue
            if hops == 0:  # not yet joined (alive or a zombie): not in RUSAGE_CHILDREN
                children += cpu[pid]
            else:
                self.deep[pid] = cpu[pid]
        return children

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def now(self) -> float:
        """CPU seconds of every process below this one that RUSAGE_CHILDREN does not count, now."""
        children = self._sample() if self.active else 0.0
        return children + self.cpu_s

    def __enter__(self) -> Descendants:
        if self.follow:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.follow:
            self._thread.join()

    @property
    def cpu_s(self) -> float:
        """CPU seconds of the processes below children (children are counted once joined)."""
        return sum(self.deep.values())


def _children_cpu_s() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def cpu_bound(ideal: float, cpu_s: float, cores: int) -> float:
    """Efficiency the CPU alone allows: trials cannot end faster than their CPU on ``cores``."""
    return ideal / max(ideal, cpu_s / max(1, cores))


def _trial_span(log: Path) -> float:
    """First trial start to last trial end in the run log (agent calls; same for every mode)."""
    first, last = float("inf"), 0.0
    for line in log.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] == "trial":
            start = datetime.fromisoformat(obj["started_at"]).timestamp()
            first = min(first, start)
            last = max(last, start + obj["duration_s"])
    return last - first


def measure(cases: int, k: int, concurrency: int, workers: int) -> dict[str, float]:
    """One `casework run` in a fresh project: wall, trial span, CPU seconds, RSS samples."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, cases)
        os.chdir(root)
        cpu = _cpu_s()
        kids = _children_cpu_s()
        start = time.perf_counter()
        # On Linux the runner forks its workers from this process (it holds no thread).
        forked = sys.platform.startswith("linux")
        with Descendants(active=workers > 1, follow=not forked) as below:
            sampler = Sampler(lambda: _cpu_s() + below.now())
            summary = run_sharded(
                load_project(root),
                RunRequest(
                    dataset="bench",
                    agent="python:runner_bench:simulated_agent",
                    k=k,
                    concurrency=concurrency,
                    use_judge=False,
                ),
                workers=workers,
                observer=sampler,
            )
        wall = time.perf_counter() - start
        trials = cases * k
        assert summary.end.passed == trials, summary.end
        if workers > 1 and forked:  # else their CPU would be missing from the figures
            assert _children_cpu_s() > kids, "the shard workers were not forked from this process"
        return {
            "wall": wall,
            "span": _trial_span(summary.log),
            # Forked workers are joined (RUSAGE_CHILDREN); a fork server's are read from /proc.
            "cpu": _cpu_s() - cpu + below.cpu_s,
            # From the first trial's end to the last's: start-up and merging left out.
            "trial_cpu": (sampler.cpu_last - sampler.cpu_first) * trials / max(1, trials - 1),
            "log_mib": summary.log.stat().st_size / 2**20,
            "rss_end": sampler.samples[-1][1],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument(
        "--concurrency", default="64,512", help="comma-separated concurrencies to measure"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="worker processes of the sharded run (--workers)"
    )
    parser.add_argument(
        "--no-docs", action="store_true", help="print only; do not update docs/benchmarks.md"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.environ.pop("CASEWORK_DB_URL", None)
    trials = args.cases * args.k
    load_before = os.getloadavg()
    rows = []
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        ideal = trials * TURNS * SLEEP_S / concurrency
        cpu = _cpu_s()
        peer = asyncio.run(bare_peer(trials, concurrency))
        peer_cpu = _cpu_s() - cpu
        rows.append(
            (concurrency, "ideal (trials x turns x 50 ms / concurrency)", ideal, ideal, 0.0, 1)
        )
        rows.append(
            (
                concurrency,
                "peer: bare `asyncio.Semaphore` loop, sleeps only",
                peer,
                ideal,
                peer_cpu,
                1,
            )
        )
        for workers in sorted({1, args.workers}):
            got = measure(args.cases, args.k, concurrency, workers)
            what = "`casework run`" + (f" --workers {workers}" if workers > 1 else " (one process)")
            rows.append(
                (concurrency, f"{what}, trial span", got["span"], ideal, got["trial_cpu"], workers)
            )
            rows.append(
                (concurrency, f"{what}, end to end", got["wall"], ideal, got["cpu"], workers)
            )
    load_after = os.getloadavg()
    cores = os.cpu_count() or 1
    table = "\n".join(
        f"| {c} | {what} | {wall:.2f} s | {ideal / wall:.1%} | {cpu:.1f} | "
        f"{cpu / trials * 1000:.3f} | {cpu_bound(ideal, cpu, min(cores, procs)):.1%} |"
        for c, what, wall, ideal, cpu, procs in rows
    )
    report = f"""
Runner overhead (`benchmarks/runner_bench.py`), {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores,
load average {load_before[0]:.1f} before and {load_after[0]:.1f} after (other jobs share the cores:
read the CPU seconds and the peer beside each figure).
{args.cases:,} cases x k={args.k} = {trials:,} trials, simulated agent sleeping {int(SLEEP_S * 1000)} ms per turn x {TURNS} turns
(one fixture tool call per turn); every trial graded (tools + state assertion), logged to
`runs/<id>.jsonl` and stored in the SQLite workbench. "Trial span" is first trial start to last
trial end in the log; "end to end" adds loading the cases, starting the workers and merging the
log. CPU seconds count the parent and its worker processes (user + system), which other jobs
inflate far less than wall time: on a "trial span" row, from the end of the first trial to the
end of the last (scaled to every trial); on an "end to end" row, the whole run with start-up
and merging (for a sharded run the trial-span figure also holds whatever start-up a worker
still did after another's first trial ended). "CPU-bound efficiency" is the efficiency that CPU alone allows,
ideal / max(ideal, CPU s / usable cores), where usable cores is 1 for one process (one event
loop) and min(cores, workers) for a sharded run: what the run would reach on otherwise idle
cores if nothing but CPU held it back.

| concurrency | what | wall time | efficiency vs ideal | CPU s | CPU ms / trial | CPU-bound efficiency |
| ---: | --- | ---: | ---: | ---: | ---: | ---: |
{table}
"""
    print(report)
    if not args.no_docs:
        write_bench_section("runner", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

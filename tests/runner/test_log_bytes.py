"""The run log's bytes stay those of the reference log made before the runner's speed work.

`golden/seeded_runs.jsonl` was written by the runner as it was before trial records were
serialised on a faster path: a seeded run of each sample agent over the default cases (errors,
state writes, refusals), a simulated user (a `user_sim` record) and a judge deciding answer
facts (non-empty `findings`). Only what differs from run to run (ids, times, durations) is
masked. Regenerate with ``python -m tests.runner.test_log_bytes`` only for a deliberate
format change.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.grading.judge import Judge
from casework.project import load_project
from casework.runner.run import RunRequest, run_agent
from casework.runner.shards import run_sharded
from casework.schema import STOP_TOKEN
from tests.grading.fakes import FakeLLM
from tests.runner.builders import default_cases, make_project
from tests.runner.test_user_sim import ScriptedUser, scenario_case

GOLDEN = Path(__file__).parent / "golden" / "seeded_runs.jsonl"
AGENTS = ("good", "sloppy", "crash", "mutate", "flaky")


def _clock() -> datetime:
    """A fixed clock: the times are masked anyway, the run ids are given."""
    return datetime(2026, 1, 1, tzinfo=UTC)


#: Values that change from run to run (wall times, clocks), masked in the raw bytes.
_MASKS = [
    (re.compile(rb'"(started_at|finished_at)":"[^"]*"'), rb'"\1":"*"'),
    (re.compile(rb'"(duration_s|wall_s)":[0-9.eE+-]+'), rb'"\1":0'),
]


def masked_line(line: bytes) -> bytes:
    """A log line, byte for byte, with the values that differ between runs masked."""
    for pattern, repl in _MASKS:
        line = pattern.sub(repl, line)
    return line


def _judge() -> Judge:
    return Judge(
        FakeLLM(
            lambda prompt: (
                {"outcome": "resolve", "reason": "r"}
                if "outcome" in prompt.lower()
                else {"facts": [{"index": 0, "present": True, "reason": "r"}]}
            )
        ),
        {},
    )


def seeded_logs(tmp: Path, *, workers: int = 1) -> list[bytes]:
    """Every line of the reference runs, masked, in the order the runs wrote them."""
    out: list[bytes] = []
    cases = default_cases()
    cases[0]["label"]["answer_facts"] = ["refund issued"]
    project = load_project(make_project(tmp / "proj", cases))
    for agent in AGENTS:
        request = RunRequest(
            dataset="refunds",
            agent=f"python:tests.runner.sample_agents:{agent}",
            k=2,
            concurrency=3,
            seed=7,
            use_judge=False,
            run_id=f"golden-{agent}",
            store=False,
        )
        if workers > 1:
            summary = run_sharded(project, request, workers=workers, clock=_clock)
        else:
            summary = run_agent(project, request, clock=_clock)
        out += summary.log.read_bytes().splitlines()
    judged = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:good",
            k=1,
            concurrency=1,
            seed=3,
            use_judge=True,
            run_id="golden-judged",
            store=False,
        ),
        judge=_judge(),
        clock=_clock,
    )
    out += judged.log.read_bytes().splitlines()
    sim_project = load_project(make_project(tmp / "sim", [scenario_case("s-1")]))
    user = ScriptedUser(["my kettle broke", "it is order o1", f"thanks {STOP_TOKEN}"])
    simulated = run_agent(
        sim_project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.test_user_sim:asks_for_the_order",
            k=2,
            concurrency=1,
            seed=5,
            use_judge=False,
            run_id="golden-sim",
            store=False,
        ),
        user=user.client(),
        clock=_clock,
    )
    out += simulated.log.read_bytes().splitlines()
    return [masked_line(line) for line in out]


def _sorted(lines: list[bytes]) -> list[bytes]:
    """Trial lines of a concurrent run land in finishing order: compared as sorted lines."""
    return sorted(lines)


@pytest.fixture
def _no_db_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)


@pytest.mark.usefixtures("_no_db_url")
def test_seeded_run_logs_equal_the_reference_bytes(tmp_path: Path) -> None:
    got = seeded_logs(tmp_path)
    want = GOLDEN.read_bytes().splitlines()
    assert _sorted(got) == _sorted(want)


@pytest.mark.usefixtures("_no_db_url")
def test_a_sharded_run_writes_the_same_lines(tmp_path: Path) -> None:
    got = seeded_logs(tmp_path, workers=2)
    want = GOLDEN.read_bytes().splitlines()
    assert _sorted(got) == _sorted(want)


if __name__ == "__main__":  # regenerate the reference (a deliberate format change only)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        lines = seeded_logs(Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(b"".join(line + b"\n" for line in sorted(lines)))
    sys.stdout.write(f"{len(lines)} lines -> {GOLDEN}\n")

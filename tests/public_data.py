"""Where the tests find public benchmark files as published (copied unchanged, with licences).

`tests/data/public/` holds the When2Call test set, τ-bench's gpt-4o airline trajectories and the
JUnit schema CI servers validate against (see its README for sources, commits and licences). The
other benchmarks come from PyPI wheels installed by `make setup` (the `conformance` extra).
"""

from __future__ import annotations

from pathlib import Path

PUBLIC = Path(__file__).resolve().parent / "data" / "public"
WHEN2CALL_TEST = PUBLIC / "when2call" / "when2call_test_llm_judge.jsonl"
TAU_BENCH_AIRLINE = PUBLIC / "tau-bench" / "gpt-4o-airline.json"
JUNIT_XSD = PUBLIC / "junit" / "junit-10.xsd"

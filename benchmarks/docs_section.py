"""Rewrite one benchmark's section of docs/benchmarks.md, between its markers, atomically.

Each benchmark owns the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; the
rest of the page is kept as it is. A missing section is appended.
"""

from __future__ import annotations

from pathlib import Path

from casework.atomic import atomic_write_text

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_bench_section(name: str, body: str, docs: Path = DOCS) -> None:
    """Replace (or append) the ``bench:NAME`` section of ``docs`` with ``body``."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = docs.read_text(encoding="utf-8") if docs.exists() else "# Benchmarks\n"
    block = f"{start}\n{body.strip()}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    atomic_write_text(docs, text)

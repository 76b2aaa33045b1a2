"""One population everywhere: the gate, the headline, the rows, the quota and the report count
the same cases; retired (smoke) cases that still run are shown apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import load_dataset, release
from casework.gate import check_project, gate_run
from casework.gate._quota import unsatisfiable_shares
from casework.project import Project, load_project
from casework.report import report_context
from casework.report.html import ReportData
from casework.runner import RunRequest, load_run, run_agent, run_results
from casework.runner.metrics import in_population
from casework.schema import Case
from tests.gate.test_gate import judgeless_cases
from tests.runner.builders import make_project, refuse_case

GOOD = "python:tests.runner.sample_agents:good"


@pytest.fixture
def retired_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Project, str]:
    """A run of the good agent on a release whose refusal case and one refund are retired."""
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    cases = judgeless_cases()
    more = refuse_case("u-2", "o8")
    more["label"]["answer_facts"] = []
    more["source"] = "hand"
    config = (
        "[gate]\nmin_pass_rate = 0.5\n[thresholds]\nsynthetic_cap = 0.34\n"
        'mature_slices = ["refunds"]\nunsatisfiable_band = [0.3, 0.35]\n'
    )
    root = make_project(tmp_path / "p", [*cases, more], config)
    monkeypatch.chdir(root)
    project = load_project(root)
    ds = load_dataset(project, "refunds")
    retired = [
        c.model_copy(update={"split": "smoke"}) if c.id in ("u-1", "r-1") else c for c in ds.cases
    ]
    release(project, "refunds", retired, "retire two", labels=ds.labels)
    request = RunRequest(dataset="refunds", agent=GOOD, k=2, use_judge=False, run_id="after")
    run_agent(project, request)
    return project, "after"


def test_the_all_row_and_the_gate_count_the_same_cases(retired_run: tuple[Project, str]) -> None:
    project, run_id = retired_run
    res = run_results(load_run(project, run_id))
    # Before: the all row counted the 6 cases, retired ones included; the gate counted 4; and
    # the quota (2 of 5 unsatisfiable) and the synthetic cap (2 of 5) counted the retired ones.
    assert res.overall.cases == 4
    report = gate_run(project, run_id)
    assert report.passed, report.lines()
    assert report.cases == res.overall.cases and report.pass_rate == res.overall.pass1
    assert [g.group for g in res.by_split] == ["split:dev", "split:holdout"]
    assert sum(g.cases for g in res.by_slice) == 4
    assert res.retired is not None and res.retired.group == "retired:smoke"
    assert res.retired.cases == 2 and res.groups()[-1] is res.retired


def test_the_report_headline_is_the_gated_population(retired_run: tuple[Project, str]) -> None:
    project, run_id = retired_run
    ctx = report_context(ReportData(run_results(load_run(project, run_id))))
    cards = {c.label: c.value for c in ctx.cards}
    assert cards["cases · 8 trials"] == "4"
    assert (
        "2 retired case(s) (split smoke) ran: they are shown apart, in the 'retired:smoke' row, "
        "and left out of the headline, the other rows and the gate."
    ) in ctx.notes
    assert [m.group for m in ctx.metrics][-1] == "retired:smoke"


def test_the_unsatisfiable_quota_leaves_retired_cases_out(
    retired_run: tuple[Project, str],
) -> None:
    project, _ = retired_run
    cases: list[Case] = load_dataset(project, "refunds").cases
    shares = {s.slice: s for s in unsatisfiable_shares(cases, (0.3, 0.35), ["refunds"])}
    # Before: 2 of 5 refunds cases (40%), the retired refusal and refund counted.
    refunds = shares["refunds"]
    assert (refunds.unsatisfiable, refunds.total, refunds.retired) == (1, 3, 2)
    assert str(refunds) == (
        "slice 'refunds': 1 of 3 cases are unsatisfiable (33%, 2 retired not counted), "
        "inside the band 30%–35%"
    )
    notes = check_project(project, "refunds").notes
    assert any("1 of 3 cases are unsatisfiable (33%, 2 retired not counted)" in n for n in notes)


def test_in_population() -> None:
    assert in_population("dev") and in_population("holdout") and not in_population("smoke")

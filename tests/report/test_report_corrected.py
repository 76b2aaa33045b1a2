"""The report shows raw and corrected pass@1 where a judge decided verdicts, and nothing new
where none did."""

from __future__ import annotations

from casework.report import render_report, report_context
from casework.report.html import ReportData
from casework.runner import run_results
from tests.runner.judged import LENIENT, loaded, programmatic, standard_trials


def test_report_shows_corrected_pass_rate() -> None:
    res = run_results(loaded(standard_trials(), {"refunds": {"answer_fact": LENIENT}}))
    ctx = report_context(ReportData(res))
    assert ctx.corrected_column
    overall = res.corrected["all"].rate
    cell = f"0.715 [{overall.low:.2f}, {overall.high:.2f}]"
    assert [c.value for c in ctx.cards if "corrected" in c.label] == [cell]
    rows = {m.group: m for m in ctx.metrics}
    assert rows["all"].pass1 == "0.750" and rows["all"].corrected == cell
    assert rows["slice:refunds"].corrected == cell
    assert ctx.corrected_note is not None and "12 of 20 trials" in ctx.corrected_note
    html = render_report(ReportData(res))
    assert "<th class=num>corrected pass@1 [95%]</th>" in html
    assert f"<td class=num>{cell}</td>" in html
    assert "Rogan–Gladen" in html
    assert ctx.judge == (
        "judge-1 · certified on refunds/answer_fact (TPR 0.95, TNR 0.70, admissible)"
    )


def test_report_says_not_certified() -> None:
    ctx = report_context(ReportData(run_results(loaded(standard_trials(), {}))))
    assert {m.group: m.corrected for m in ctx.metrics}["all"] == "not certified"
    assert "not certified" in render_report(ReportData(run_results(loaded(standard_trials(), {}))))


def test_report_of_a_run_without_judged_verdicts_is_unchanged() -> None:
    trials = [programmatic(f"c{i}", n, i != n) for i in range(3) for n in range(2)]
    res = run_results(loaded(trials, {"refunds": {"answer_fact": LENIENT}}))
    ctx = report_context(ReportData(res))
    assert not ctx.corrected_column and ctx.corrected_note is None
    assert all(m.corrected == "" for m in ctx.metrics)
    assert [c.label for c in ctx.cards][:2] == ["pass@1", "pass^2"]
    assert "corrected" not in render_report(ReportData(res))

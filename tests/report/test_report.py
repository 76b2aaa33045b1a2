from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from casework.project import Project, load_project
from casework.report import write_report
from casework.report.charts import Series, bar_chart, line_chart
from casework.runner import RunRequest, compare_runs, load_run, run_agent, run_results
from tests.runner.builders import make_project


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


class Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p")
    monkeypatch.chdir(root)
    return load_project(root)


def test_report_is_self_contained_and_its_numbers_match_the_results(
    project: Project, tmp_path: Path
) -> None:
    good = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:flaky",
            k=4,
            use_judge=False,
            run_id="flaky",
        ),
    )
    bad = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:sloppy",
            k=4,
            use_judge=False,
            run_id="sloppy",
        ),
    )
    out = write_report(
        project, "flaky", tmp_path / "r.html", vs_ref="sloppy", labeller_kappa={"refunds": 0.7}
    )
    html = out.read_text(encoding="utf-8")
    parser = Collect()
    parser.feed(html)
    # Self-contained: no scripts, no external stylesheets, images or fonts.
    assert not any(tag == "script" for tag, _ in parser.tags)
    assert not any(tag == "link" for tag, _ in parser.tags)
    for _, attrs in parser.tags:
        for key in ("src", "href"):
            assert not (attrs.get(key) or "").startswith(("http:", "https:", "//"))
    assert "@import" not in html and "url(" not in html
    assert (
        sum(tag == "svg" for tag, _ in parser.tags) == 5
    )  # pass^k, stability, real/synthetic, kappa, discrimination
    results = run_results(load_run(project, good.header.run_id))
    metrics = parser.tables[0]
    assert metrics[0][:4] == ["group", "cases", "trials", "pass@1 [95% CI]"]
    rows = {r[0]: r for r in metrics[1:]}
    assert set(rows) == {g.group for g in results.groups()}
    for g in results.groups():
        row = rows[g.group]
        assert row[1] == str(g.cases) and row[2] == str(g.trials)
        assert row[3].startswith(fmt(g.pass1))
        assert (
            row[4] == fmt(g.pass_hat[2])
            and row[6] == fmt(g.pass_hat[4])
            and row[9] == fmt(g.pass_at[4])
        )
        assert row[-1] == fmt(g.stability)
    cmp = compare_runs(
        project, load_run(project, "flaky"), load_run(project, "sloppy"), write=False
    )
    assert f"discrimination rate {cmp.comparison.discrimination_rate:.3f}" in html
    failing = parser.tables[-1]
    failing_cases = {
        t.case_id for t in load_run(project, good.header.run_id).trials if t.verdict.passed is False
    }
    assert {re.sub(r"\s", "", r[0]) for r in failing[1:]} == failing_cases
    assert all(r[4] for r in failing[1:])  # every failing case shows its evidence
    assert bad.header.run_id in {"sloppy"}


def test_charts_escape_and_scale() -> None:
    svg = line_chart("a <b>", ["1", "2"], [Series("s&p", [0.5, None])])
    assert "a &lt;b&gt;" in svg and "s&amp;p" in svg and svg.count("<circle") == 1
    bars = bar_chart(
        "k",
        ["x", "y"],
        [Series("kappa", [-0.2, 0.9])],
        y_min=-0.2,
        threshold=0.6,
        threshold_label="gate",
    )
    assert bars.count("<rect") == 2 and "gate" in bars

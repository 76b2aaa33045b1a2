"""The HTML report of a run: metrics, pass^k curves, stability, discrimination, agreement, failures.

Entry points: :func:`write_report` (`casework report`), :func:`report_context` (pure: what the
template shows) and :func:`render_report` (context rendered by the Jinja2 template).
"""

from casework.report.charts import Series, bar_chart, line_chart, stacked_bars
from casework.report.html import (
    ReportContext,
    ReportData,
    render_report,
    report_context,
    write_report,
)

__all__ = [
    "ReportContext",
    "ReportData",
    "Series",
    "bar_chart",
    "line_chart",
    "render_report",
    "report_context",
    "stacked_bars",
    "write_report",
]

"""The HTML report of a run: metrics, pass^k curves, stability, discrimination, agreement, failures.

Entry points: :func:`write_report` (`casework report`) and :func:`render_report` (pure).
"""

from casework.report.charts import Series, bar_chart, line_chart, stacked_bars
from casework.report.html import ReportData, render_report, write_report

__all__ = [
    "ReportData",
    "Series",
    "bar_chart",
    "line_chart",
    "render_report",
    "stacked_bars",
    "write_report",
]

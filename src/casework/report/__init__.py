"""The HTML report of a run: metrics, pass^k curves, stability, discrimination, agreement, failures.

Entry points: :func:`write_report` (`casework report`), :func:`report_context` (pure: what the
template shows) and :func:`render_report` (context rendered by the Jinja2 template).
"""

from casework.report.html import render_report, report_context, write_report

__all__ = [
    "render_report",
    "report_context",
    "write_report",
]

"""The dashboard: per slice and per labeller figures, and a server-rendered kappa chart (SVG).

Every figure is :func:`casework.labelling.dashboard`'s (what `casework label status` reads).
Staff only: admin, adjudicator and reviewer. A labeller never reaches it — it shows agreement
(kappa, open disagreements), which would tell a labeller how others labelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response

from casework.labelling import Dashboard, SliceDashboard, dashboard
from casework.web._render import render
from casework.web._routes import route

router = APIRouter()
ROLES = ("admin", "adjudicator", "reviewer")

#: Chart geometry (pixels): label column, plot width, one row per slice.
LABEL_W, PLOT_W, ROW_H, TOP, BOTTOM = 140.0, 400.0, 26.0, 10.0, 30.0
TICKS = (-1.0, -0.5, 0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Bar:
    """One slice's row of the chart: kappa as a dot, its CI as a line (SVG coordinates)."""

    slice: str
    y: float
    x: float | None
    low: float | None
    high: float | None
    provisional: bool
    title: str


@dataclass(frozen=True)
class Chart:
    """The kappa-with-CI chart of one dataset."""

    width: float
    height: float
    plot_left: float
    plot_right: float
    axis_y: float
    ticks: tuple[tuple[float, str], ...]
    bars: tuple[Bar, ...]


def x_of(kappa: float) -> float:
    """The x coordinate of ``kappa`` (clamped to [-1, 1])."""
    return LABEL_W + (max(-1.0, min(1.0, kappa)) + 1) / 2 * PLOT_W


def _title(row: SliceDashboard) -> str:
    if row.kappa is None:
        return f"{row.slice}: kappa undefined ({row.band_reason})"
    ci = ""
    if row.kappa_low is not None and row.kappa_high is not None:
        ci = f" [{row.kappa_low:.2f}, {row.kappa_high:.2f}]"
    mark = ", provisional" if row.provisional else ""
    return f"{row.slice}: kappa {row.kappa:.2f}{ci} {row.band or ''}{mark}".strip()


def chart(board: Dashboard) -> Chart:
    """The chart's geometry; numbers only, the template draws them."""
    bars = []
    for i, row in enumerate(board.slices):
        bars.append(
            Bar(
                row.slice,
                TOP + ROW_H * i + ROW_H / 2,
                x_of(row.kappa) if row.kappa is not None else None,
                x_of(row.kappa_low) if row.kappa_low is not None else None,
                x_of(row.kappa_high) if row.kappa_high is not None else None,
                row.provisional,
                _title(row),
            )
        )
    axis = TOP + ROW_H * len(bars)
    return Chart(
        LABEL_W + PLOT_W + 20,
        axis + BOTTOM,
        LABEL_W,
        LABEL_W + PLOT_W,
        axis,
        tuple((x_of(t), f"{t:g}") for t in TICKS),
        tuple(bars),
    )


@route(router, "GET", "/dashboard", roles=ROLES, nav="Dashboard")
def dashboard_page(request: Request) -> Response:
    """Every dataset's dashboard: slices, labellers, the kappa chart."""
    project = request.app.state.project
    boards = [dashboard(project, name) for name in project.dataset_names()]
    return render(
        request,
        "dashboard/page.html",
        title="Dashboard",
        boards=[(board, chart(board)) for board in boards],
    )

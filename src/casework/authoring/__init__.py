"""Eval authoring along the axes of a failure shape (shapes themselves: :mod:`casework.shapes`).

Cases along named axes: :func:`author` (`casework shapes author`) generates
candidates for one shape and axis, rejects them by rule (:data:`REASONS`), ranks each to its
oracle (:func:`rank_oracle`) and queues the rest for review; :func:`review_from_file`
(`casework review decide`) decides them; :func:`author_report` (`casework shapes report`) is the
generator's gate.
"""

from casework.authoring._candidate import (
    AXES,
    REASONS,
    SATISFIABLE_AXES,
    UNSATISFIABLE_AXES,
    Brief,
    Candidate,
    ProposedOracle,
    Rejection,
    rank_oracle,
    screen,
    unsatisfiable_kind,
)
from casework.authoring._generate import (
    AXIS_BRIEFS,
    MIN_DISTANCE,
    PROMPT_VERSION,
    AuthoringRun,
    AuthorOptions,
    AuthorResult,
    author,
    prompt_messages,
    read_runs,
)
from casework.authoring._report import (
    ACCEPTANCE_FLOOR,
    WARNING,
    AuthorReport,
    Discrimination,
    author_report,
    discrimination,
)
from casework.authoring._review import (
    ReviewDecision,
    ReviewOutcome,
    open_authored,
    review_from_file,
)

__all__ = [
    "ACCEPTANCE_FLOOR",
    "AXES",
    "AXIS_BRIEFS",
    "MIN_DISTANCE",
    "PROMPT_VERSION",
    "REASONS",
    "SATISFIABLE_AXES",
    "UNSATISFIABLE_AXES",
    "WARNING",
    "AuthorOptions",
    "AuthorReport",
    "AuthorResult",
    "AuthoringRun",
    "Brief",
    "Candidate",
    "Discrimination",
    "ProposedOracle",
    "Rejection",
    "ReviewDecision",
    "ReviewOutcome",
    "author",
    "author_report",
    "discrimination",
    "open_authored",
    "prompt_messages",
    "rank_oracle",
    "read_runs",
    "review_from_file",
    "screen",
    "unsatisfiable_kind",
]

"""Eval authoring along the axes of a failure shape (shapes themselves: :mod:`casework.shapes`).

Cases along named axes: :func:`author` (`casework shapes author`) generates
candidates for one shape and axis, rejects them by rule (:data:`REASONS`), ranks each to its
oracle (:func:`rank_oracle`) and queues the rest for review; :func:`review_from_file`
(`casework review decide`) decides them; :func:`author_report` (`casework shapes report`) is the
generator's gate.
"""

from casework.authoring._candidate import AXES
from casework.authoring._generate import MIN_DISTANCE, AuthorOptions, AuthorResult, author
from casework.authoring._report import AuthorReport, author_report
from casework.authoring._review import open_authored, review_from_file

__all__ = [
    "AXES",
    "MIN_DISTANCE",
    "AuthorOptions",
    "AuthorReport",
    "AuthorResult",
    "author",
    "author_report",
    "open_authored",
    "review_from_file",
]

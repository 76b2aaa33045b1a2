"""Eval authoring from production failures: failure shapes, saturation and drift.

Entry points: :func:`build_shapes` (`casework shapes build`), :func:`load_shapes` /
:func:`shape_set_names` (`shapes list|show`), :func:`drift` (`casework shapes drift`). A shape
set is `shapes/<name>.jsonl` (:class:`Shape` lines) with its version log
`shapes/<name>.versions.jsonl` (:class:`ShapeVersion` lines).

Cases along named axes (issue 15 part 2): :func:`author` (`casework shapes author`) generates
candidates for one shape and axis, rejects them by rule (:data:`REASONS`), ranks each to its
oracle (:func:`rank_oracle`) and queues the rest for review; :func:`review_from_file`
(`casework author review`) decides them; :func:`author_report` (`casework shapes report`) is the
generator's gate.
"""

from casework.authoring._build import BuildOptions, Namer, ShapeBuild, build_shapes
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
from casework.authoring._cluster import RADIUS_SLACK, SAMPLE, ClusterParams, cluster
from casework.authoring._drift import AppearedShape, DriftOptions, DriftReport, ShareChange, drift
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
from casework.authoring._model import Shape, ShapeExample, ShapeVersion
from casework.authoring._names import distinctive_terms, offline_name, one_sentence
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
from casework.authoring._saturation import Saturation, saturation
from casework.authoring._stats import holm, two_proportion_z
from casework.authoring._store import (
    ShapeSet,
    load_shapes,
    shape_set_names,
    shapes_dir,
    shapes_file,
)
from casework.authoring._text import case_text
from casework.authoring._traffic import Failing, read_failing

__all__ = [
    "ACCEPTANCE_FLOOR",
    "AXES",
    "AXIS_BRIEFS",
    "MIN_DISTANCE",
    "PROMPT_VERSION",
    "RADIUS_SLACK",
    "REASONS",
    "SAMPLE",
    "SATISFIABLE_AXES",
    "UNSATISFIABLE_AXES",
    "WARNING",
    "AppearedShape",
    "AuthorOptions",
    "AuthorReport",
    "AuthorResult",
    "AuthoringRun",
    "Brief",
    "BuildOptions",
    "Candidate",
    "ClusterParams",
    "Discrimination",
    "DriftOptions",
    "DriftReport",
    "Failing",
    "Namer",
    "ProposedOracle",
    "Rejection",
    "ReviewDecision",
    "ReviewOutcome",
    "Saturation",
    "Shape",
    "ShapeBuild",
    "ShapeExample",
    "ShapeSet",
    "ShapeVersion",
    "ShareChange",
    "author",
    "author_report",
    "build_shapes",
    "case_text",
    "cluster",
    "discrimination",
    "distinctive_terms",
    "drift",
    "holm",
    "load_shapes",
    "offline_name",
    "one_sentence",
    "open_authored",
    "prompt_messages",
    "rank_oracle",
    "read_failing",
    "read_runs",
    "review_from_file",
    "saturation",
    "screen",
    "shape_set_names",
    "shapes_dir",
    "shapes_file",
    "two_proportion_z",
    "unsatisfiable_kind",
]

"""Failure shapes: failing production traffic clustered into named shapes, saturation and drift.

Entry points: :func:`build_shapes` (`casework shapes build`), :func:`load_shapes` /
:func:`shape_set_names` (`shapes list|show`), :func:`drift` (`casework shapes drift`). A shape
set is `shapes/<name>.jsonl` (:class:`Shape` lines) with its version log
`shapes/<name>.versions.jsonl` (:class:`ShapeVersion` lines). Cases are authored along a shape's
axes by :mod:`casework.authoring`.
"""

from casework.shapes._build import BuildOptions, Namer, ShapeBuild, build_shapes
from casework.shapes._cluster import RADIUS_SLACK, SAMPLE, ClusterParams, cluster
from casework.shapes._drift import AppearedShape, DriftOptions, DriftReport, ShareChange, drift
from casework.shapes._model import Shape, ShapeExample, ShapeVersion
from casework.shapes._names import distinctive_terms, offline_name, one_sentence
from casework.shapes._saturation import Saturation, saturation
from casework.shapes._stats import holm, two_proportion_z
from casework.shapes._store import (
    ShapeSet,
    load_shapes,
    shape_set_names,
    shapes_dir,
    shapes_file,
)
from casework.shapes._text import case_text
from casework.shapes._traffic import Failing, read_failing

__all__ = [
    "RADIUS_SLACK",
    "SAMPLE",
    "AppearedShape",
    "BuildOptions",
    "ClusterParams",
    "DriftOptions",
    "DriftReport",
    "Failing",
    "Namer",
    "Saturation",
    "Shape",
    "ShapeBuild",
    "ShapeExample",
    "ShapeSet",
    "ShapeVersion",
    "ShareChange",
    "build_shapes",
    "case_text",
    "cluster",
    "distinctive_terms",
    "drift",
    "holm",
    "load_shapes",
    "offline_name",
    "one_sentence",
    "read_failing",
    "saturation",
    "shape_set_names",
    "shapes_dir",
    "shapes_file",
    "two_proportion_z",
]

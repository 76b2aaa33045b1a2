"""Eval authoring from production failures: failure shapes, saturation and drift.

Entry points: :func:`build_shapes` (`casework shapes build`), :func:`load_shapes` /
:func:`shape_set_names` (`shapes list|show`), :func:`drift` (`casework shapes drift`). A shape
set is `shapes/<name>.jsonl` (:class:`Shape` lines) with its version log
`shapes/<name>.versions.jsonl` (:class:`ShapeVersion` lines).
"""

from casework.authoring._build import BuildOptions, Namer, ShapeBuild, build_shapes
from casework.authoring._cluster import RADIUS_SLACK, SAMPLE, ClusterParams, cluster
from casework.authoring._drift import AppearedShape, DriftOptions, DriftReport, ShareChange, drift
from casework.authoring._model import Shape, ShapeExample, ShapeVersion
from casework.authoring._names import distinctive_terms, offline_name, one_sentence
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

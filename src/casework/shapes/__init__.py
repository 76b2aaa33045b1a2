"""Failure shapes: failing production traffic clustered into named shapes, saturation and drift.

Entry points: :func:`build_shapes` (`casework shapes build`), :func:`load_shapes` /
:func:`shape_set_names` (`shapes list|show`), :func:`drift` (`casework shapes drift`). A shape
set is `shapes/<name>.jsonl` (:class:`Shape` lines) with its version log
`shapes/<name>.versions.jsonl` (:class:`ShapeVersion` lines). Cases are authored along a shape's
axes by :mod:`casework.authoring`.
"""

from casework.shapes._build import BuildOptions, ShapeBuild, build_shapes
from casework.shapes._cluster import SAMPLE, ClusterParams, cluster
from casework.shapes._drift import DriftOptions, DriftReport, drift
from casework.shapes._model import Shape
from casework.shapes._store import load_shapes, shape_set_names
from casework.shapes._traffic import read_failing

__all__ = [
    "SAMPLE",
    "BuildOptions",
    "ClusterParams",
    "DriftOptions",
    "DriftReport",
    "Shape",
    "ShapeBuild",
    "build_shapes",
    "cluster",
    "drift",
    "load_shapes",
    "read_failing",
    "shape_set_names",
]

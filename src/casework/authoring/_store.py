"""The shape store's writers under their former path, for callers not yet moved to casework.shapes.

The store itself is :mod:`casework.shapes._store`.
"""

from casework.shapes._store import save_shapes, shapes_content

__all__ = ["save_shapes", "shapes_content"]

"""Dotted source paths (``meta.id``, ``items.0.id``): how ``--map`` names a field of a row.

Shared by the row formats that take ``--map`` (generic rows and results, function-calling rows).
Entry point: :func:`resolve`, which answers :data:`MISSING` for a path the row does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What :func:`resolve` answers for a path the record does not hold (``None`` is a value).
MISSING: Any = object()


def resolve(record: Any, path: str) -> Any:
    """Follow a dotted path (`meta.id`, `items.0.id`) through objects and lists (or ``MISSING``)."""
    value = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value

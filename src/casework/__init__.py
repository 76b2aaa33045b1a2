"""casework: build and keep honest the evaluation datasets of tool-using LLM agents.

The public API is re-exported here; each stage (``casework.dataset``, ``casework.agreement`` …)
exports its own in ``__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    pass

__all__ = [
    "__version__",
]

__version__ = "0.1.0"

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {},
    )

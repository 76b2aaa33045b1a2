"""Loading user code named in `casework.toml` or on the command line as ``pkg.module:attr``.

Entry point: :func:`load_object`. The project root goes on ``sys.path`` first, so a project's own
modules (its agent, its tool declarations, a scripted model) import without installing anything.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from casework.errors import CaseworkError, ConfigError, InputError, UsageError

__all__ = ["load_object"]


def load_object(
    target: str,
    *,
    root: Path,
    where: str,
    shape: str = "pkg.module:attr",
    error: type[CaseworkError] = ConfigError,
) -> Any:
    """Import ``pkg.module`` and return its attribute ``attr`` (dotted paths allowed).

    Args:
        target: ``pkg.module:attr``.
        root: Project root, put on ``sys.path`` so project modules import.
        where: What named the target, for messages (for a :class:`ConfigError`, the key of
            `casework.toml`: ``agent.tools_from``); for a
            :class:`UsageError`, the name of the parameter at fault (``agent``).
        shape: The expected shape, for the message when ``target`` has no ``:``.
        error: Error class to raise (a usage error for command-line options).

    Raises:
        CaseworkError: ``error``, when the target is malformed, the module does not import or
            the attribute is missing.
    """

    def fail(message: str) -> CaseworkError:
        # A usage error names the parameter at fault; a config error the key of casework.toml.
        if issubclass(error, UsageError):
            return error(message, param=where)
        if issubclass(error, InputError):
            return error("casework.toml", None, where, message)
        return error(f"{where}: {message}")

    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise fail(f"expected {shape}. Got '{target}'.")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise fail(f"cannot import '{module_name}': {exc}.") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise fail(f"module '{module_name}' has no attribute '{attr}'.")
        obj = getattr(obj, part)
    return obj

"""Lazy package exports (PEP 562): a package names what it exports, a submodule loads on first use.

A package ``__init__`` keeps its static ``__all__`` and, under ``if TYPE_CHECKING:``, the imports
type checkers read; at run time :func:`attach` gives it a module ``__getattr__`` that imports the
submodule holding a name the first time the name is asked for. ``casework dataset versions`` then loads
the release-log reader without numpy, scipy, SQLAlchemy or the LLM SDKs that other parts of the
same packages use. ``tests/test_lazy_exports.py`` checks each table against the typed imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any


class _LazyPackage(ModuleType):
    """A package whose exported names win over its submodules of the same name.

    Importing ``casework.labelling.dataset_agreement`` (the module) sets the package attribute
    of that name, which would hide the function the package exports as ``dataset_agreement``;
    eager imports rebound the name to the function right after, and so does this.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and name in self.__dict__.get("_lazy_exports", ())
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


def attach(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, exporting names from its submodules.

    Args:
        package: The package's ``__name__``.
        exports: For each submodule (absolute name), the names the package re-exports from it.

    Returns:
        The pair ``(__getattr__, __dir__)`` to assign in the package's ``__init__``.
    """
    where = {name: module for module, names in exports.items() for name in names}
    this = sys.modules[package]
    this._lazy_exports = frozenset(where)  # type: ignore[attr-defined]
    this.__class__ = _LazyPackage

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*sys.modules[package].__dict__, *where})

    return __getattr__, __dir__

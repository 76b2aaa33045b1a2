"""τ²-bench's own domain tools as a tool environment, so imported τ² domains run with no user code.

:class:`AirlineEnvironment` and :class:`RetailEnvironment` wrap the toolkits of the installed
``tau2`` package (the ``conformance`` extra): a trial's state is validated into the domain's
database model, every call goes to τ²'s own tool function, and ``state()`` dumps only the
fields that are set (``model_dump(exclude_unset=True)``), so the state read back equals the
``db.json`` it came from and a state diff holds only what the tools changed. Entry points: the
environment classes and :func:`tau2_domain_of` (which domain's database a state is).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from casework.errors import UsageError
from casework.runner.fixtures import ToolError

__all__ = [
    "TAU2_DOMAINS",
    "AirlineEnvironment",
    "RetailEnvironment",
    "Tau2DomainEnvironment",
    "tau2_domain_of",
]

#: τ² domain → (module of its database model, model class, module of its tools, toolkit class,
#: the database's top-level keys, which tell a state of the domain from any other).
TAU2_DOMAINS: Mapping[str, tuple[str, str, str, str, frozenset[str]]] = {
    "airline": (
        "tau2.domains.airline.data_model",
        "FlightDB",
        "tau2.domains.airline.tools",
        "AirlineTools",
        frozenset({"flights", "users", "reservations"}),
    ),
    "retail": (
        "tau2.domains.retail.data_model",
        "RetailDB",
        "tau2.domains.retail.tools",
        "RetailTools",
        frozenset({"products", "users", "orders"}),
    ),
}


def tau2_domain_of(state: Mapping[str, Any]) -> str | None:
    """The τ² domain whose database ``state`` is (by its top-level keys), or ``None``.

    Example:
        >>> tau2_domain_of({"flights": {}, "users": {}, "reservations": {}})
        'airline'
        >>> tau2_domain_of({"items": {}}) is None
        True
    """
    keys = set(state)
    for name, (*_, wanted) in TAU2_DOMAINS.items():
        if keys == wanted:
            return name
    return None


def _load(module: str, attr: str) -> Any:
    # τ² is the optional `conformance` extra: imported only when a τ² domain runs.
    try:
        return getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise UsageError(
            f"running a τ²-bench domain needs the `tau2` package ({exc}); install casework's "
            "`conformance` extra (pip install 'casework[conformance]')."
        ) from None


class Tau2DomainEnvironment:
    """One τ² domain's own tools over a trial's copy of its database.

    Subclasses name the domain (:attr:`domain`); instances are made without arguments, one
    per trial (the runner's environment protocol).
    """

    domain: str = ""

    def __init__(self) -> None:
        db_module, db_class, tools_module, tools_class, _ = TAU2_DOMAINS[self.domain]
        self._db_model: type[BaseModel] = _load(db_module, db_class)
        self._toolkit_class: Any = _load(tools_module, tools_class)
        self._toolkit: Any = None

    def tools(self) -> list[dict[str, Any]]:
        """τ²'s declarations of the domain's tools (its OpenAI schemas), sorted by name."""
        toolkit = self._toolkit or self._toolkit_class(None)
        out = []
        for name, declared in sorted(toolkit.get_tools().items()):
            function = declared.openai_schema["function"]
            out.append(
                {
                    "name": name,
                    "description": function.get("description", ""),
                    "parameters": function.get("parameters", {"type": "object"}),
                }
            )
        return out

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Validate the trial's state into the domain's database and give it to τ²'s toolkit.

        Raises:
            UsageError: The state is not a database of this domain.
        """
        try:
            db = self._db_model.model_validate(initial_state)
        except ValueError as exc:
            raise UsageError(
                f"the state is not a τ²-bench {self.domain} database: {exc}".splitlines()[0]
            ) from None
        self._toolkit = self._toolkit_class(db)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Answer a call with τ²'s own tool; an exception it raises is the tool's error.

        Raises:
            ToolError: No such tool, bad arguments, or the tool refused (τ²'s message).
        """
        if self._toolkit is None:
            raise ToolError("the environment has no state (reset was not called)")
        if not self._toolkit.has_tool(name):
            raise ToolError(f"Tool '{name}' not found.")
        try:
            result = self._toolkit.use_tool(name, **args)
        except Exception as exc:  # τ²'s tools signal refusals by raising; the agent reads them
            raise ToolError(str(exc) or type(exc).__name__) from None
        return to_jsonable_python(result)

    def state(self) -> dict[str, Any]:
        """The database's set fields: the state as read, plus exactly what the tools changed."""
        if self._toolkit is None:
            return {}
        dumped: dict[str, Any] = self._toolkit.db.model_dump(mode="json", exclude_unset=True)
        return dumped


class AirlineEnvironment(Tau2DomainEnvironment):
    """τ²-bench's airline tools (``tau2.domains.airline``)."""

    domain = "airline"


class RetailEnvironment(Tau2DomainEnvironment):
    """τ²-bench's retail tools (``tau2.domains.retail``)."""

    domain = "retail"

"""τ²-bench's own environments over a casework state, for running and scoring imported τ² tasks.

A τ² domain's state in casework is its database as a JSON object (``db.json``, telecom's
``db.toml`` as imported); a domain whose user has tools of their own (telecom's phone) keeps the
user's device database under :data:`USER_DB_KEY`. :func:`tau2_environment` builds the installed
``tau2`` package's environment over such a state (τ²'s own tools, ``sync_tools`` and assertion
functions), :func:`tau2_state` reads one back (set fields only), and :func:`tau2_domain_of` tells
which domain a state belongs to. The ``tau2`` package is the optional ``conformance`` extra:
imported only when a τ² domain runs or is scored.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from casework.errors import UsageError

__all__ = [
    "TAU2_DOMAIN_KEYS",
    "USER_DB_KEY",
    "tau2_domain_of",
    "tau2_environment",
    "tau2_module",
    "tau2_state",
]

#: Key of the simulated user's device database in a τ² state (telecom).
USER_DB_KEY = "user_db"

#: τ² domain → the top-level keys of its database, which tell a state of the domain from others.
TAU2_DOMAIN_KEYS: Mapping[str, frozenset[str]] = {
    "airline": frozenset({"flights", "users", "reservations"}),
    "retail": frozenset({"products", "users", "orders"}),
    "telecom": frozenset({"plans", "customers", "lines", "bills", "devices"}),
}

# τ² domain → (module, database class, user database class or None).
_MODELS: Mapping[str, tuple[str, str, str | None]] = {
    "airline": ("tau2.domains.airline.data_model", "FlightDB", None),
    "retail": ("tau2.domains.retail.data_model", "RetailDB", None),
    "telecom": ("tau2.domains.telecom.data_model", "TelecomDB", "TelecomUserDB"),
}


def tau2_domain_of(state: Mapping[str, Any]) -> str | None:
    """The τ² domain whose database ``state`` is (by its top-level keys), or ``None``.

    Example:
        >>> tau2_domain_of({"flights": {}, "users": {}, "reservations": {}})
        'airline'
        >>> tau2_domain_of({"items": {}}) is None
        True
    """
    keys = set(state) - {USER_DB_KEY}
    for name, wanted in TAU2_DOMAIN_KEYS.items():
        if keys == wanted:
            return name
    return None


def tau2_module(name: str) -> Any:
    """The installed ``tau2`` package's module ``name``.

    Raises:
        UsageError: ``tau2`` is not installed.
    """
    # τ²'s registry and agents import LiteLLM, which would fetch a price list over the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        # τ² logs every tool response (whole reservations) and notes of its own on stderr
        # through loguru, from its first import on; a run's output is casework's, and the
        # run reports failed golden actions itself.
        importlib.import_module("loguru").logger.disable("tau2")
        module = importlib.import_module(name)
    except ImportError as exc:
        raise UsageError(
            f"running or scoring a τ²-bench domain needs the `tau2` package ({exc}); install "
            "casework's `conformance` extra (pip install 'casework[conformance]')."
        ) from None
    return module


def tau2_environment(domain: str, state: Mapping[str, Any]) -> Any:
    """τ²'s own environment of ``domain`` over ``state`` (agent database, user's device).

    A state without :data:`USER_DB_KEY` gets τ²'s published default device (``user_db.toml``),
    as τ²'s evaluator does.

    Raises:
        UsageError: ``tau2`` is not installed, or the state is not a database of the domain.
    """
    if domain not in _MODELS:
        raise UsageError(f"τ²-bench domain {domain!r} is not one casework runs. Got {domain!r}.")
    module, db_class, user_class = _MODELS[domain]
    models = tau2_module(module)
    agent = {k: v for k, v in state.items() if k != USER_DB_KEY}
    try:
        db = getattr(models, db_class).model_validate(agent)
        kwargs: dict[str, Any] = {"db": db}
        if user_class is not None and USER_DB_KEY in state:
            user_models = tau2_module(f"tau2.domains.{domain}.user_data_model")
            kwargs["user_db"] = getattr(user_models, user_class).model_validate(state[USER_DB_KEY])
    except ValueError as exc:
        raise UsageError(
            f"the state is not a τ²-bench {domain} database: {exc}".splitlines()[0]
        ) from None
    env = tau2_module(f"tau2.domains.{domain}.environment").get_environment(**kwargs)
    env.sync_tools()
    return env


def tau2_state(env: Any) -> dict[str, Any]:
    """The environment's databases as a state.

    Airline's and retail's large databases keep their set fields only (the state as read plus
    what the tools changed, so a diff holds only changes); telecom's small ones are dumped whole,
    as τ²'s tools change its user's device in place, where set fields would not show it.
    """
    whole = env.get_domain_name() not in ("airline", "retail")
    out: dict[str, Any] = env.tools.db.model_dump(mode="json", exclude_unset=not whole)
    user_tools = getattr(env, "user_tools", None)
    if user_tools is not None and getattr(user_tools, "db", None) is not None:
        out[USER_DB_KEY] = user_tools.db.model_dump(mode="json")
    return out

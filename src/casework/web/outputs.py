"""The JSON output of `casework serve users list`, as a documented model."""

from __future__ import annotations

from pydantic import RootModel

from casework.schema.output import OutputPart

__all__ = ["UserList", "UserOutput"]


class UserOutput(OutputPart):
    """One person who may sign in to the web app."""

    name: str
    """Their name."""
    roles: list[str]
    """Their roles (`labeller`, `adjudicator`, `reviewer`, `admin`)."""
    disabled: bool
    """Whether they are disabled (no session, no link works)."""
    last_seen: str | None
    """When they were last seen (ISO 8601, UTC; null: never)."""


class UserList(RootModel[list[UserOutput]]):
    """`casework serve users list`: every person (a JSON list)."""

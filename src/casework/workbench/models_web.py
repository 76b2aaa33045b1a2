"""Workbench tables of the web app: people and their roles, sign-in links, sessions, label views.

Secrets are never stored: a sign-in link's secret and a session's secret are argon2 hashes; the
row is found by a random public id sent beside the secret (``<id>.<secret>``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = [
    "WebLabelViewRow",
    "WebServedUseRow",
    "WebSessionRow",
    "WebSigninRow",
    "WebSkipRow",
    "WebUserRow",
]


class WebUserRow(Base):
    """A person who signs in; ``name`` is the labeller id labels carry."""

    __tablename__ = "web_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    roles: Mapped[list[Any]] = mapped_column(JSON)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebSigninRow(Base):
    """A one-time sign-in link: single use, expires."""

    __tablename__ = "web_signins"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, index=True)
    secret_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebSessionRow(Base):
    """A signed-in browser: ended at sign-out, expiry, or when its user is disabled."""

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, index=True)
    secret_hash: Mapped[str] = mapped_column(String(200))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebLabelViewRow(Base):
    """What the web page showed for one raw label: fields shown, times, the labeller's note."""

    __tablename__ = "web_label_views"
    __table_args__ = (
        UniqueConstraint(
            "dataset", "case_id", "labeller", "guideline_version", name="uq_web_label_views_key"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(200))
    case_id: Mapped[str] = mapped_column(String(200))
    labeller: Mapped[str] = mapped_column(String(64))
    guideline_version: Mapped[str] = mapped_column(String(200))
    fields_shown: Mapped[list[Any]] = mapped_column(JSON)
    server_seconds: Mapped[float] = mapped_column(Float)
    client_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    revisions: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WebSkipRow(Base):
    """A case a labeller skipped, with the reason (it goes to the end of their queue)."""

    __tablename__ = "web_skips"
    __table_args__ = (
        UniqueConstraint(
            "dataset", "case_id", "labeller", "guideline_version", name="uq_web_skips_key"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(200))
    case_id: Mapped[str] = mapped_column(String(200))
    labeller: Mapped[str] = mapped_column(String(64))
    guideline_version: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    skipped_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WebServedUseRow(Base):
    """A served-at token a submit spent: a form's time on screen counts once."""

    __tablename__ = "web_served_uses"

    token_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    used_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

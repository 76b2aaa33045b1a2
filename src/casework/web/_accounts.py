"""People, roles, one-time sign-in links and sessions, in the workbench (no web framework here).

A link or session is ``<id>.<secret>``: the random ``id`` finds the row, the random ``secret`` is
stored only as an argon2 hash. A verified session secret is remembered in this process (by its
SHA-256) so argon2 runs once per session and worker, while the session and its user are read
from the database on every request: a disabled user or an ended session is refused at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from casework.errors import UsageError
from casework.labelling import parse_labellers
from casework.workbench import WebSessionRow, WebSigninRow, WebUserRow, Workbench

ROLES: tuple[str, ...] = ("admin", "labeller", "adjudicator", "reviewer")
SIGNIN_HOURS = 72
SESSION_HOURS = 12

# OWASP's argon2id minimum (19 MiB, t=2): the secrets are 256-bit random, so the hash guards a
# leaked database, not a guessable password; a cheaper hash keeps sign-in quick.
_HASHER = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
_VERIFIED: dict[str, str] = {}
_VERIFIED_LOCK = threading.Lock()


@dataclass(frozen=True)
class UserInfo:
    """A person as `users list` shows them.

    Attributes:
        name: Labeller id.
        roles: Their roles.
        disabled: Signed out everywhere and refused.
        last_seen: Last request of any of their sessions.
    """

    name: str
    roles: tuple[str, ...]
    disabled: bool
    last_seen: datetime | None


@dataclass(frozen=True)
class Viewer:
    """The signed-in person making a request.

    Attributes:
        user_id: Row id.
        name: Labeller id (the name on their labels).
        roles: Their roles.
        session_id: Public id of their session.
        csrf: The session's CSRF token.
    """

    user_id: int
    name: str
    roles: frozenset[str]
    session_id: str
    csrf: str


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def check_roles(roles: Iterable[str]) -> tuple[str, ...]:
    """Roles de-duplicated in their canonical order.

    Raises:
        UsageError: An unknown role, or none.
    """
    given = list(roles)
    unknown = [r for r in given if r not in ROLES]
    if unknown:
        raise UsageError(f"a role is one of {', '.join(ROLES)}. Got '{unknown[0]}'.", param="roles")
    if not given:
        raise UsageError(f"give at least one role ({', '.join(ROLES)}).", param="roles")
    return tuple(r for r in ROLES if r in given)


def _user(session: Session, name: str) -> WebUserRow:
    row = session.scalars(select(WebUserRow).where(WebUserRow.name == name)).one_or_none()
    if row is None:
        raise UsageError(f"no user '{name}' (see `casework serve users list`).", param="name")
    return row


def _token(session: Session, user: WebUserRow, hours: float, now: datetime) -> str:
    public, secret = secrets.token_urlsafe(16), secrets.token_urlsafe(32)
    session.add(
        WebSigninRow(
            id=public,
            user_id=user.id,
            secret_hash=_HASHER.hash(secret),
            created_at=now,
            expires_at=now + timedelta(hours=hours),
        )
    )
    return f"{public}.{secret}"


def add_user(
    workbench: Workbench,
    name: str,
    roles: Sequence[str],
    *,
    hours: float = SIGNIN_HOURS,
    now: datetime | None = None,
) -> str:
    """Create a person with ``roles``; returns their one-time sign-in token.

    Raises:
        UsageError: A malformed name (the labeller-id rules), an unknown role, or the name exists.
    """
    (checked,) = parse_labellers([name], param="name")
    wanted = check_roles(roles)
    when = now or _now()
    try:
        with workbench.session() as session:
            row = WebUserRow(name=checked, roles=list(wanted), disabled=False, created_at=when)
            session.add(row)
            session.flush()
            return _token(session, row, hours, when)
    except IntegrityError as exc:
        raise UsageError(
            f"user '{checked}' exists; `casework serve users link {checked}` gives a fresh link.",
            param="name",
        ) from exc


def new_link(
    workbench: Workbench, name: str, *, hours: float = SIGNIN_HOURS, now: datetime | None = None
) -> str:
    """A fresh one-time sign-in token for an existing, enabled person.

    Raises:
        UsageError: No such user, or the user is disabled.
    """
    with workbench.session() as session:
        row = _user(session, name)
        if row.disabled:
            raise UsageError(f"user '{name}' is disabled.", param="name")
        return _token(session, row, hours, now or _now())


def list_users(workbench: Workbench) -> list[UserInfo]:
    """Everyone, by name."""
    with workbench.session() as session:
        rows = session.scalars(select(WebUserRow).order_by(WebUserRow.name)).all()
        return [
            UserInfo(
                r.name,
                tuple(str(x) for x in r.roles),
                r.disabled,
                _aware(r.last_seen) if r.last_seen else None,
            )
            for r in rows
        ]


def disable_user(workbench: Workbench, name: str, *, now: datetime | None = None) -> int:
    """Disable a person: every session ends and every unused link dies; returns sessions ended.

    Raises:
        UsageError: No such user.
    """
    when = now or _now()
    with workbench.session() as session:
        row = _user(session, name)
        row.disabled = True
        ended = session.execute(
            update(WebSessionRow)
            .where(WebSessionRow.user_id == row.id, WebSessionRow.ended_at.is_(None))
            .values(ended_at=when)
        )
        session.execute(
            update(WebSigninRow)
            .where(WebSigninRow.user_id == row.id, WebSigninRow.used_at.is_(None))
            .values(used_at=when)
        )
        return int(getattr(ended, "rowcount", 0) or 0)


def _split(token: str) -> tuple[str, str] | None:
    public, dot, secret = token.partition(".")
    if not dot or not public or not secret or len(token) > 200:
        return None
    return public, secret


def _verify(hashed: str, secret: str) -> bool:
    try:
        return _HASHER.verify(hashed, secret)
    except (VerificationError, InvalidHashError):
        return False


def redeem_link(
    workbench: Workbench, token: str, *, now: datetime | None = None
) -> tuple[str, Viewer] | None:
    """Spend a sign-in token: returns a new session's cookie value and its :class:`Viewer`.

    ``None`` when the token is unknown, wrong, used, expired or its user disabled; a token
    works once (a concurrent second use finds it spent).
    """
    parts = _split(token)
    if parts is None:
        return None
    when = now or _now()
    # Hash the new session's secret before the write transaction (argon2 takes a while; SQLite
    # holds its write lock for the whole transaction).
    public, secret = secrets.token_urlsafe(16), secrets.token_urlsafe(32)
    secret_hash, csrf = _HASHER.hash(secret), secrets.token_hex(32)
    with workbench.session() as session:
        link = session.get(WebSigninRow, parts[0])
        if link is None or link.used_at is not None or _aware(link.expires_at) <= when:
            return None
        if not _verify(link.secret_hash, parts[1]):
            return None
        spent = session.execute(
            update(WebSigninRow)
            .where(WebSigninRow.id == link.id, WebSigninRow.used_at.is_(None))
            .values(used_at=when)
        )
        user = session.get(WebUserRow, link.user_id)
        if not getattr(spent, "rowcount", 0) or user is None or user.disabled:
            return None
        user.last_seen = when
        session.add(
            WebSessionRow(
                id=public,
                user_id=user.id,
                secret_hash=secret_hash,
                csrf=csrf,
                created_at=when,
                expires_at=when + timedelta(hours=SESSION_HOURS),
            )
        )
        found = Viewer(user.id, user.name, frozenset(user.roles), public, csrf)
        cookie = f"{public}.{secret}"
    _remember(public, cookie)  # this worker made the secret: no argon2 check of it here
    return cookie, found


def _remember(session_id: str, cookie: str) -> None:
    with _VERIFIED_LOCK:
        if len(_VERIFIED) > 10_000:
            _VERIFIED.clear()
        _VERIFIED[session_id] = hashlib.sha256(cookie.encode()).hexdigest()


def _secret_ok(row: WebSessionRow, cookie: str, secret: str) -> bool:
    digest = hashlib.sha256(cookie.encode()).hexdigest()
    with _VERIFIED_LOCK:
        known = _VERIFIED.get(row.id)
    if known is not None and hmac.compare_digest(known, digest):
        return True
    if not _verify(row.secret_hash, secret):
        return False
    _remember(row.id, cookie)
    return True


# Every request runs this: one round trip for the session and its user, built once.
_SESSION_AND_USER = (
    select(WebSessionRow, WebUserRow)
    .join(WebUserRow, WebUserRow.id == WebSessionRow.user_id)
    .where(WebSessionRow.id == bindparam("id"))
)


def viewer_of(workbench: Workbench, cookie: str | None) -> Viewer | None:
    """The person a session cookie belongs to, checked against the database now.

    ``None`` for no cookie, an unknown, wrong, ended or expired session, or a disabled user.
    Records the user's last-seen time (at most once a minute).
    """
    parts = _split(cookie or "")
    if parts is None or cookie is None:
        return None
    now = _now()
    with workbench.reading() as session:  # one statement, and at most one single-row update
        found = session.execute(_SESSION_AND_USER, {"id": parts[0]}).one_or_none()
        if found is None:  # no such session, or its user is gone
            return None
        row, user = found
        if row.ended_at is not None or _aware(row.expires_at) <= now:
            return None
        if user.disabled or not _secret_ok(row, cookie, parts[1]):
            return None
        if user.last_seen is None or now - _aware(user.last_seen) > timedelta(minutes=1):
            user.last_seen = now
        return Viewer(user.id, user.name, frozenset(user.roles), row.id, row.csrf)


def end_session(workbench: Workbench, session_id: str) -> None:
    """Sign a session out."""
    with workbench.session() as session:
        session.execute(
            update(WebSessionRow)
            .where(WebSessionRow.id == session_id, WebSessionRow.ended_at.is_(None))
            .values(ended_at=_now())
        )

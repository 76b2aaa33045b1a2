"""Served-at tokens: the server's own measure of how long a form was on screen.

A page with a form carries ``<ms>.<nonce>.<mac>``: when the server served it, a random nonce,
and an HMAC over (person, session, what the form is about, ms, nonce) under a secret only the
server holds. The secret is derived from the workbench's sheet-signing secret
(:func:`casework.labelling.sheet_key`): random, kept in the workbench database, the same for every
worker, never sent to a browser. A submit spends its token once (``web_served_uses``). Entry
points: :class:`ServedClock` (made once per app by :func:`served_clock`); :func:`spend` in the
submit's own transaction (labels, which can be revised), or :func:`refuse_spent` before and
:func:`spend_now` after a decision a library function stores in its own transaction (decisions
are taken once, so a concurrent second submit is refused by the decision itself).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from datetime import UTC, datetime
from typing import NamedTuple

from fastapi import HTTPException
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from casework.labelling import sheet_key
from casework.web._accounts import Viewer
from casework.workbench import WebServedUseRow, Workbench

__all__ = [
    "FORGED",
    "REPLAYED",
    "Served",
    "ServedClock",
    "refuse_spent",
    "served_clock",
    "spend",
    "spend_now",
    "spent",
]

#: Why a submit whose token this server did not make for this person, session and item is refused.
FORGED = "the form is not one this server served you for this item; reload the page"
#: Why a submit whose token was spent already is refused (its time would count twice).
REPLAYED = (
    "this form was submitted already, and its time on screen counted then; reload the page "
    "to answer again"
)
# Workers of one server share a clock; servers sharing a database may be this far apart.
_SKEW_SECONDS = 5.0
_PURPOSE = b"casework-web-served-at"


class Served(NamedTuple):
    """A verified token: seconds since its page was served, and its id in ``web_served_uses``."""

    seconds: float
    token_id: str


class ServedClock:
    """Makes and checks served-at tokens under one server-side key.

    Args:
        key: The secret (32 bytes or more); never leaves the server.
    """

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, who: Viewer, subject: str, at_ms: int, nonce: str) -> str:
        message = json.dumps(["served", who.name, who.session_id, subject, at_ms, nonce])
        return hmac.new(self._key, message.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def token(self, who: Viewer, subject: str, *, at_ms: int | None = None) -> str:
        """A token for a form about ``subject`` served to ``who`` now (or at ``at_ms``)."""
        at = int(time.time() * 1000) if at_ms is None else at_ms
        nonce = secrets.token_hex(8)
        return f"{at}.{nonce}.{self._mac(who, subject, at, nonce)}"

    def check(self, who: Viewer, subject: str, token: str, *, now: float | None = None) -> Served:
        """The seconds since ``token``'s page was served to ``who`` for ``subject``.

        Raises:
            HTTPException: 400 when the token is malformed, forged, made for another person,
                session or item, or dated in the future (beyond a few seconds of clock skew).
        """
        parts = token.split(".")
        if len(parts) != 3 or not parts[0].isdigit() or len(parts[0]) > 15:
            raise HTTPException(400, FORGED)
        at, nonce, mac = int(parts[0]), parts[1], parts[2]
        if not hmac.compare_digest(self._mac(who, subject, at, nonce), mac):
            raise HTTPException(400, FORGED)
        seconds = (time.time() if now is None else now) - at / 1000
        if seconds < -_SKEW_SECONDS:
            raise HTTPException(400, "the form is dated in the future; reload the page")
        # Within the skew allowance a page submitted at once took no time, not negative time.
        return Served(max(0.0, seconds), mac)


def served_clock(workbench: Workbench) -> ServedClock:
    """The app's clock, keyed by a secret derived from the workbench's sheet-signing secret.

    A derived key (not the sheet secret itself) keeps a served token from ever passing for a
    sheet signature, or the other way round.
    """
    with workbench.session() as session:
        base = sheet_key(session)
    assert base is not None  # created on first use
    return ServedClock(hmac.new(base, _PURPOSE, hashlib.sha256).digest())


def spent(session: Session, served: Served) -> bool:
    """Whether a submit already spent this token."""
    return session.get(WebServedUseRow, served.token_id) is not None


def spend(session: Session, served: Served) -> None:
    """Record that a submit spent ``served``, in the caller's transaction.

    Raises:
        HTTPException: 409 when it was spent already (by an earlier or a concurrent submit).
    """
    if spent(session, served):
        raise HTTPException(409, REPLAYED)
    # No savepoint: a conflict refuses the whole submit, and pysqlite would turn a SAVEPOINT
    # opened before any write into the transaction itself (its RELEASE commits).
    session.add(WebServedUseRow(token_id=served.token_id, used_at=datetime.now(UTC)))
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent submit of the same form spent it first
        raise HTTPException(409, REPLAYED) from exc


def refuse_spent(workbench: Workbench, served: Served) -> None:
    """Refuse a submit whose token was spent already, before any work is done for it.

    Raises:
        HTTPException: 409 when it was spent.
    """
    with workbench.reading() as session:
        if spent(session, served):
            raise HTTPException(409, REPLAYED)


def spend_now(workbench: Workbench, served: Served) -> None:
    """Record in a transaction of its own that a stored decision spent ``served``."""
    with workbench.session() as session:
        spend(session, served)

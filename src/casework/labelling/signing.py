"""Sheet signatures: every exported sheet line is bound to the person it was exported for.

A line's ``signature`` is an HMAC over (sheet kind, dataset, labeller, case id) under a secret kept
in the workbench database (never in the repository, never on a sheet). Import recomputes it for
the line's ``labeller``, so editing that field to file a label under someone else's name is
refused. Entry points: :func:`sheet_key`, :func:`line_signature`, :func:`signature_matches`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from casework.workbench.models import Meta

__all__ = ["SIGNATURE_FIELD", "line_signature", "sheet_key", "signature_matches"]

#: The sheet field (JSONL key, CSV column) holding a line's signature.
SIGNATURE_FIELD = "signature"
_META_KEY = "sheet_signing_key"


def sheet_key(session: Session, *, create: bool = True) -> bytes | None:
    """The workbench's sheet-signing secret, created on first use when ``create``.

    Returns ``None`` when there is none and ``create`` is false (no sheet was ever exported).
    """
    row = session.get(Meta, _META_KEY)
    if row is None and create:
        try:
            with session.begin_nested():
                session.add(
                    Meta(key=_META_KEY, value=secrets.token_hex(32), updated_at=datetime.now(UTC))
                )
        except IntegrityError:  # another export created it meanwhile
            pass
        row = session.get(Meta, _META_KEY)
    return None if row is None else bytes.fromhex(row.value)


def line_signature(key: bytes, kind: str, dataset: str, labeller: str, case_id: str) -> str:
    """The signature of one sheet line: HMAC-SHA256 over its identity, 32 hex digits."""
    message = json.dumps(["casework-sheet", 1, kind, dataset, labeller, case_id])
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def signature_matches(
    key: bytes | None, signature: str | None, kind: str, dataset: str, labeller: str, case_id: str
) -> bool:
    """Whether ``signature`` is the one casework gave this line when exporting it."""
    if key is None or not signature or not signature.isascii():
        return False  # a signature is hex digits: anything else is no signature we gave
    expected = line_signature(key, kind, dataset, labeller, case_id)
    return hmac.compare_digest(expected, signature.strip().lower())

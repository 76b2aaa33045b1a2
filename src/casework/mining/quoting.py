"""What trace readers may quote in an error message: scrubbed text, or only a value's JSON type.

A malformed trace line still holds a customer's email, phone or card number; the ``Got …`` part
of a reader's error message goes to a terminal and a CI log. Entry point: :func:`quoted`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from casework.errors import Described
from casework.privacy import Detector, builtin_detectors

__all__ = ["quoted", "scrub_quote"]

# Phone-, card- and account-shaped runs the detectors may not call valid: 7+ digits with the
# separators people write between groups. A message errs towards hiding.
_DIGIT_RUN = re.compile(r"\+?\d(?:[\s().\-/_]*\d){6,}")
# Anything around an `@` the email detector did not take (odd local parts are still addresses).
_AT_TOKEN = re.compile(r"[^\s\"'<>()\[\],;]*@[^\s\"'<>()\[\],;]*")
#: Characters of a string read before scrubbing (the message shows fewer).
_HEAD = 400


@lru_cache(maxsize=1)
def _detectors() -> tuple[Detector, ...]:
    return tuple(builtin_detectors())


def scrub_quote(text: str) -> str:
    """``text`` (its first few hundred characters) with PII replaced by ``<kind>`` markers."""
    head = text[:_HEAD]
    found = sorted(
        (d for detector in _detectors() for d in detector.find(head)),
        key=lambda d: (d.start, -(d.end - d.start)),
    )
    out, at = [], 0
    for d in found:
        if d.start < at:
            continue
        out += [head[at : d.start], f"<{d.kind}>"]
        at = d.end
    out.append(head[at:])
    scrubbed = _DIGIT_RUN.sub("<number>", _AT_TOKEN.sub("<email>", "".join(out)))
    return scrubbed + ("…" if len(text) > _HEAD else "")


def quoted(value: Any) -> Any:
    """The form of a trace value an error message may show after ``Got``.

    Strings, and objects and lists as JSON text, are scrubbed (:func:`scrub_quote`); a number
    long enough to be a phone or card number is only described.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if len(re.sub(r"\D", "", repr(value))) >= 7:
            return Described("a JSON number with 7 or more digits")
        return value
    if isinstance(value, str):
        return scrub_quote(value)
    if isinstance(value, dict | list | tuple):
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return Described(f"a JSON {'object' if isinstance(value, dict) else 'list'}")
        return Described(scrub_quote(text))
    return Described(f"a value of type {type(value).__name__}")

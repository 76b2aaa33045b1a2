"""Privacy: detectors, keyed pseudonyms, scrubbing in memory, residual-PII checks, forget/expire.

Entry points: :func:`load_key`, :func:`scrubber_for` / :class:`Scrubber`, :func:`residual_pii`,
:func:`forget`, :func:`expire`.
"""

from casework.privacy.detectors import Detection, Detector, builtin_detectors, iban_valid, luhn_valid
from casework.privacy.keys import KEY_ENV, MIN_KEY_BYTES, PseudonymKey, load_key
from casework.privacy.known import FieldKinds, KnownValue, collect_known
from casework.privacy.pseudonyms import PSEUDONYM_RE, is_pseudonym, normalise, pseudonym
from casework.privacy.scrub import SCRUB_VERSION, ScrubContext, Scrubber, scrubber_for

__all__ = [
    "KEY_ENV",
    "MIN_KEY_BYTES",
    "PSEUDONYM_RE",
    "SCRUB_VERSION",
    "Detection",
    "Detector",
    "FieldKinds",
    "KnownValue",
    "PseudonymKey",
    "ScrubContext",
    "Scrubber",
    "builtin_detectors",
    "collect_known",
    "iban_valid",
    "is_pseudonym",
    "load_key",
    "luhn_valid",
    "normalise",
    "pseudonym",
    "scrubber_for",
]

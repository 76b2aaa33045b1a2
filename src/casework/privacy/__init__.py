"""Privacy: detectors, keyed pseudonyms, scrubbing in memory, residual-PII checks, forget/expire.

Entry points: :func:`load_key`, :func:`scrubber_for` / :class:`Scrubber`, :func:`residual_pii`
(and :func:`presidio_second_opinion`), :func:`forget`, :func:`expire`, :func:`history_recipe`.
"""

from casework.privacy.checksums import IBAN_LENGTHS, iban_valid, luhn_valid
from casework.privacy.detectors import (
    BUILTIN_KINDS,
    CardDetector,
    Detection,
    Detector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    PhoneDetector,
    StreetAddressDetector,
    UrlDetector,
    id_pattern_detectors,
)
from casework.privacy.keys import (
    KEY_ENV,
    MIN_KEY_BITS,
    MIN_KEY_BYTES,
    MIN_KEY_DISTINCT,
    PseudonymKey,
    check_fingerprints,
    load_key,
)
from casework.privacy.known import FieldKinds, KnownValue, collect_known
from casework.privacy.pseudonyms import PSEUDONYM_RE, is_pseudonym, normalise, pseudonym
from casework.privacy.registry import builtin_detectors
from casework.privacy.residual import (
    RESIDUAL_CHECK,
    case_texts,
    presidio_analyzer,
    presidio_second_opinion,
    residual_pii,
)
from casework.privacy.retention import (
    Removal,
    expire,
    forget,
    history_recipe,
    is_expired,
    subject_pseudonyms,
)
from casework.privacy.scrub import SCRUB_VERSION, Scrubber, ScrubContext, scrubber_for

__all__ = [
    "BUILTIN_KINDS",
    "IBAN_LENGTHS",
    "KEY_ENV",
    "MIN_KEY_BITS",
    "MIN_KEY_BYTES",
    "MIN_KEY_DISTINCT",
    "PSEUDONYM_RE",
    "RESIDUAL_CHECK",
    "SCRUB_VERSION",
    "CardDetector",
    "Detection",
    "Detector",
    "EmailDetector",
    "FieldKinds",
    "IbanDetector",
    "IpDetector",
    "KnownValue",
    "PhoneDetector",
    "PseudonymKey",
    "Removal",
    "ScrubContext",
    "Scrubber",
    "StreetAddressDetector",
    "UrlDetector",
    "builtin_detectors",
    "case_texts",
    "check_fingerprints",
    "collect_known",
    "expire",
    "forget",
    "history_recipe",
    "iban_valid",
    "id_pattern_detectors",
    "is_expired",
    "is_pseudonym",
    "load_key",
    "luhn_valid",
    "normalise",
    "presidio_analyzer",
    "presidio_second_opinion",
    "pseudonym",
    "residual_pii",
    "scrubber_for",
    "subject_pseudonyms",
]

"""Privacy: detectors, keyed pseudonyms, scrubbing in memory, residual-PII checks, forget/expire.

Entry points: :func:`load_key`, :func:`scrubber_for` / :class:`Scrubber`, :func:`residual_pii`
(and :func:`presidio_second_opinion`), :func:`forget`, :func:`expire`, :func:`history_recipe`.
"""

from casework.privacy.detectors import Detection, Detector, id_pattern_detectors
from casework.privacy.keys import PseudonymKey, load_key
from casework.privacy.pseudonyms import normalise, pseudonym
from casework.privacy.registry import builtin_detectors
from casework.privacy.residual import presidio_analyzer
from casework.privacy.retention import history_recipe
from casework.privacy.scrub import Scrubber, scrubber_for

__all__ = [
    "Detection",
    "Detector",
    "PseudonymKey",
    "Scrubber",
    "builtin_detectors",
    "history_recipe",
    "id_pattern_detectors",
    "load_key",
    "normalise",
    "presidio_analyzer",
    "pseudonym",
    "scrubber_for",
]

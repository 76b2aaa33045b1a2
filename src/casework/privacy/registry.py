"""The built-in PII detectors, in the order the scrubber runs them.

Entry point: :func:`builtin_detectors`. It sits above the detector modules (structured values,
national ids, names), which share only :mod:`casework.privacy.detection` among themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from casework.privacy.detection import Detector
from casework.privacy.detectors import (
    CardDetector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    PhoneDetector,
    StreetAddressDetector,
    UrlDetector,
)
from casework.privacy.ids import ExpiryDetector, NationalIdDetector, PostcodeDetector
from casework.privacy.names import NameDetector

__all__ = ["builtin_detectors"]


def builtin_detectors(phone_regions: Sequence[str] = ("US", "GB")) -> list[Detector]:
    """The built-in detectors, in priority order for equal-length overlaps.

    A national id comes before a card or a phone number of the same length: `742-38-1981` is an
    SSN, whatever else its digits could be read as.
    """
    return [
        EmailDetector(),
        UrlDetector(),
        IbanDetector(),
        NationalIdDetector(),
        CardDetector(),
        IpDetector(),
        PostcodeDetector(),
        PhoneDetector(phone_regions),
        StreetAddressDetector(),
        ExpiryDetector(),
        NameDetector(),
    ]

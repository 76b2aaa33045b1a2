"""Debian's chromium for the browser tests (driven by Playwright; no browser is downloaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")

#: The marks of a browser test module (`pytestmark = BROWSER_MARKS`).
BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is missing (CI installs Debian's chromium: apt-get install chromium)",
    ),
]

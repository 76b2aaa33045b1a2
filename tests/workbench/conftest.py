"""Fixtures of the workbench tests: every database here is migrated from nothing."""

from __future__ import annotations

import pytest


@pytest.fixture
def workbench_from_template() -> None:
    """No template copy: these tests are about what the migrations themselves produce."""

"""The examples in the agreement docstrings (published values) run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "casework.agreement.table",
    "casework.agreement.kappa",
    "casework.agreement.bootstrap",
    "casework.agreement.gwet",
    "casework.agreement.fleiss",
    "casework.agreement.krippendorff",
    "casework.agreement.bands",
    "casework.agreement.binary",
    "casework.agreement.clusters",
    "casework.agreement._rates",
    "casework.agreement._ppi",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0

"""Fixtures of the LLM tests: a stub OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.stub_server import StubServer, running_stub


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with running_stub() as server:
        yield server

"""Pytest fixtures for test support servers. Register with ``pytest_plugins = ["tests.support.fixtures"]``
in the root conftest, or import the fixtures into a test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer


@pytest.fixture(scope="session")
def openai_server_session() -> Iterator[OpenAIServer]:
    """One loopback OpenAI-compatible server for the whole session."""
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def openai_server(openai_server_session: OpenAIServer) -> Iterator[OpenAIServer]:
    """The session's OpenAI-compatible server, with an empty script and no recorded requests."""
    openai_server_session.reset()
    yield openai_server_session
    openai_server_session.reset()

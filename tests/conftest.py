"""Fixtures shared by the test modules under tests/ (tests/browser/ adds its own)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from splitbrain_widget.hosts import _headless_engine as engine_mod

from .browser_env import require_browser
from .fake_providers import FakeProvider


@pytest.fixture(scope="module")
def engine() -> Iterator[None]:
    """The headless engine's Chromium, for the tests of one module: skipped (or, with
    SPLITBRAIN_REQUIRE_BROWSER=1, failed) without Chromium, closed with the module's tests."""
    require_browser()
    yield
    engine_mod.shutdown_engine()


@pytest.fixture
def fake() -> Iterator[Callable[..., FakeProvider]]:
    """``fake(provider, **kwargs)`` starts a local fake LLM provider (tests/fake_providers.py) on
    127.0.0.1; every one started is stopped at teardown."""
    started: list[FakeProvider] = []

    def start(provider: str = "openai", **kwargs: Any) -> FakeProvider:
        server = FakeProvider(provider, **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()

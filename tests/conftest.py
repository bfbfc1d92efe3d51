"""Fixtures shared by the test modules under tests/ (tests/browser/ adds its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from splitbrain_widget import _headless_engine as engine_mod

from .browser_env import require_browser


@pytest.fixture(scope="module")
def engine() -> Iterator[None]:
    """The headless engine's Chromium, for the tests of one module: skipped (or, with
    SPLITBRAIN_REQUIRE_BROWSER=1, failed) without Chromium, closed with the module's tests."""
    require_browser()
    yield
    engine_mod.shutdown_engine()

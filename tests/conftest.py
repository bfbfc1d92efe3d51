"""Fixtures shared by the test modules under tests/ (tests/browser/ adds its own)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from splitbrain_widget.hosts import _headless_engine as engine_mod

from .browser_env import require_browser
from .fake_providers import FakeProvider


@pytest.fixture(autouse=True)
def no_lesson_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson policy set on this machine (``SPLITBRAIN_LESSON``, a Jupyter config directory's
    ``splitbrain/lesson.toml``) binds no test in this process; the tests of lessons set their own."""
    from splitbrain_widget.core import _lesson

    monkeypatch.delenv(_lesson.ENV_VAR, raising=False)
    monkeypatch.delenv(_lesson.NOTEBOOK_VAR, raising=False)
    monkeypatch.setattr(_lesson, "_config_dirs", lambda: [])


@pytest.fixture(scope="module")
def engine() -> Iterator[None]:
    """The headless engine's Chromium, for the tests of one module: skipped (or, with
    SPLITBRAIN_REQUIRE_BROWSER=1, failed) without Chromium, closed with the module's tests."""
    require_browser()
    yield
    engine_mod.shutdown_engine()


@pytest.fixture
def no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Linux machine with no browser anywhere the runtime looks (hosts/_browser_finder.py)."""
    from splitbrain_widget.hosts import _browser_finder, _headless_engine

    original = _browser_finder.find_browser

    def nowhere() -> _browser_finder.FoundBrowser:
        return original(
            env={}, platform="linux", playwright_path=lambda: None, exists=lambda path: False, which=lambda n, p: None
        )

    monkeypatch.setattr(_headless_engine, "find_browser", nowhere)
    monkeypatch.setattr(_browser_finder, "find_browser", nowhere)


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


@pytest.fixture
def textbook_projectile() -> Iterator[Any]:
    """A projectile widget on a fake view that answers with the textbook range (no drag)."""
    import splitbrain_widget as sb

    from .fake_view import FakeView
    from .test_seek import textbook

    sim = sb.TargetWidget("projectile")
    FakeView(sim, state_of=textbook)
    yield sim
    sim.close()


@pytest.fixture
def projectile(textbook_projectile: Any) -> Any:
    """The textbook projectile, by the name most tests use (a module with a projectile of its own,
    a headless page or an App widget, overrides it)."""
    return textbook_projectile


@pytest.fixture
def served_textbook(textbook_projectile: Any) -> Iterator[Any]:
    """The textbook projectile served over MCP (``sb.serve_mcp``), stopped after the test."""
    import splitbrain_widget as sb

    running = sb.serve_mcp(textbook_projectile)
    yield running
    running.stop()

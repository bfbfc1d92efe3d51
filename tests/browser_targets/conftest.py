"""Fixtures of the built-in targets' browser tests: one Chromium and one host page per session.

Every test here is marked ``browser``. Without Chromium or the playwright package the tests skip
with a message; with ``SPLITBRAIN_REQUIRE_BROWSER=1`` they fail instead. No Jupyter is involved:
``host.py``'s page plays the widget view's part (docs/protocol.md, section 2).

``SPLITBRAIN_SAVE_SCREENSHOTS=1`` writes the light and dark screenshots to docs/img/targets/
(the README's pictures) instead of a temporary folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..browser_env import require_browser
from .host import DEFAULT_HEIGHT, DEFAULT_WIDTH, TargetHost, chromium, host_server

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FPS: dict[str, tuple[float, float]] = {}  # target id -> (fps, script ms per frame)
FIGURES: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("built-in targets: physics checks")
        for line in FIGURES:
            terminalreporter.write_line(line)
    if FPS:
        terminalreporter.section(
            f"built-in targets: frames per second at {DEFAULT_WIDTH}x{DEFAULT_HEIGHT} (headless Chromium)"
        )
        for target_id, (fps, frame_ms) in sorted(FPS.items()):
            terminalreporter.write_line(f"{target_id:<12} {fps:6.1f} fps   {frame_ms:5.2f} ms of script per frame")


def record_figure(line: str) -> None:
    """A physics check's figures, printed now and again in the terminal summary."""
    print(line)
    FIGURES.append(line)


@pytest.fixture(scope="session")
def target_browser() -> Iterator[Any]:
    require_browser()
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="session")
def host_url() -> Iterator[str]:
    require_browser()
    with host_server() as url:
        yield url


@pytest.fixture(scope="session")
def _host_session(target_browser: Any, host_url: str) -> Iterator[TargetHost]:
    context = target_browser.new_context(viewport={"width": DEFAULT_WIDTH + 60, "height": DEFAULT_HEIGHT + 60})
    context.set_default_timeout(20_000)
    try:
        yield TargetHost(context.new_page(), host_url)
    finally:
        context.close()


@pytest.fixture
def host(_host_session: TargetHost) -> TargetHost:
    """The session's host page, in the light colour scheme; each test loads its target into it."""
    _host_session.page.emulate_media(color_scheme="light")
    return _host_session


@pytest.fixture
def hidpi_host(target_browser: Any, host_url: str) -> Iterator[TargetHost]:
    """A host page with devicePixelRatio 2."""
    context = target_browser.new_context(
        viewport={"width": DEFAULT_WIDTH + 60, "height": DEFAULT_HEIGHT + 60}, device_scale_factor=2
    )
    context.set_default_timeout(20_000)
    try:
        yield TargetHost(context.new_page(), host_url)
    finally:
        context.close()


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    if os.environ.get("SPLITBRAIN_SAVE_SCREENSHOTS") == "1":
        folder = ROOT / "docs" / "img" / "targets"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path

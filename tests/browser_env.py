"""Is a browser here? One answer for every real-browser layer (tests/browser, tests/browser_targets)
and the benchmarks: a Chromium-family browser driven by the playwright package (on the project's build
machines Debian's /usr/bin/chromium: they cannot download a browser; elsewhere the browser the runtime
finds, hosts/_browser_finder.py).

Without them the tests skip with a message; with ``SPLITBRAIN_REQUIRE_BROWSER=1`` (set by .ci/run)
they fail instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Coroutine
from typing import Any, TypeVar

from splitbrain_widget.hosts._browser_finder import BrowserNotFound, find_browser
from splitbrain_widget.hosts._headless_engine import CHROMIUM_ARGS as ENGINE_ARGS

T = TypeVar("T")

# The headless engine's flags (one definition), and --no-sandbox: the tests run as root in CI.
CHROMIUM_ARGS = ["--no-sandbox", *ENGINE_ARGS]


def stop_process_group(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """End a server started in its own process group: SIGTERM, then SIGKILL, never by name."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue


def chromium_path() -> str | None:
    """``/usr/bin/chromium`` (the build machines'), else the browser the runtime finds, else None."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    try:
        return find_browser().path
    except BrowserNotFound:
        return None


def unavailable_reason() -> str | None:
    """Why the browser layers cannot run here, or None when they can."""
    if chromium_path() is None:
        try:
            find_browser()
        except BrowserNotFound as exc:
            return f"no browser for the browser tests: {exc}"
    try:
        import playwright.sync_api  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the environment
        return (
            f"a browser is here, but the playwright Python package is not importable ({exc}): pip install -e '.[dev]'"
        )
    return None


def require_browser() -> None:
    """Skip the calling test when no browser is here, or fail it under SPLITBRAIN_REQUIRE_BROWSER=1."""
    import pytest

    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("SPLITBRAIN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (SPLITBRAIN_REQUIRE_BROWSER=1, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a thread of its own: in the browser layer Playwright's sync API keeps an
    event loop running on the test's thread, where ``asyncio.run`` refuses to start."""
    import asyncio
    import threading

    box: list[Any] = []

    def work() -> None:
        try:
            box.append((True, asyncio.run(coroutine)))
        except BaseException as exc:  # handed to the caller below
            box.append((False, exc))

    thread = threading.Thread(target=work, name="test-asyncio")
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]

"""Is a browser here? One answer for every real-browser layer (tests/browser, tests/browser_targets)
and the benchmarks: Debian's Chromium driven by the playwright package, never a downloaded browser.

Without them the tests skip with a message; with ``SPLITBRAIN_REQUIRE_BROWSER=1`` (set by .ci/run)
they fail instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Coroutine
from typing import Any, TypeVar

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
    """Debian's Chromium: ``/usr/bin/chromium``, else ``chromium`` on PATH."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def unavailable_reason() -> str | None:
    """Why the browser layers cannot run here, or None when they can."""
    if chromium_path() is None:
        return (
            "Chromium not found: apt-get install chromium (the browser tests need /usr/bin/chromium or "
            "`chromium` on PATH; never `playwright install`)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the environment
        return (
            f"Chromium found, but the playwright Python package is not importable ({exc}): "
            "pip install -e '.[dev]' (the browser is Debian's chromium; never `playwright install`)"
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

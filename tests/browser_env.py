"""Is a browser here? One answer for every real-browser layer (tests/browser, tests/browser_targets)
and the benchmarks: Debian's Chromium driven by the playwright package, never a downloaded browser.

Without them the tests skip with a message; with ``SPLITBRAIN_REQUIRE_BROWSER=1`` (set by .ci/run)
they fail instead.
"""

from __future__ import annotations

import os
import shutil

# Headless Chromium on a machine with a closed network: without the background-networking flags it
# keeps trying to reach Google's hosts. (Playwright adds --headless itself when asked for headless.)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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

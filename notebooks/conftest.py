"""nbval on the example notebooks (``make notebooks``): their calls run on headless pages.

nbval renders no widget, so no notebook view ever answers; with ``SPLITBRAIN_HEADLESS=1`` every
widget runs its calls on a page in headless Chromium instead, and the stored outputs are what the
pages measured (build_notebooks.py stores them the same way). Without Chromium or playwright the
notebooks skip with the reason; under ``SPLITBRAIN_REQUIRE_BROWSER=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/browser_env.py, from any cwd

from tests.browser_env import require_browser  # noqa: E402

# The kernels nbval starts inherit this process's environment: set it before any starts.
os.environ["SPLITBRAIN_HEADLESS"] = "1"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail) each notebook cell before nbval starts a kernel for its notebook."""
    require_browser()

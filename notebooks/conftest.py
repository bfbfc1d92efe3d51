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

# notebooks/lite/ holds the notebooks a JupyterLite site serves (python -m splitbrain_widget lite build):
# they install the package with %pip and await in the browser's Pyodide kernel, which nbval does not
# run; tests/browser/test_lite_browser.py runs them in a real site.
collect_ignore = ["lite"]

# The kernels nbval starts inherit this process's environment: set it before any starts.
os.environ["SPLITBRAIN_HEADLESS"] = "1"


# A widget output's record of its simulation (its values) is updated in place after every later cell
# that calls the widget (splitbrain_widget/features/_pictures.py), and the stored notebooks hold it as
# it was after the last; nbval compares each output when its own cell ends and ignores the updates.
# What the records say is tested by tests/browser/test_notebook_pictures_browser.py (each stored
# notebook exported: every page runs at its record's values). Its picture's pixels and words are
# sanitized in sanitize.cfg; image/png nbval skips itself.
SIMULATION_MIME = "application/vnd.splitbrain.simulation+json"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail) each notebook cell before nbval starts a kernel for its notebook."""
    require_browser()
    notebook = item.parent
    skip = getattr(notebook, "skip_compare", None)
    if isinstance(skip, tuple) and SIMULATION_MIME not in skip:
        notebook.skip_compare = (*skip, SIMULATION_MIME)

"""Zero install (#47): the browser quickstart in a JupyterLite site, in Chromium, reaching no other host.

The site is built by the product (``python -m splitbrain_widget lite build --pyodide DIR --wheels
DIR``) from a local Pyodide and the package's dependency wheels (``tests/browser/lite_site.py``),
served on 127.0.0.1; every request to another host is refused and counted (the passing figure is
zero). The quickstart (``notebooks/lite/quickstart.ipynb``) runs cell by cell, as a person runs it:
the package installs from the site's own index, a widget shows its sandboxed target, a call in a
cell is answered ``deferred`` and the page takes it, the next cell reads what the page measured,
and the chat panel's offline planner changes the page. The time from opening the notebook to its
last cell is printed (``benchmarks/lite.py`` records it).
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import lite_site
from .harness import wait_for
from .lite_site import QUICKSTART, outputs, page_state, run_cell

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("jupyterlite_core", reason="the site is built with jupyterlite-core (the dev extras)")
    started = time.monotonic()
    try:
        site = lite_site.build_site(tmp_path_factory.mktemp("lite") / "site")
    except lite_site.LiteUnavailable as exc:
        pytest.fail(f"the site's parts could not be fetched: {exc}")
    print(f"\nnote: the site's parts and lite build took {time.monotonic() - started:.1f} s")
    url, stop = lite_site.serve(site)
    try:
        yield url
    finally:
        stop()


def test_the_quickstart_runs_in_a_jupyterlite_site_and_reaches_no_other_host(browser: Any, served: str) -> None:
    context, refused = lite_site.gated_context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        opened = time.monotonic()
        lite_site.open_notebook(page, served, QUICKSTART.name)
        for cell in (1, 2):  # install from the site's own index; the widget and its sandboxed page
            run_cell(page, cell)
        assert "Error" not in outputs(page, 1) + outputs(page, 2), outputs(page, 1) + outputs(page, 2)
        wait_for(lambda: page_state(page).get("launch.angle") == 45, timeout=60, what="the page's first state")
        run_cell(page, 3)  # a call in a cell: sent and kept, answered deferred
        assert outputs(page, 3).split() == ["deferred", "30"], outputs(page, 3)
        wait_for(lambda: page_state(page).get("launch.angle") == 30, timeout=60, what="the page to take 30 deg")
        run_cell(page, 5)  # the page's answer reached Python between the cells
        expected = 25**2 * math.sin(math.radians(60)) / 9.81
        assert outputs(page, 5).strip() == f"range {expected:.1f} m at 30 deg", outputs(page, 5)
        box = page.locator(".sb-panel textarea").first  # the chat panel's offline planner
        box.fill("set the angle to 60")
        box.press("Enter")
        wait_for(lambda: page_state(page).get("launch.angle") == 60, timeout=120, what="the panel's change")
        wait_for(
            lambda: any("60" in t for t in page.locator(".sb-msg.sb-assistant").all_inner_texts()),
            timeout=60,
            what="the panel's answer",
        )
        run_cell(page, 7)
        assert "Launch angle 60 deg" in outputs(page, 7), outputs(page, 7)
        print(f"\nnote: JupyterLite quickstart, open to last cell (one at a time): {time.monotonic() - opened:.1f} s")
        assert refused == [], refused
        assert errors == [], errors
    except Exception:
        page.screenshot(path=str(Path(tempfile.gettempdir()) / "splitbrain-lite-failure.png"))
        raise
    finally:
        context.close()

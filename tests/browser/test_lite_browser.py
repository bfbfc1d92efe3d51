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

from ..fake_providers import FakeProvider, call, say
from . import lite_site
from .harness import wait_for
from .lite_site import QUICKSTART, outputs, page_state, run_cell

pytestmark = pytest.mark.browser


MODELS = "models.ipynb"


@pytest.fixture(scope="module")
def providers() -> Iterator[tuple[FakeProvider, FakeProvider]]:
    """Two OpenAI-compatible model servers on 127.0.0.1, one that allows any origin (CORS), one that does not."""
    open_, closed = FakeProvider("openai", cors=True), FakeProvider("openai")
    open_.script(call("set_parameters", {"values": {"launch.angle": 50}}), say("Set the angle to 50 deg."))
    closed.script(say("never heard"))
    try:
        yield open_, closed
    finally:
        open_.stop()
        closed.stop()


def models_notebook(folder: Path, open_: FakeProvider, closed: FakeProvider) -> Path:
    """A notebook whose two chat panels answer with a real model's client, from two servers."""
    import nbformat

    def cell(url: str) -> str:
        return (
            "import os\nimport splitbrain_widget as sb\n"
            f"os.environ.update(SPLITBRAIN_MODEL='openai:{open_.model}', OPENAI_BASE_URL='{url}/v1', "
            "OPENAI_API_KEY='test-key')\n"
            "sim = sb.TargetWidget('projectile', chat=True)\nsim"
        )

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(s)
        for s in ("%pip install splitbrain-widget openai", cell(open_.url), cell(closed.url))
    ]
    nb.metadata["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    path = folder / MODELS
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, providers: tuple[FakeProvider, FakeProvider]) -> Iterator[str]:
    pytest.importorskip("jupyterlite_core", reason="the site is built with jupyterlite-core (the dev extras)")
    started = time.monotonic()
    folder = tmp_path_factory.mktemp("lite")
    try:
        site = lite_site.build_site(folder / "site", [QUICKSTART, models_notebook(folder, *providers)])
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


def test_a_real_models_client_answers_from_the_browser_where_its_server_allows_the_sites_origin(
    browser: Any, served: str, providers: tuple[FakeProvider, FakeProvider]
) -> None:
    """The openai client installs in the browser and reaches a model server from the chat panel when
    that server allows the site's origin (CORS: Access-Control-Allow-Origin); from one that does not,
    the browser refuses the answer, and the panel says the run failed and that nothing changed."""
    open_, closed = providers
    context, refused = lite_site.gated_context(browser)
    page = context.new_page()
    try:
        lite_site.open_notebook(page, served, MODELS)
        run_cell(page, 0)
        run_cell(page, 1)
        assert "Error" not in outputs(page, 0) + outputs(page, 1), outputs(page, 0) + outputs(page, 1)
        wait_for(lambda: page_state(page).get("launch.angle") == 45, timeout=60, what="the first page")
        panels = page.locator(".sb-panel textarea")
        panels.nth(0).fill("set the angle to 50")
        panels.nth(0).press("Enter")
        wait_for(lambda: page_state(page).get("launch.angle") == 50, timeout=120, what="the model's change")
        wait_for(
            lambda: any("50" in t for t in page.locator(".sb-msg.sb-assistant").all_inner_texts()),
            timeout=60,
            what="the model's answer",
        )
        assert len(open_.requests) == 2  # the tool call, then the answer
        run_cell(page, 2)
        wait_for(lambda: panels.count() == 2, timeout=60, what="the second panel")
        panels.nth(1).fill("set the angle to 20")
        panels.nth(1).press("Enter")
        second = page.locator(".sb-log").nth(1)
        wait_for(lambda: "Connection error" in second.inner_text(), timeout=120, what="the failed run",
                 describe=second.inner_text)  # fmt: skip
        assert "No change was made" in second.inner_text(), second.inner_text()
        print(f"\nnote: a server without CORS, as the panel says it: {' / '.join(second.inner_text().splitlines())}")
        # the request may reach it (sent as a CORS "simple request", with no preflight), but the browser
        # refuses its answer to the page, so Python never hears "never heard"
        assert "never heard" not in second.inner_text() and len(closed.requests) <= 1, closed.requests
        assert refused == []
    finally:
        context.close()

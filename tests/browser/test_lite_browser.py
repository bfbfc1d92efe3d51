"""Zero install (#47): the browser quickstart in a JupyterLite site, in Chromium, reaching no other host.

The site is built by the product (``python -m splitbrain_widget lite build --pyodide DIR --wheels
DIR``) from a local Pyodide and the package's dependency wheels (``tests/browser/lite_site.py``),
served on 127.0.0.1; every request to another host is refused and counted (the passing figure is
zero). The quickstart (``notebooks/lite/quickstart.ipynb``) runs top to bottom: the package installs
from the site's own index, a widget shows its sandboxed target, an awaited ``set_parameters``
changes the page (read back from its state), the offline planner answers from Python and from the
chat panel. The time from opening the notebook to its last cell is printed.
"""

from __future__ import annotations

import functools
import http.server
import importlib.metadata
import json
import math
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

import pytest

from . import lite_site
from .harness import wait_for

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "lite" / "quickstart.ipynb"


def requirements() -> list[str]:
    """The package's dependencies as the browser installs them (the emscripten markers left out):
    the ones the other layers test at the versions they test; the kernel's own (traitlets) as its
    Pyodide lock pins them."""
    pinned = [f"{n}=={importlib.metadata.version(n)}" for n in ("anywidget", "pydantic", "pydantic-ai-slim", "pint")]
    # httpx2's own dependency in the browser (a marker pip, fetching for another platform, does not see)
    browser_only = ["httpx2-jsfetch"]
    return [*pinned, "ipywidgets>=7.6", "traitlets>=5.9", "typing_extensions>=4.6", "tqdm>=4.66", *browser_only]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("jupyterlite_core", reason="the site is built with jupyterlite-core (the dev extras)")
    try:
        pyodide = lite_site.local_pyodide()
        wheels = lite_site.dependency_wheels(requirements())
    except lite_site.LiteUnavailable as exc:
        pytest.fail(f"the site's parts could not be fetched: {exc}")
    out = tmp_path_factory.mktemp("lite") / "site"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "lite", "build", str(QUICKSTART), "-o", str(out),
         "--pyodide", str(pyodide), "--wheels", str(wheels), "--expose-app"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    print(f"\nnote: lite build took {time.monotonic() - started:.1f} s")
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


def outputs(page: Any, cell: int) -> str:
    return str(
        page.evaluate(
            """(i) => {
              const c = window.jupyterapp.shell.currentWidget.content.widgets[i];
              return c && c.outputArea ? c.outputArea.node.innerText : "";
            }""",
            cell,
        )
    )


def run_cell(page: Any, cell: int) -> None:
    """Run one cell, as a person does with Shift+Enter, and wait for it to end and the kernel to be idle."""
    page.evaluate(
        """(i) => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = i;
                    window.jupyterapp.commands.execute('notebook:run-cell'); }""",
        cell,
    )

    def ended() -> bool:
        count = page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount", cell
        )
        status = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status")
        return bool(count) and status == "idle"

    wait_for(ended, timeout=180, what=f"cell {cell} to run", describe=lambda: outputs(page, cell))


def page_state(page: Any) -> dict[str, Any]:
    """The projectile's state as its page keeps it (the kit's ``body.dataset.state``), in the target's
    frame inside the view's sandbox frame."""
    for frame in page.frames:
        try:
            text = frame.evaluate("() => (document.body && document.body.dataset.state) || ''")
        except Exception:  # a frame going away, or one the sandbox keeps closed
            continue
        if text:
            return dict(json.loads(text))
    return {}


def test_the_quickstart_runs_in_a_jupyterlite_site_and_reaches_no_other_host(browser: Any, served: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    refused: list[str] = []

    def gate(route: Any) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    context.route("**/*", gate)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        opened = time.monotonic()
        page.goto(f"{served}/lab/index.html?path={QUICKSTART.name}")
        wait_for(
            lambda: page.evaluate("() => !!window.jupyterapp && !!window.jupyterapp.shell.currentWidget"),
            timeout=60,
            what="the notebook",
        )
        wait_for(
            lambda: page.evaluate(
                "() => window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel?.status === 'idle'"
            ),
            timeout=120,
            what="the Pyodide kernel to start",
        )
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

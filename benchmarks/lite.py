"""The classroom in the browser (JupyterLite): how long a student waits, from opening the quickstart to
its last cell, on a site that reaches no host but 127.0.0.1.

The site is the browser layer's (``tests/browser/lite_site.py``: the product's ``lite build`` with a
local Pyodide and every wheel beside the package), served on 127.0.0.1 and opened in headless
Chromium with every other host refused. Measured: the Pyodide kernel's start, the package's install
from the site's index (``%pip install splitbrain-widget``), the widget with its sandboxed page ready,
a call in a cell and the page taking it, and the whole run cell by cell (as a person runs it, each
cell started once the previous one ended). ``python -m benchmarks lite``; ``run(smoke=True)``: one
run (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

RUNS, SMOKE_RUNS = 3, 1


def run(*, smoke: bool = False) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from tests.browser import lite_site
    from tests.browser.harness import wait_for
    from tests.browser_env import CHROMIUM_ARGS, chromium_path

    rows: list[dict[str, float]] = []
    refused_total = 0
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        site = lite_site.build_site(Path(folder) / "site")
        build_s = time.monotonic() - started
        url, stop = lite_site.serve(site)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                try:
                    for _ in range(SMOKE_RUNS if smoke else RUNS):
                        context, refused = lite_site.gated_context(browser)
                        page = context.new_page()
                        t0 = time.monotonic()
                        lite_site.open_notebook(page, url, lite_site.QUICKSTART.name)
                        kernel = time.monotonic()
                        lite_site.run_cell(page, 1)
                        installed = time.monotonic()
                        lite_site.run_cell(page, 2)
                        wait_for(lambda p=page: lite_site.page_state(p).get("launch.angle") == 45, timeout=60,
                                 what="the page")  # fmt: skip
                        widget = time.monotonic()
                        lite_site.run_cell(page, 3)
                        wait_for(lambda p=page: lite_site.page_state(p).get("launch.angle") == 30, timeout=60,
                                 what="the change")  # fmt: skip
                        changed = time.monotonic()
                        for cell in (5, 7):
                            lite_site.run_cell(page, cell)
                        done = time.monotonic()
                        refused_total += len(refused)
                        context.close()
                        rows.append(
                            {
                                "kernel_s": kernel - t0,
                                "install_s": installed - kernel,
                                "widget_s": widget - installed,
                                "change_s": changed - widget,
                                "total_s": done - t0,
                            }
                        )
                finally:
                    browser.close()
        finally:
            stop()
    best = {key: round(min(r[key] for r in rows), 2) for key in rows[0]}
    return {
        "lite": {
            **best,
            "runs": len(rows),
            "build_s": round(build_s, 1),
            "requests_refused": refused_total,
            "pyodide": lite_site.pyodide_version(),
        }
    }

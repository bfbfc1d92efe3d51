"""Round trip kernel -> iframe -> kernel in real JupyterLab + Chromium, with and without TCP_NODELAY.

Each run starts its own isolated JupyterLab (tests/browser/harness.py) and headless Chromium, shows
the bouncer target, and times blocking ``set_parameter`` calls from a plain cell. The same run then
repeats with the server extension switched off (``SPLITBRAIN_NODELAY=0``) so the two are compared
under the same conditions.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ._stats import summary

CALLS = 520  # the first 20 are warm-up and dropped
CELLS = [
    "import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('bouncer', height=200)\nsim",
    "samples = []\n"
    f"for i in range({CALLS}):\n"
    "    t = time.perf_counter(); r = sim.set_parameter('speed', i % 50); dt = time.perf_counter() - t\n"
    "    assert r.ok and r.views_applied == 1, r\n"
    "    samples.append(dt * 1000)\n"
    "print(json.dumps(samples[20:]))",
]


def hops(trace: list[list[Any]]) -> dict[str, Any]:
    """Per-request browser-side durations from the view's trace (see js/widget.js ``trace``)."""
    by_id: dict[str, dict[str, float]] = {}
    for request_id, hop, t in trace:
        by_id.setdefault(request_id, {})[hop] = t
    complete = [h for h in by_id.values() if {"in", "post", "state", "out"} <= h.keys()][20:]
    return {
        "in_view_ms": summary([h["out"] - h["in"] for h in complete]),
        "iframe_and_target_ms": summary([h["state"] - h["post"] for h in complete]),
    }


def measure(nodelay: bool) -> tuple[list[float], dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    from tests.browser.harness import CHROMIUM_ARGS, JupyterServer, NotebookPage, chromium_path

    previous = os.environ.get("SPLITBRAIN_NODELAY")
    os.environ["SPLITBRAIN_NODELAY"] = "1" if nodelay else "0"
    try:
        with tempfile.TemporaryDirectory(prefix="sb-bench-") as base:
            server = JupyterServer("lab", Path(base))
            server.start()
            try:
                name = server.write_notebook("bench.ipynb", CELLS)
                with sync_playwright() as p:
                    browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                    try:
                        page = browser.new_page()
                        nb = NotebookPage(page, server, name, CELLS).open()
                        nb.run_cell(0)
                        nb.wait_view(0)
                        page.evaluate("globalThis.__splitbrainTrace = []")
                        out = nb.run_cell(1, timeout=600)
                        trace = page.evaluate("globalThis.__splitbrainTrace")
                        return [float(x) for x in json.loads(out.strip().splitlines()[-1])], hops(trace)
                    finally:
                        browser.close()
            finally:
                server.shutdown_sessions()
                server.stop()
    finally:
        if previous is None:
            os.environ.pop("SPLITBRAIN_NODELAY", None)
        else:
            os.environ["SPLITBRAIN_NODELAY"] = previous


def run() -> dict[str, Any]:
    samples, browser_hops = measure(nodelay=True)
    on = summary(samples)
    off = summary(measure(nodelay=False)[0])
    outside = round(on["median"] - browser_hops["in_view_ms"]["median"], 3)
    return {
        "roundtrip_browser_ms": on,
        "roundtrip_browser_nodelay_off_ms": off,
        "nodelay_speedup": round(off["median"] / on["median"], 2),
        "roundtrip_browser_hops": {
            **browser_hops,
            "kernel_wire_and_server_ms_median": outside,
            "note": "in_view: from the request reaching the view to its reply leaving it; the rest of the median "
            "round trip is kernel, zmq, jupyter_server and websocket, both ways",
        },
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))

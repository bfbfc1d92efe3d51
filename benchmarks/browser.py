"""Round trip kernel -> iframe -> kernel in real JupyterLab + Chromium, with and without TCP_NODELAY.

Each run starts its own isolated JupyterLab (tests/browser/harness.py) and headless Chromium, shows
the bouncer target, and times blocking ``set_parameter`` calls from a plain cell. The same run then
repeats with the server extension switched off (``SPLITBRAIN_NODELAY=0``) so the two are compared
under the same conditions.
"""

from __future__ import annotations

import json
import os
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
    from tests.browser.harness import notebook_session

    previous = os.environ.get("SPLITBRAIN_NODELAY")
    os.environ["SPLITBRAIN_NODELAY"] = "1" if nodelay else "0"  # read by the server extension at start
    try:
        with notebook_session(CELLS, name="bench.ipynb") as nb:
            nb.run_cell(0)
            nb.wait_view(0)
            nb.page.evaluate("globalThis.__splitbrainTrace = []")
            out = nb.run_cell(1, timeout=600)
            trace = nb.page.evaluate("globalThis.__splitbrainTrace")
            return [float(x) for x in json.loads(out.strip().splitlines()[-1])], hops(trace)
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

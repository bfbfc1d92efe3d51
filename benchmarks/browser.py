"""Round trip kernel -> iframe -> kernel in real JupyterLab + Chromium, with and without TCP_NODELAY.

Each run starts its own isolated JupyterLab (tests/browser/harness.py) and headless Chromium, shows
the bouncer target, and times blocking ``set_parameter`` calls from a plain cell, with the server
extension on and switched off (``SPLITBRAIN_NODELAY=0``), alternating sessions (on, off, on, off) so
the two are compared under the same conditions; and once more with the trait echo sent after every
call (as before it was deferred to a pause between calls), for the ratio.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ._stats import summary

CALLS = 270  # per session; the first 20 are warm-up and dropped
ROUNDS = 2  # sessions per setting, alternated (on, off, on, off): a slow first start hits neither alone
LOOP = (
    "samples = []\n"
    f"for i in range({CALLS}):\n"
    "    t = time.perf_counter(); r = sim.set_parameter('speed', i % 50); dt = time.perf_counter() - t\n"
    "    assert r.ok and r.views_applied == 1, r\n"
    "    samples.append(dt * 1000)\n"
    "    ECHO\n"
    "print(json.dumps(samples[20:]))"
)
CELLS = [
    "import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('bouncer', height=200)\nsim",
    LOOP.replace("ECHO", "pass"),  # as shipped: the trait echo waits for a pause between calls
    # for comparison, the echo sent after every call, as before (the next request queues behind it)
    LOOP.replace("ECHO", "sim._echo.sync()"),
]


def hops(trace: list[list[Any]]) -> dict[str, Any]:
    """Per-request durations (ms) in the sandbox frame, from the relay's trace (js/host/relay.js ``trace``):
    from a request reaching the relay to its reply leaving it, and the target iframe's part of that."""
    by_id: dict[str, dict[str, float]] = {}
    for request_id, hop, t in trace:
        by_id.setdefault(request_id, {})[hop] = t
    complete = [h for h in by_id.values() if {"in", "post", "state", "out"} <= h.keys()][20:]
    return {
        "in_view_ms": [h["out"] - h["in"] for h in complete],
        "iframe_and_target_ms": [h["state"] - h["post"] for h in complete],
    }


def measure(nodelay: bool, cell: int = 1) -> tuple[list[float], dict[str, Any]]:
    from tests.browser.harness import notebook_session

    previous = os.environ.get("SPLITBRAIN_NODELAY")
    os.environ["SPLITBRAIN_NODELAY"] = "1" if nodelay else "0"  # read by the server extension at start
    try:
        with notebook_session(CELLS, name="bench.ipynb") as nb:
            nb.run_cell(0)
            nb.wait_view(0)
            # the relay runs in the view's sandbox frame (js/host/sandbox.js), not the notebook page: its
            # hop trace is kept there
            sandbox = nb.iframe(0).element_handle().content_frame()
            sandbox.evaluate("globalThis.__splitbrainTrace = []")
            out = nb.run_cell(cell, timeout=600)
            trace = sandbox.evaluate("globalThis.__splitbrainTrace")
            return [float(x) for x in json.loads(out.strip().splitlines()[-1])], hops(trace)
    finally:
        if previous is None:
            os.environ.pop("SPLITBRAIN_NODELAY", None)
        else:
            os.environ["SPLITBRAIN_NODELAY"] = previous


def run() -> dict[str, Any]:
    samples: dict[str, list[float]] = {"on": [], "off": [], "echo": [], "echo_off": []}
    trace: dict[str, list[float]] = {"in_view_ms": [], "iframe_and_target_ms": []}
    for _ in range(ROUNDS):
        for setting, nodelay, cell in (("on", True, 1), ("off", False, 1), ("echo", True, 2), ("echo_off", False, 2)):
            got, browser_hops = measure(nodelay, cell)
            samples[setting] += got
            if setting == "on":
                for key in trace:
                    trace[key] += browser_hops[key]
    on, off = summary(samples["on"]), summary(samples["off"])
    echo, echo_off = summary(samples["echo"]), summary(samples["echo_off"])
    in_view = {key: summary(values) for key, values in trace.items()}
    outside = round(on["median"] - in_view["in_view_ms"]["median"], 3)
    return {
        "roundtrip_browser_ms": on,
        "roundtrip_browser_nodelay_off_ms": off,
        "nodelay_speedup": round(off["median"] / on["median"], 2),
        "roundtrip_browser_echo_per_call_ms": echo,
        "deferred_echo_speedup": round(echo["median"] / on["median"], 2),
        # Two messages back to back each way (request, then echo) is where Nagle's algorithm and the
        # browser's delayed ACK meet: this is what the TCP_NODELAY extension is for.
        "roundtrip_browser_echo_per_call_nodelay_off_ms": echo_off,
        "nodelay_speedup_echo_per_call": round(echo_off["median"] / echo["median"], 2),
        "roundtrip_browser_hops": {
            **in_view,
            "kernel_wire_and_server_ms_median": outside,
            "note": "in_view: from the request reaching the relay (in the view's sandbox frame) to its reply "
            "leaving it; the notebook page's hop into that frame is outside it; the rest of the median "
            "round trip is kernel, zmq, jupyter_server and websocket, both ways",
        },
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))

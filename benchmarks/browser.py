"""Round trip kernel -> iframe -> kernel in real JupyterLab + Chromium, with and without TCP_NODELAY.

Each run starts its own isolated JupyterLab (tests/browser/harness.py) and headless Chromium, shows
the bouncer target, and times blocking ``set_parameter`` calls from a plain cell, with the server
extension on and switched off (``SPLITBRAIN_NODELAY=0``), alternating sessions (on, off, on, off) so
the two are compared under the same conditions; and in each session once more with the trait echo
sent after every call (as before it was deferred to a pause between calls), for the ratio.

Where the time goes, from the relay's hop trace (js/host/relay.js ``trace``: when a request reached
the relay in the view's sandbox frame, was posted to the target's iframe, was answered, and its reply
left): the target iframe's part, the sandbox frame's own part (the relay, both ways), and what is
left of the round trip outside the sandbox frame (kernel, zmq, jupyter_server, websocket and the
notebook page's hop into the frame).

``run(smoke=True)``: one session with the extension on and one off, a few calls each
(``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ._stats import summary

WARM_UP = 20  # calls per session dropped before timing
# Calls go in batches with a pause between (untimed), so the kernel's message budget for the page
# (core/_pacing.py: 600 messages/s after a burst of 200) never binds: back to back, 500 calls wait for
# tokens from the ~150th on (about 300 calls/s, 3.3 ms a call), which is that budget, not the latency.
BATCH = 50
PAUSE_S = 0.25  # refills the 100 tokens a batch takes (twice over)


@dataclass(frozen=True)
class Sizes:
    calls: int  # per session, after the warm-up
    rounds: int  # sessions per setting, alternated (on, off, on, off): a slow first start hits neither alone


FULL = Sizes(calls=250, rounds=2)
SMOKE = Sizes(calls=10, rounds=1)
SETTINGS = (("on", True, 1), ("off", False, 1), ("echo", True, 2), ("echo_off", False, 2))
LOOP = (
    "samples = []\n"
    "for i in range({total}):\n"
    "    t = time.perf_counter(); r = sim.set_parameter('speed', i % 50); dt = time.perf_counter() - t\n"
    "    assert r.ok and r.views_applied == 1, r\n"
    "    samples.append(dt * 1000)\n"
    "    {echo}\n"
    "    if i % {batch} == {batch} - 1: time.sleep({pause})\n"
    "print(json.dumps(samples[{warm_up}:]))"
)


def cells(calls: int) -> list[str]:
    """The notebook: the widget, the loop as shipped, and the loop with the echo after every call."""
    sizes = {"total": WARM_UP + calls, "warm_up": WARM_UP, "batch": BATCH, "pause": PAUSE_S}
    return [
        "import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('bouncer', height=200)\nsim",
        LOOP.format(echo="pass", **sizes),  # as shipped: the trait echo waits for a pause between calls
        # for comparison, the echo sent after every call, as before (the next request queues behind it)
        LOOP.format(echo="sim._echo.sync()", **sizes),
    ]


def hops(trace: list[list[Any]]) -> dict[str, list[float]]:
    """Per-request durations (ms) in the sandbox frame, from the relay's trace (js/host/relay.js ``trace``):
    from a request reaching the relay to its reply leaving it (``in_view_ms``), the target iframe's part
    of that (``iframe_and_target_ms``: posted to the page until its answer came back) and the sandbox
    frame's own part (``sandbox_relay_ms``: reached the relay until posted, plus answered until replied).
    The warm-up requests are dropped."""
    by_id: dict[str, dict[str, float]] = {}
    for request_id, hop, t in trace:
        by_id.setdefault(request_id, {})[hop] = t
    complete = [h for h in by_id.values() if {"in", "post", "state", "out"} <= h.keys()][WARM_UP:]
    return {
        "in_view_ms": [h["out"] - h["in"] for h in complete],
        "iframe_and_target_ms": [h["state"] - h["post"] for h in complete],
        "sandbox_relay_ms": [(h["post"] - h["in"]) + (h["out"] - h["state"]) for h in complete],
    }


def measure(nodelay: bool, cell: int, calls: int) -> tuple[list[float], dict[str, list[float]]]:
    """One JupyterLab session: the round trips (ms) of loop ``cell`` and the relay's hops meanwhile."""
    return session(nodelay, (cell,), calls)[cell]


def session(nodelay: bool, loops: tuple[int, ...], calls: int) -> dict[int, tuple[list[float], dict[str, list[float]]]]:
    """One JupyterLab session running each loop cell of ``loops`` in turn: per cell, its round trips
    (ms) and the relay's hops meanwhile."""
    from tests.browser.harness import notebook_session

    previous = os.environ.get("SPLITBRAIN_NODELAY")
    os.environ["SPLITBRAIN_NODELAY"] = "1" if nodelay else "0"  # read by the server extension at start
    try:
        with notebook_session(cells(calls), name="bench.ipynb") as nb:
            nb.run_cell(0)
            nb.wait_view(0)
            # the relay runs in the view's sandbox frame (js/host/sandbox.js), not the notebook page: its
            # hop trace is kept there
            sandbox = nb.iframe(0).element_handle().content_frame()
            out: dict[int, tuple[list[float], dict[str, list[float]]]] = {}
            for cell in loops:
                sandbox.evaluate("globalThis.__splitbrainTrace = []")
                printed = nb.run_cell(cell, timeout=600)
                trace = sandbox.evaluate("globalThis.__splitbrainTrace")
                out[cell] = [float(x) for x in json.loads(printed.strip().splitlines()[-1])], hops(trace)
            return out
    finally:
        if previous is None:
            os.environ.pop("SPLITBRAIN_NODELAY", None)
        else:
            os.environ["SPLITBRAIN_NODELAY"] = previous


def run(*, smoke: bool = False) -> dict[str, Any]:
    sizes = SMOKE if smoke else FULL
    samples: dict[str, list[float]] = {setting: [] for setting, _, _ in SETTINGS}
    trace: dict[str, list[float]] = {"in_view_ms": [], "iframe_and_target_ms": [], "sandbox_relay_ms": []}
    for _ in range(sizes.rounds):
        for nodelay in (True, False):  # a session each (the server reads it at start), both loops in it
            kept = [(setting, cell) for setting, on, cell in SETTINGS if on == nodelay]
            got = session(nodelay, tuple(cell for _, cell in kept), sizes.calls)
            for setting, cell in kept:
                samples[setting] += got[cell][0]
                if setting == "on":
                    for key in trace:
                        trace[key] += got[cell][1][key]
    if not trace["in_view_ms"]:
        raise RuntimeError("the relay traced no complete request: is globalThis.__splitbrainTrace set in its frame?")
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
            "leaving it, of which iframe_and_target is the target's iframe (posted until answered) and "
            "sandbox_relay the sandbox frame's own part (the relay, both ways); the notebook page's hop into "
            "that frame is outside it, with the rest of the median round trip: kernel, zmq, jupyter_server "
            "and websocket, both ways",
        },
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))

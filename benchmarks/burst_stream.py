"""Burst and stream in real JupyterLab + Chromium, against the counter target (benchmarks/targets/).

- burst: 10,000 applies issued (concurrently, async) in the cell that displays the widget, before its
  target is ready (it signals ready after 1.5 s): how many were applied, in order, duplicated, and the
  time from ready to the last apply (drain);
- stream: applies at 1,000 per second for 10 s while the target animates, once through the async API
  (every value sent) and once through ``sim.stream`` (coalescing: latest value per parameter wins).
  The plain stream reports how many values were given and how many the page applied (every value
  sent should arrive), both streams the target's frame rate before and during the stream.

The counter counts frames by distinct requestAnimationFrame timestamps: with three sandboxed iframes
in the notebook, headless Chromium calls each one's rAF callback three times per frame (see
targets/counter.html).

``SPLITBRAIN_BENCH_CELL_TIMEOUT`` (seconds, default 600) bounds each measuring cell, for a quicker
failure while the burst path is being worked on.

``run(smoke=True)``: a burst of 200 and streams of 1 s (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_TARGETS = Path(__file__).resolve().parent / "targets"
CELL_TIMEOUT_S = float(os.environ.get("SPLITBRAIN_BENCH_CELL_TIMEOUT", "600"))


@dataclass(frozen=True)
class Sizes:
    burst: int  # applies issued before the target is ready
    stream_s: int  # seconds of each stream, at 1,000 applies a second


# Tall enough for the notebook's three views at once: Chromium runs no requestAnimationFrame in a
# target scrolled out of sight (JupyterLab's cells have content-visibility: auto), and the frame rates
# read 0 at the default 720 px, where the stream's two widgets fall below the fold.
VIEWPORT = {"width": 1280, "height": 1600}
FULL = Sizes(burst=10_000, stream_s=10)
SMOKE = Sizes(burst=200, stream_s=1)
SETUP = (
    "import splitbrain_widget as sb, asyncio, time, json\n"
    f"from IPython.display import display\nT = {str(BENCH_TARGETS)!r}"
)
BURST = (
    "sim = sb.TargetWidget('counter', targets_dir=T, timeout=600, height=80)\n"
    "display(sim)\n"
    "t0 = time.perf_counter()\n"
    "results = await asyncio.gather(*[sim.aset_parameter('seq', i) for i in range(BURST_N)])\n"
    "total = time.perf_counter() - t0\n"
    "s = (await sim.afetch_state()).state\n"
    "print(json.dumps({'sent': BURST_N, 'replied_ok': sum(r.ok for r in results), 'applied': s['applied'],\n"
    "  'in_order': s['in_order'], 'duplicates': s['duplicates'], 'drain_ms': s['drain_ms'],\n"
    "  'total_s': round(total, 2)}))"
)
STREAM_WIDGETS = (
    "a = sb.TargetWidget('counter', targets_dir=T, timeout=600, height=80)\n"
    "b = sb.TargetWidget('counter', targets_dir=T, timeout=600, height=80)\n"
    "display(a, b)"
)
STREAM_ASYNC = (
    "idle = (await a.afetch_state()).state['fps']\n"
    "tasks, n, t0 = [], 0, time.perf_counter()\n"
    "while (now := time.perf_counter()) - t0 < STREAM_S:\n"
    "    while n < int((now - t0) * 1000):\n"
    "        tasks.append(asyncio.ensure_future(a.aset_parameter('seq', n))); n += 1\n"
    "    await asyncio.sleep(0.001)\n"
    "await asyncio.gather(*tasks); duration = time.perf_counter() - t0\n"
    "s = (await a.afetch_state()).state\n"
    "print(json.dumps({'given': n, 'applied': s['applied'], 'applied_per_s': round(s['applied'] / duration),\n"
    "  'replied_ok': sum(t.result().ok for t in tasks), 'in_order': s['in_order'], 'duplicates': s['duplicates'],\n"
    "  'duration_s': round(duration, 2), 'fps': s['fps_during'], 'fps_idle': idle}))"
)
STREAM_COALESCED = (
    "idle = b.fetch_state().state['fps']\n"
    "n, t0 = 0, time.perf_counter()\n"
    "while (now := time.perf_counter()) - t0 < STREAM_S:\n"
    "    while n < int((now - t0) * 1000):\n"
    "        b.stream({'seq': n}); n += 1\n"
    "    time.sleep(0.001)\n"
    "b.flush_stream(60); duration = time.perf_counter() - t0\n"
    "s = b.fetch_state().state\n"
    "print(json.dumps({'given': n, 'applied': s['applied'], 'applied_per_s': round(s['applied'] / duration),\n"
    "  'last': s['last'], 'in_order': s['in_order'], 'fps': s['fps_during'], 'fps_idle': idle,\n"
    "  'coalesced': b.stream_stats.coalesced}))"
)


def burst_cell(sizes: Sizes) -> str:
    return BURST.replace("BURST_N", str(sizes.burst))


def cells(sizes: Sizes) -> list[str]:
    """The notebook: set-up, the burst, the stream's two widgets, the plain stream, the coalesced one."""
    stream_s = str(sizes.stream_s)
    return [
        SETUP,
        burst_cell(sizes),
        STREAM_WIDGETS,
        STREAM_ASYNC.replace("STREAM_S", stream_s),
        STREAM_COALESCED.replace("STREAM_S", stream_s),
    ]


def run(*, smoke: bool = False) -> dict[str, Any]:
    from tests.browser.harness import notebook_session

    with notebook_session(cells(SMOKE if smoke else FULL), name="burst.ipynb", viewport=VIEWPORT) as nb:
        nb.run_cell(0)
        burst = json.loads(nb.run_cell(1, timeout=CELL_TIMEOUT_S).strip().splitlines()[-1])
        nb.run_cell(2)
        nb.wait_view(2, 0)
        nb.wait_view(2, 1)
        plain = json.loads(nb.run_cell(3, timeout=CELL_TIMEOUT_S).strip().splitlines()[-1])
        coalesced = json.loads(nb.run_cell(4, timeout=CELL_TIMEOUT_S).strip().splitlines()[-1])
    return {
        "burst": {**burst, "in_order": bool(burst["in_order"]), "duplicates": burst["duplicates"]},
        "stream": {
            **{k: plain[k] for k in ("given", "applied", "replied_ok", "applied_per_s", "duration_s")},
            "in_order": bool(plain["in_order"]),
            "duplicates": plain["duplicates"],
            "fps": plain["fps"],
            "fps_idle": plain["fps_idle"],
            "coalesced": {
                k: coalesced[k] for k in ("given", "applied", "applied_per_s", "last", "fps", "fps_idle", "coalesced")
            },
        },
    }


def burst_runs(n: int) -> dict[str, Any]:
    """The burst alone, ``n`` times in one JupyterLab session (a fresh widget each time): did every
    run apply all 10,000 in order, exactly once? ``python -m benchmarks.burst_stream --runs 10``."""
    from tests.browser.harness import notebook_session

    again = "if 'sim' in globals():\n    sim.close()  # one live page at a time\n" + burst_cell(FULL)
    with notebook_session([SETUP] + [again] * n, name="burst-runs.ipynb") as nb:
        nb.run_cell(0)
        runs = [json.loads(nb.run_cell(i, timeout=CELL_TIMEOUT_S).strip().splitlines()[-1]) for i in range(1, n + 1)]
    perfect = [r["applied"] == r["sent"] == r["replied_ok"] and r["in_order"] and r["duplicates"] == 0 for r in runs]
    drains = sorted(r["drain_ms"] / 1000 for r in runs)
    return {
        "runs": n,
        "perfect_runs": sum(perfect),
        "imperfect": [r for r, ok in zip(runs, perfect, strict=True) if not ok],
        "applied": [r["applied"] for r in runs],
        "drain_s": {"min": round(drains[0], 1), "median": round(drains[n // 2], 1), "max": round(drains[-1], 1)},
        "total_s": [r["total_s"] for r in runs],
    }


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--runs"]:
        print(json.dumps(burst_runs(int(sys.argv[2])), indent=2))
    else:
        print(json.dumps(run(), indent=2))

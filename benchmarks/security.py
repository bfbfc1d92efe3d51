"""What the sandbox's bounds cost and hold, measured (docs/protocol.md, *Bounds*).

- **Memory of a hostile recording.** ``record(60)`` (600 rows) of the security suite's page whose
  states are the worst the bounds let through (just under 1 MiB of JSON that parses into 330,000
  lists), beside the same recording of an honest page (the pendulum), headless: the peak of
  Python's allocations while it runs (tracemalloc) and the kernel's resident memory before and after.
- **A raw flood beside an honest widget, in JupyterLab.** The page posts raw messages in a tight
  loop for one second; an honest widget beside it is called without pause: its slowest call. Side by
  side in one session: the flood posted to the page's parent (its sandbox frame: the design since
  protocol 1.7) and posted to ``window.top`` (the notebook page: what every flood cost before 1.7,
  and what a page can still do), three times each.

``python -m benchmarks security`` runs it (Chromium needed). ``run(smoke=True)``: recordings of a
few simulated seconds and one flood of each kind, one second long (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Sizes:
    record_s: float  # simulated seconds of the honest and the hostile recording
    short_record_s: float  # of the hostile recording that completes
    flood_runs: int  # of each kind, alternated
    flood_s: float  # wall seconds the honest widget is called per flood


FULL = Sizes(record_s=60, short_record_s=2, flood_runs=3, flood_s=6)
SMOKE = Sizes(record_s=1, short_record_s=0.5, flood_runs=1, flood_s=1)


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _record_peak(sim: Any, seconds: float) -> dict[str, Any]:
    rss_before = _rss_mib()
    tracemalloc.start()
    started = time.perf_counter()
    outcome = "ok"
    rows = 0
    try:
        rows = len(sim.record(seconds, every=0.1))
    except Exception as exc:  # the hostile page may not deliver in time: its deadline ends it, and says so
        outcome = f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "seconds": seconds,
        "outcome": outcome,
        "rows": rows,
        "python_peak_mib": round(peak / 2**20, 1),
        "rss_before_mib": rss_before,
        "rss_after_mib": _rss_mib(),
        "wall_s": round(wall, 2),
    }


def record_memory(sizes: Sizes) -> dict[str, Any]:
    import splitbrain_widget as sb
    from tests import hostile

    with hostile.request_log() as log, tempfile.TemporaryDirectory() as folder:
        pages = hostile.write_pages(Path(folder), log.url)
        with sb.HeadlessTarget("pendulum") as honest:
            honest_figures = _record_peak(honest, sizes.record_s)
        with sb.HeadlessTarget("huge_values", targets_dir=pages) as hostile_page:
            hostile_page.set_parameter("mode", "wide")
            hostile_figures = _record_peak(hostile_page, sizes.record_s)
            # record(60) of this page ends by its deadline (each ~1 MiB state takes about a second to
            # reach Python); a short recording shows the cost of one that completes.
            short_figures = _record_peak(hostile_page, sizes.short_record_s)
    return {"honest": honest_figures, "hostile": hostile_figures, "hostile_short": short_figures}


FLOOD_CELL = """
import json, time
def flood_run(mode):
    w_flood.set_parameter('mode', mode)
    took, until = [], time.monotonic() + FLOOD_S
    while time.monotonic() < until:
        t0 = time.monotonic()
        honest.set_parameter('speed', 1 + len(took) % 40, timeout=60)
        took.append(time.monotonic() - t0)
    return max(took)
print('RUN', json.dumps(flood_run(MODE)))
"""


def flood_cell(mode: str, seconds: float) -> str:
    """The cell that floods in ``mode`` while it calls the honest widget for ``seconds``."""
    return FLOOD_CELL.replace("FLOOD_S", repr(seconds)).replace("MODE", repr(mode))


def flood(sizes: Sizes) -> dict[str, Any]:
    from tests.browser.harness import notebook_session
    from tests.hostile import request_log, write_pages

    with request_log() as log, tempfile.TemporaryDirectory() as folder:
        pages = write_pages(Path(folder) / "pages", log.url)
        d = repr(str(pages))
        cells = [
            "import splitbrain_widget as sb",
            "honest = sb.TargetWidget('pendulum')\nhonest",
            f"w_flood = sb.TargetWidget('raw_flood', targets_dir={d})\nw_flood",
            flood_cell("flood", sizes.flood_s),
            flood_cell("flood_top", sizes.flood_s),
        ]
        worst: dict[str, list[float]] = {"parent": [], "top": []}
        with notebook_session(cells) as nb:
            for cell in (0, 1, 2):
                nb.run_cell(cell)
            nb.wait_view(1)
            nb.wait_view(2)
            for _ in range(sizes.flood_runs):
                for cell, key in ((3, "parent"), (4, "top")):
                    out = nb.run_cell(cell, timeout=180)
                    worst[key].append(round(json.loads(out.split("RUN ", 1)[1].splitlines()[0]), 3))
                    if key == "parent":  # stopped: restart it from its status bar
                        nb.wait_view(2, status="error")
                        nb.views(2).locator(".sb-restart").click()
                        nb.wait_view(2)
        reached = log.count()
    parent, top = statistics.median(worst["parent"]), statistics.median(worst["top"])
    return {
        "runs": sizes.flood_runs,
        "honest_slowest_s": worst,
        "parent_median_s": parent,
        "top_median_s": top,
        "top_over_parent": round(top / parent, 1) if parent else None,
        "requests_reached": reached,
    }


def run(*, smoke: bool = False) -> dict[str, Any]:
    sizes = SMOKE if smoke else FULL
    return {"security": {"record_memory": record_memory(sizes), "flood": flood(sizes)}}

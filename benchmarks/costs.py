"""Costs: import time, widget creation, memory per widget and per 1000 audit entries, shipped JS size.

``run(smoke=True)``: one import, a few widgets and audit entries (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Sizes:
    import_runs: int  # fresh interpreters timed importing the package
    widgets: int  # widgets created for the time and memory per widget
    audit_entries: int  # calls audited for the memory per 1000 entries


FULL = Sizes(import_runs=5, widgets=50, audit_entries=1000)
SMOKE = Sizes(import_runs=1, widgets=3, audit_entries=50)


def import_seconds(runs: int = 5) -> dict[str, Any]:
    code = (
        "import time; t = time.perf_counter(); import splitbrain_widget; d = time.perf_counter() - t; "
        "import sys; print(d, 'pydantic_ai' in sys.modules, 'anywidget' in sys.modules)"
    )
    samples, leaked = [], set()
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
        seconds, pai, aw = out.split()
        samples.append(float(seconds))
        leaked |= {name for name, loaded in (("pydantic_ai", pai), ("anywidget", aw)) if loaded == "True"}
    return {"median": round(statistics.median(samples), 4), "runs": runs, "heavy_modules_imported": sorted(leaked)}


def widget_costs(count: int = 50, audit_entries: int = 1000) -> dict[str, Any]:
    import splitbrain_widget as sb

    sb.TargetWidget("bouncer")  # warm caches (manifest, target API script, anywidget import)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    started = time.perf_counter()
    widgets = [sb.TargetWidget("bouncer") for _ in range(count)]
    created = (time.perf_counter() - started) / count
    after = tracemalloc.take_snapshot()
    per_widget = sum(s.size_diff for s in after.compare_to(before, "filename")) / count

    sim = widgets[0]
    before = tracemalloc.take_snapshot()
    for i in range(audit_entries):
        sim.set_parameter("speed", i % 50)
    after = tracemalloc.take_snapshot()
    per_1000_audit = sum(s.size_diff for s in after.compare_to(before, "filename")) * 1000 / audit_entries
    tracemalloc.stop()
    return {
        "widget_create_ms": round(created * 1000, 3),
        "memory_per_widget_kib": round(per_widget / 1024, 1),
        "memory_per_1000_audit_entries_kib": round(per_1000_audit / 1024, 1),
        "note": "no view attached: calls take the no-view path, so this measures the kernel side only",
    }


def js_sizes() -> dict[str, int]:
    static = ROOT / "splitbrain_widget" / "static"
    return {path.name: path.stat().st_size for path in sorted(static.glob("*.js"))}


def run(*, smoke: bool = False) -> dict[str, Any]:
    sizes = SMOKE if smoke else FULL
    return {
        "import_s": import_seconds(sizes.import_runs),
        **widget_costs(sizes.widgets, sizes.audit_entries),
        "js_bytes": js_sizes(),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))

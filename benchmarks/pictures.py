"""A notebook that keeps its simulation (#42): what pictures and exports cost.

- per built-in target on a headless page (its defaults, after a 1 s advance): the snapshot's bytes
  and size, and the ``sim.to_html()`` file's bytes;
- time to a fresh picture after a change: ``set_parameter`` then ``snapshot()`` on the bouncer, against
  ``set_parameter`` then ``fetch_state()`` (the same two round trips with no picture), alternated, 100
  pairs each after 10 warm-up pairs: the picture's own cost is the difference, the ratio says how much
  a picture adds to a change;
- a notebook executed headless: ``jupyter nbconvert --execute`` of three widgets and four cells, with
  the pictures (the default) and with ``SPLITBRAIN_SNAPSHOTS=0``, alternated, 3 runs each: the pictures'
  share of the run and of the notebook's bytes.

``run(smoke=True)``: two targets, a few pairs and one notebook run of each kind
(``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._stats import summary

WARM_UP = 10  # pairs dropped before timing


@dataclass(frozen=True)
class Sizes:
    targets: tuple[str, ...]  # pictured and exported
    pairs: int  # of set + snapshot and set + fetch_state, timed, after the warm-up
    notebook_runs: int  # of each kind, alternated


FULL = Sizes(targets=("bouncer", "projectile", "pendulum", "orbits", "waves", "boids"), pairs=100, notebook_runs=3)
SMOKE = Sizes(targets=("bouncer", "projectile"), pairs=5, notebook_runs=1)
CELLS = [
    "import splitbrain_widget as sb\na = sb.TargetWidget('bouncer')\na",
    "a.set_parameters({'color': 'red', 'size': 40})",
    "b = sb.TargetWidget('projectile')\nb.set_parameter('angle', 60)\nb",
    "c = sb.TargetWidget('pendulum')\nc.set_parameter('length', 2)\nc",
]


def per_target(targets: tuple[str, ...]) -> dict[str, dict[str, int]]:
    import splitbrain_widget as sb

    out: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for target in targets:
            with sb.HeadlessTarget(target) as sim:
                sim.advance(1.0)
                picture = sim.snapshot()
                exported = sim.to_html(Path(folder) / f"{target}.html")
            out[target] = {
                "picture_bytes": len(picture),
                "width": picture.width,
                "height": picture.height,
                "export_bytes": exported.size,
            }
    return out


def after_change(pairs: int) -> dict[str, Any]:
    import splitbrain_widget as sb

    with_picture: list[float] = []
    without: list[float] = []
    with sb.HeadlessTarget("bouncer") as sim:
        for i in range(WARM_UP + pairs):
            for kind in ("picture", "state") if i % 2 == 0 else ("state", "picture"):
                started = time.perf_counter()
                sim.set_parameter("size", 10 + i % 40)
                if kind == "picture":
                    sim.snapshot()
                else:
                    assert sim.fetch_state().ok
                took = (time.perf_counter() - started) * 1000
                if i >= WARM_UP:
                    (with_picture if kind == "picture" else without).append(took)
    a, b = summary(with_picture), summary(without)
    return {
        "set_and_snapshot_ms": a,
        "set_and_fetch_state_ms": b,
        "picture_over_state": round(a["median"] / b["median"], 2),
    }


def executed_notebook(runs: int) -> dict[str, Any]:
    import nbformat

    jupyter = str(Path(sys.executable).parent / "jupyter")
    times: dict[str, list[float]] = {"on": [], "off": []}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
        nbformat.write(nb, Path(folder) / "three.ipynb")
        for run in range(runs):
            for kind in ("on", "off") if run % 2 == 0 else ("off", "on"):
                env = {**os.environ, "SPLITBRAIN_HEADLESS": "1", "SPLITBRAIN_SNAPSHOTS": "1" if kind == "on" else "0"}
                out = f"ran-{kind}.ipynb"
                started = time.perf_counter()
                subprocess.run(
                    [
                        jupyter,
                        "nbconvert",
                        "--execute",
                        "--to",
                        "notebook",
                        "--output",
                        out,
                        "three.ipynb",
                    ],
                    cwd=folder,
                    env=env,
                    check=True,
                    capture_output=True,
                )
                times[kind].append(time.perf_counter() - started)
                sizes[kind] = (Path(folder) / out).stat().st_size
                saved = nbformat.read(Path(folder) / out, as_version=4).metadata.get("widgets")
                sizes[f"state_{kind}"] = len(json.dumps(saved)) if saved else 0
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {
        "seconds_with_pictures": round(on, 2),
        "seconds_without": round(off, 2),
        "with_over_without": round(on / off, 2),
        "bytes_with_pictures": sizes["on"],
        "bytes_without": sizes["off"],
        "bytes_of_widget_state": sizes["state_off"],  # nbclient's (of the run without pictures): the traits, code too
        "runs": runs,
    }


def run(*, smoke: bool = False) -> dict[str, Any]:
    sizes = SMOKE if smoke else FULL
    return {
        "pictures": {
            "targets": per_target(sizes.targets),
            "after_change": after_change(sizes.pairs),
            "notebook": executed_notebook(sizes.notebook_runs),
        }
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))

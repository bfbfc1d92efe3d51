"""Headless pages: one call's round trip, sweep throughput, advance's speed-up, and Dask against local.

- round trip: blocking ``set_parameter`` on a HeadlessTarget (bouncer) until its reply, one call at a
  time: median, p95, p99 of 500 calls after 20 warm-up calls;
- sweep: points per second of ``sb.sweep`` on projectile (1,120 points, no advance), on 1 page and on
  the default number of pages, alternated (1, N, 1, N) and the median of each; Chromium is already up
  (a warm-up sweep runs first), the sweep's own pages open inside the timing, as for a caller;
- advance: simulated seconds per wall second of ``advance(60)`` on the pendulum target, at the
  display's 60 frames per simulated second and at 10 (the built-in targets' results do not change);
  it runs after the sweeps, on a host page the engine reused: spot checks on a fresh engine's first
  page ran 10-40x slower at 60 fps, with the same physics (a question for the engine, not the sweep);
- record: wall seconds of ``sim.record(60)`` (every 0.1 s: 600 rows, in six sampled advances of 10 s,
  ``sim.aadvance(10, every=0.1)``, two queued on the page) on the headless pendulum once its page is
  ready and pandas imported (a 1 s recording first), the median of 3 (the engine of ``sim.record``,
  ``splitbrain_widget.features._record.record``); beside it the same 60 s as one ``sim.advance(60, every=0.1)``
  (600 states, no table) and as one ``sim.advance(60)`` (one state), median of 3 each;
- dask: the same sweep on ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` once its
  workers' browsers and pages are up (a warm-up sweep), its points per second over the local run's,
  and whether the two tables are identical.

``run(smoke=True)``: each of these once, on a few calls, points and simulated seconds
(``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

from ._stats import summary

WARM_UP = 20  # round trips dropped before timing
RECORD_EVERY = 0.1


@dataclass(frozen=True)
class Sizes:
    roundtrip_calls: int  # timed, after the warm-up
    sweep_grid: dict[str, Any]  # on projectile
    sweep_rounds: int  # of 1 page and N pages each, alternated
    advance_s: float  # simulated seconds per advance
    advance_runs: int
    record_s: float  # simulated seconds per recording
    record_runs: int
    dask_warm_up_grid: dict[str, Any]  # brings the workers' browsers and pages up


FULL = Sizes(
    roundtrip_calls=500,
    sweep_grid={"angle": [10 + i / 4 for i in range(280)], "speed": [10, 20, 30, 40]},
    sweep_rounds=2,
    advance_s=60.0,
    advance_runs=3,
    record_s=60.0,
    record_runs=3,
    dask_warm_up_grid={"angle": range(10, 80), "speed": [20, 30]},
)
SMOKE = Sizes(
    roundtrip_calls=10,
    sweep_grid={"angle": [10, 30, 50, 70], "speed": [10, 30]},
    sweep_rounds=1,
    advance_s=2.0,
    advance_runs=1,
    record_s=2.0,
    record_runs=1,
    dask_warm_up_grid={"angle": [10, 20], "speed": [20]},
)


def roundtrip(calls: int) -> dict[str, float]:
    import splitbrain_widget as sb

    samples = []
    with sb.HeadlessTarget("bouncer") as sim:
        for i in range(WARM_UP + calls):
            started = time.perf_counter()
            result = sim.set_parameter("speed", i % 50)
            samples.append((time.perf_counter() - started) * 1000)
            assert result.ok and result.views_applied == 1, result
    return summary(samples[WARM_UP:])


def timed_sweep(grid: dict[str, Any], **kwargs: Any) -> tuple[float, Any]:
    """Points per second of one sweep of ``grid`` on projectile, and its table."""
    import splitbrain_widget as sb

    started = time.perf_counter()
    df = sb.sweep("projectile", grid, progress=False, **kwargs)
    elapsed = time.perf_counter() - started
    assert df["ok"].all(), df[~df["ok"]].head()
    return round(len(df) / elapsed, 1), df


def sweep_throughput(sizes: Sizes) -> tuple[dict[str, Any], Any]:
    from splitbrain_widget.features import _sweep_pages
    from splitbrain_widget.sweep import _check_pages

    n_pages = _check_pages(None, None)
    timed_sweep(sizes.sweep_grid, pages=1)  # warm-up: Chromium starts here, not inside a timing
    runs: dict[str, list[float]] = {"1": [], str(n_pages): []}
    tables = []
    for _ in range(sizes.sweep_rounds):
        for pages in (1, n_pages):
            rate, df = timed_sweep(sizes.sweep_grid, pages=pages)
            runs[str(pages)].append(rate)
            tables.append(df)
    identical = all(df.equals(tables[0]) for df in tables)
    figures = {
        "target": "projectile",
        "points": len(tables[0]),
        "n_pages": n_pages,
        "pipeline_depth": _sweep_pages.PIPELINE_DEPTH,
        "points_per_s_1_page": round(statistics.median(runs["1"]), 1),
        "points_per_s_n_pages": round(statistics.median(runs[str(n_pages)]), 1),
        "runs": runs,
        "identical": identical,
    }
    return figures, tables[-1]


def advance_speed(sizes: Sizes) -> dict[str, Any]:
    import splitbrain_widget as sb

    out: dict[str, Any] = {"target": "pendulum", "simulated_s": sizes.advance_s}
    for fps, key in ((None, "sim_s_per_wall_s"), (10, "sim_s_per_wall_s_10fps")):
        rates = []
        with sb.HeadlessTarget("pendulum", fps=fps) as sim:
            sim.advance(0)  # the page is ready
            for _ in range(sizes.advance_runs):
                started = time.perf_counter()
                state = sim.advance(sizes.advance_s)
                rates.append(sizes.advance_s / (time.perf_counter() - started))
                assert state["t"] > 0, state
        out[key] = round(statistics.median(rates), 1)
    return out


def record_speed(sizes: Sizes) -> dict[str, Any]:
    import splitbrain_widget as sb
    from splitbrain_widget.features._record import record

    walls: dict[str, list[float]] = {"record": [], "sampled": [], "plain": []}
    with sb.HeadlessTarget("pendulum") as sim:
        record(sim, 1, every=RECORD_EVERY)  # the page is ready, pandas imported
        for _ in range(sizes.record_runs):
            started = time.perf_counter()
            df = record(sim, sizes.record_s, every=RECORD_EVERY)
            walls["record"].append(time.perf_counter() - started)
            assert len(df) == round(sizes.record_s / RECORD_EVERY) and df["energy [J/kg]"].notna().all(), df
            started = time.perf_counter()
            states = sim.advance(sizes.record_s, every=RECORD_EVERY)
            walls["sampled"].append(time.perf_counter() - started)
            assert len(states) == len(df), len(states)
            started = time.perf_counter()
            sim.advance(sizes.record_s)
            walls["plain"].append(time.perf_counter() - started)
    wall = statistics.median(walls["record"])
    return {
        "target": "pendulum",
        "simulated_s": sizes.record_s,
        "every": RECORD_EVERY,
        "rows": len(df),
        "wall_s": round(wall, 2),
        "ms_per_row": round(wall * 1000 / len(df), 2),
        "runs": [round(w, 2) for w in walls["record"]],
        "sampled_advance_wall_s": round(statistics.median(walls["sampled"]), 2),
        "advance_wall_s": round(statistics.median(walls["plain"]), 2),
    }


def dask_against_local(sizes: Sizes, local_rate: float, local_table: Any) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0", worker_dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        import splitbrain_widget as sb

        sb.sweep("projectile", sizes.dask_warm_up_grid, client=client, progress=False)  # warm-up
        rate, df = timed_sweep(sizes.sweep_grid, client=client)
    return {
        "workers": 2,
        "pages_per_worker": 2,
        "points": len(df),
        "points_per_s": rate,
        "local_points_per_s": local_rate,
        "ratio": round(rate / local_rate, 2),
        "identical": bool(df.equals(local_table)),
    }


def run(*, smoke: bool = False) -> dict[str, Any]:
    from splitbrain_widget.hosts._headless_engine import shutdown_engine

    sizes = SMOKE if smoke else FULL
    try:
        figures: dict[str, Any] = {"roundtrip_ms": roundtrip(sizes.roundtrip_calls)}
        figures["sweep"], table = sweep_throughput(sizes)
        figures["advance"] = advance_speed(sizes)
        figures["record"] = record_speed(sizes)
        figures["dask"] = dask_against_local(sizes, figures["sweep"]["points_per_s_n_pages"], table)
    finally:
        shutdown_engine()
    figures["note"] = (
        "2-core machine shared with other work; sweep rates include opening the sweep's pages; dask ratio is "
        "the cluster's points/s over the local run's (default pages) on the same grid"
    )
    return {"headless": figures}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))

"""sb.sweep(client=...) on a Dask LocalCluster: the same table as the local run, from workers that
each keep their own browser and pages (a WorkerPlugin).

Browser tests (marked ``browser``): they skip without Chromium, and without dask.distributed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import splitbrain_widget as sb
from splitbrain_widget.hosts import _headless_engine as engine_mod

from .browser_env import require_browser

distributed = pytest.importorskip("distributed")

from splitbrain_widget.features import _sweep_dask  # noqa: E402  (needs distributed)

PROJECTILE_GRID = {"angle": [*range(10, 81, 5), 95], "drag": [0, 0.02], "speed": [15, 25]}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    require_browser()
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0", worker_dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as dask_client,
    ):
        yield dask_client
    engine_mod.shutdown_engine()  # the local runs' Chromium


@pytest.mark.browser
def test_the_cluster_sweep_is_the_local_sweep(client: Any) -> None:
    local = sb.sweep("projectile", PROJECTILE_GRID, progress=False)
    remote = sb.sweep("projectile", PROJECTILE_GRID, client=client, progress=False)
    assert len(remote) == 64 and (~remote["ok"]).sum() == 4, "the four points at 95° are refused"
    pd.testing.assert_frame_equal(remote, local)


@pytest.mark.browser
def test_the_cluster_sweep_with_advance_is_the_local_one(client: Any) -> None:
    grid = {"amplitude": [10, 30, 60, 90], "damping": [0, 0.5]}
    local = sb.sweep("pendulum", grid, advance=2, progress=False)
    remote = sb.sweep("pendulum", grid, advance=2, client=client, progress=False)
    assert remote["ok"].all()
    pd.testing.assert_frame_equal(remote, local)


@pytest.mark.browser
def test_every_worker_keeps_its_pages_from_one_sweep_to_the_next(client: Any) -> None:
    def pages_held(dask_worker: Any) -> list[int]:
        pool = dask_worker.plugins[_sweep_dask.PLUGIN_NAME]._pool
        return [id(page) for page in pool.pages] if pool is not None else []

    grid = {"angle": range(10, 80)}  # three chunks: the scheduler decides which worker runs which
    sb.sweep("projectile", grid, client=client, pages=2, progress=False)
    first = client.run(pages_held)
    sb.sweep("projectile", grid, client=client, pages=2, progress=False)
    second = client.run(pages_held)
    assert any(first.values()) and all(len(held) in (0, 2) for held in first.values())
    for worker, held in first.items():
        if held:
            assert second[worker] == held, "the worker opened new pages instead of keeping its own"


def test_chunks_cover_every_point_once_in_order() -> None:
    points = [{"angle": i} for i in range(1000)]
    parts = _sweep_dask.chunks(points, workers=2)
    assert len(parts) >= 2 * _sweep_dask.CHUNKS_PER_WORKER
    assert [p for part in parts for p in part.points] == points
    assert [part.start for part in parts] == [sum(len(q.points) for q in parts[:i]) for i in range(len(parts))]
    assert len(_sweep_dask.chunks(points[:10], workers=2)) == 1, "a small sweep is one chunk"


def test_a_client_that_is_no_dask_client_is_refused() -> None:
    with pytest.raises(TypeError, match=r"dask\.distributed\.Client"):
        sb.sweep("projectile", {"angle": [10]}, client=object(), progress=False)

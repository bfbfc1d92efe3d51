"""The sweep on a Dask cluster: each worker keeps its own browser and pages, points go out in chunks.

:class:`SweepPlugin` is a ``distributed`` WorkerPlugin: registered once per client (idempotent, by
name), it sits on every worker, opens that worker's pages on the first chunk, keeps them for the
next chunks and sweeps, and closes them and the worker's Chromium when the worker closes. A chunk
is measured exactly as a local sweep measures its points (``_sweep_pages.measure_on``), so the
cluster's table is the local one. Imported only when ``sweep(client=...)`` is called.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from distributed import Client, Worker, as_completed, get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from ._sweep_pages import Outcome, PagePool, Plan, measure_on

PLUGIN_NAME = "splitbrain-sweep"
MIN_CHUNK = 32  # points: enough to keep a worker's pages busy between two tasks
CHUNKS_PER_WORKER = 4  # at least this many chunks per worker, so a slow one does not hold up the end


@dataclass(frozen=True)
class Chunk:
    """Consecutive points of a sweep (an object, so that Dask does not look into the points)."""

    start: int
    points: tuple[dict[str, Any], ...]


class SweepPlugin(WorkerPlugin):
    """Holds a worker's sweep pages between chunks (and sweeps); one chunk at a time uses them."""

    idempotent = True  # registering it again (every sweep does) keeps the pages that are open
    name = PLUGIN_NAME

    def setup(self, worker: Worker) -> None:
        self._lock = threading.Lock()
        self._pool: PagePool | None = None

    def teardown(self, worker: Worker) -> None:
        from ..hosts._headless_engine import shutdown_engine

        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        shutdown_engine()

    def measure(self, chunk: Chunk, plan: Plan) -> list[Outcome]:
        """Measure a chunk on this worker's pages (opened, or reopened for another target, first)."""
        with self._lock:
            if self._pool is not None and not self._pool.serves(plan):
                self._pool.close()
                self._pool = None
            if self._pool is None:
                self._pool = PagePool(plan)
            # A task runs on a thread of the worker's pool, where no loop runs: one of its own.
            return asyncio.run(measure_on(self._pool, chunk.points, plan))


def measure_chunk(chunk: Chunk, plan: Plan) -> list[Outcome]:
    """The task each chunk is: its outcomes, measured by the worker's plugin."""
    plugin = get_worker().plugins[PLUGIN_NAME]
    if not isinstance(plugin, SweepPlugin):
        raise RuntimeError(f"worker plugin {PLUGIN_NAME!r} is not splitbrain's sweep plugin")
    return plugin.measure(chunk, plan)


def chunks(points: Sequence[dict[str, Any]], workers: int) -> list[Chunk]:
    """``points`` cut into consecutive chunks: several per worker, none smaller than needed."""
    size = max(MIN_CHUNK, -(-len(points) // (max(1, workers) * CHUNKS_PER_WORKER)))
    return [Chunk(start, tuple(points[start : start + size])) for start in range(0, len(points), size)]


def run_on_cluster(
    client: Any, plan: Plan, points: Sequence[dict[str, Any]], on_progress: Callable[[int], None]
) -> list[Outcome]:
    """Measure ``points`` on ``client``'s workers; the outcomes in the order of ``points``."""
    if not isinstance(client, Client):
        raise TypeError(f"sweep(client=...) takes a dask.distributed.Client, got {type(client).__name__}")
    if client.asynchronous:
        raise ValueError("sweep(client=...) needs a synchronous Client (asynchronous=False)")
    workers = len(client.nthreads())
    if workers == 0:
        raise ValueError("sweep(client=...): the cluster has no workers")
    client.register_plugin(SweepPlugin(), name=PLUGIN_NAME)
    parts = chunks(points, workers)
    futures = client.map(measure_chunk, parts, plan=plan, key=PLUGIN_NAME, pure=False)
    sizes = {future.key: len(part.points) for future, part in zip(futures, parts, strict=True)}
    try:
        for future in as_completed(futures):
            on_progress(sizes[future.key])
        results: list[list[Outcome]] = client.gather(futures)
    except BaseException:
        client.cancel(futures)  # an interrupt or a failed chunk must not leave the cluster sweeping
        raise
    return [outcome for part in results for outcome in part]

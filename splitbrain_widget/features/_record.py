"""Observables as data: a page's observables over time, as a pandas DataFrame.

One engine behind ``sim.record(seconds, every=0.1)`` and ``await sim.arecord(...)`` (the same on a
worker thread). It reads the page through the widget's public calls only:

- **headless** (``sim.can_advance``: a :class:`~splitbrain_widget.HeadlessTarget`, or a widget whose
  calls run on its headless fallback page): the page's clock runs forward in steps of ``every``
  simulated seconds, one row per step from the state the page reports at the step's end. No real
  waiting: the rows come as fast as the page computes them. The steps go in batches of BATCH_S
  simulated seconds (at most BATCH_ROWS rows), each one sampled advance (``sim.aadvance(seconds,
  every=every)``: the host page asks for the state after each step and sends the states back
  together, no round trip to Python per row); two batches are queued on the page, so that it never
  idles between them, and a cancel takes effect between two.
- **live** (a notebook view): the page's own state reports are collected for ``seconds`` of wall
  time and resampled to one row per ``every`` seconds: each row is the latest report at or before
  its tick (the page's state when the recording began, until its first report).

pandas is imported when a recording is made, never by ``import splitbrain_widget``.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import math
import numbers
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..core import _twins
from ..core._platform import need
from ..core._seam import blocking_wait_hears, cannot_hear_in_cell
from ..manifest import Manifest
from . import _observables
from ._seek_search import PAGE_HIDDEN

if TYPE_CHECKING:
    import pandas

    from ..widget import TargetWidget

__all__ = ["arecord", "record"]

MAX_ROWS = 100_000
BATCH_S = 10.0  # simulated seconds per sampled advance of a headless recording
BATCH_ROWS = 1_000  # and at most this many rows (steps) each: a cancel waits for two batches at most
IN_FLIGHT = 2  # batches queued on a headless page (the page starts the next as it ends one)
INDEX_NAME = "time [s]"
Clock = Literal["simulated", "wall"]


def record(
    sim: TargetWidget,
    seconds: float,
    *,
    every: float = 0.1,
    observables: str | Iterable[str] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> pandas.DataFrame:
    """The page's observables over ``seconds``, one row every ``every`` seconds.

    Args:
        sim: the widget (or :class:`~splitbrain_widget.HeadlessTarget`) whose page is recorded.
        seconds: how long: simulated seconds on a headless page, wall seconds on a live one.
        every: the time between two rows, in the same seconds; at most ``seconds``.
        observables: the observables to record (a name or several); by default every observable
            the manifest declares that the page reports (every state key that is not a parameter,
            when the manifest declares none). One asked for that the page never reports is a column
            of None.
        cancelled: polled before each batch of steps (headless) and at each report (live): when it
            says True the recording stops, with the rows it has.

    Returns:
        A DataFrame with ``floor(seconds / every)`` rows, indexed by ``"time [s]"``: the ticks
        ``every, 2·every, ...`` counted from the start of the recording. On a headless page that is
        exactly the simulated time the clock was advanced by (``df.attrs["clock"] == "simulated"``);
        a page's own time observable (the pendulum's ``t``), if it has one, is a column beside it.
        On a live page it is wall time (``"wall"``; the page may run its simulation faster, see its
        ``time_scale``), and ``df.attrs["reports"]`` counts the state reports seen meanwhile. One
        column per observable, named with its unit (``"energy [J/kg]"``; no unit: the bare name);
        ``df.attrs["units"]`` maps each observable's name to its unit (None without one). Numbers
        are float columns (a null is NaN); other values (strings, lists, all-null) stay objects.

    Raises:
        ValueError: ``seconds`` or ``every`` is not a number > 0, ``every`` exceeds ``seconds``, the
            recording would have more than 100,000 rows, or ``observables`` names an observable the
            manifest does not declare (the message lists the declared ones).
        RuntimeError: no view shows the widget and it has no headless page (display it, or record a
            HeadlessTarget), a live page reported no state at all, or the call blocks a cell that
            cannot hear the page (ipykernel < 7, marimo: the message says what to use instead), or a
            live page is in the background, or goes there while recording (``page_hidden``: its
            browser throttles its timers and stops its frames, so it reports nothing new).
        HeadlessError: a headless page failed to advance (the message says at which simulated time).
    """
    seconds_f = _positive("seconds", seconds)
    every_f = _positive("every", every)
    if every_f > seconds_f:
        raise ValueError(
            f"every: expected at most seconds ({_num(seconds_f)}), got {every!r}: "
            "a recording has at least one row, every seconds apart"
        )
    rows = math.floor(seconds_f / every_f + 1e-9)
    if rows > MAX_ROWS:
        raise ValueError(
            f"every: record({_num(seconds_f)}, every={_num(every_f)}) would make {rows:,} rows, more than "
            f"the {MAX_ROWS:,} a recording takes: raise every, or record fewer seconds"
        )
    names = _observables.names(observables, sim.schema)
    if not sim.can_advance:
        if not blocking_wait_hears(sim):
            raise RuntimeError(cannot_hear_in_cell("record()", "`df = await sim.arecord(...)`"))
        _start(sim)
    if sim.can_advance:
        states: list[dict[str, Any] | None] = list(_advance_steps(sim, rows, every_f, cancelled))
        return _frame(sim, states, every_f, names, "simulated", None)
    watched, reports = _watch(sim, rows, every_f, cancelled)
    return _frame(sim, watched, every_f, names, "wall", reports)


async def arecord(
    sim: TargetWidget,
    seconds: float,
    *,
    every: float = 0.1,
    observables: str | Iterable[str] | None = None,
) -> pandas.DataFrame:
    """:func:`record` for asyncio code: the same engine on a worker thread. Cancelled, it stops before
    its next batch of steps (the batches in flight end first) and the cancellation is raised once it
    has."""
    return await _twins.awaiting(
        lambda cancelled: record(sim, seconds, every=every, observables=observables, cancelled=cancelled),
        what="record",
    )


# -- arguments ------------------------------------------------------------------------------------


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a finite number of seconds > 0, got {value!r}")
    return float(value)


# -- the two ways of recording --------------------------------------------------------------------


def _start(sim: TargetWidget) -> None:
    """Ask the page for its state: a headless fallback starts its page, a live page answers with the
    state the recording starts from. No view at all is an error, at once."""
    result = sim.fetch_state()
    error = result.error
    if not result.ok and error is not None and error.code == "no_view" and not sim.can_advance:
        raise RuntimeError(
            f"record: no_view: {error.message}. Display the widget in a notebook to record its live page "
            "(in real time), or record a HeadlessTarget or a widget made with headless=True (on a virtual "
            "clock, faster than real time)"
        )


def _advance_steps(sim: TargetWidget, rows: int, every: float, cancelled: Callable[[], bool]) -> list[dict[str, Any]]:
    """The states after each of ``rows`` steps of ``every`` simulated seconds (fewer if cancelled).

    The batches are awaited on an event loop of the recording's own (``sim.aadvance`` lets several
    be queued on the page at once); where this thread runs a loop already (a notebook cell), on a
    thread of its own.
    """
    stop = threading.Event()

    def stopped() -> bool:
        return stop.is_set() or cancelled()

    # Ctrl-C: no new batch starts, the ones in flight end
    return _twins.blocking(
        lambda: _pipeline(sim, rows, every, stopped), name="splitbrain-record", on_interrupt=stop.set
    )


async def _pipeline(sim: TargetWidget, rows: int, every: float, stopped: Callable[[], bool]) -> list[dict[str, Any]]:
    """Keep up to IN_FLIGHT sampled advances (batches of rows) queued on the page, and take their
    states in order."""
    from ..hosts._headless_engine import HeadlessError

    per_batch = max(1, min(BATCH_ROWS, math.floor(BATCH_S / every + 1e-9)))
    declared = sim.schema.observables

    def keep(state: dict[str, Any]) -> dict[str, Any]:
        return _observables.slim(state, declared)

    batches: collections.deque[tuple[int, asyncio.Task[list[dict[str, Any]]]]] = collections.deque()
    states: list[dict[str, Any]] = []
    queued = 0
    try:
        while len(states) < rows:
            while queued < rows and len(batches) < IN_FLIGHT and not stopped():
                n = min(per_batch, rows - queued)
                # Started in this order (a task's first step runs in creation order): queued in order.
                step = sim.aadvance(
                    n * every, every=every, keep=lambda state: _observables.slim(state, sim.schema.observables)
                )
                batches.append((n, asyncio.ensure_future(step)))
                queued += n
            if not batches:
                break  # stopped
            n, batch = batches.popleft()
            try:
                taken = await batch
                if len(taken) != n:  # the engine counts the steps of n * every as n; never otherwise
                    raise HeadlessError("internal_error", f"a sampled advance of {n} steps gave {len(taken)} states")
            except HeadlessError as exc:
                done, total = _num(len(states) * every), _num(rows * every)
                raise HeadlessError(
                    exc.code, f"record stopped after {done} of {total} simulated s: {exc.message}"
                ) from exc
            states.extend(taken)  # cut down to the observables as they came (keep)
    finally:
        for _, batch in batches:
            batch.cancel()
        if batches:
            await asyncio.gather(*(batch for _, batch in batches), return_exceptions=True)
    return states


def _watch(
    sim: TargetWidget, rows: int, every: float, cancelled: Callable[[], bool]
) -> tuple[list[dict[str, Any] | None], int]:
    """A live page's reports over ``rows * every`` wall seconds, resampled to one state per tick (the
    latest report at or before it); and how many reports came."""
    bridge = sim.bridge
    if bridge.page_visible() is False:
        raise RuntimeError(f"record: page_hidden: a live recording needs the page's reports: {PAGE_HIDDEN}")
    start = time.monotonic()
    baseline = bridge.latest_state
    version = bridge.state_version
    times: list[float] = []  # seconds since start
    reports: list[dict[str, Any]] = []

    def collect() -> bool:  # under the bridge's lock, at every change (and every WAIT_SLICE_S)
        nonlocal version
        if bridge.state_version != version:
            version = bridge.state_version
            latest = bridge.latest_state
            if isinstance(latest, dict):
                times.append(time.monotonic() - start)
                reports.append(_observables.slim(latest, sim.schema.observables))
        return cancelled() or bridge.page_visible() is False

    ended_early = bridge.wait_until(collect, start + rows * every)
    if ended_early and bridge.page_visible() is False:
        went = _num(time.monotonic() - start)
        raise RuntimeError(
            f"record: page_hidden: the page went to the background {went} s into the recording: {PAGE_HIDDEN}"
        )
    if baseline is None and not reports:
        raise RuntimeError(
            f"record: the page reported no state in {_num(rows * every)} s (is it loading, or stopped?); "
            "display the widget and check that the page runs, or record a HeadlessTarget"
        )
    ticks = min(rows, math.floor((time.monotonic() - start) / every + 1e-9))
    states: list[dict[str, Any] | None] = []
    for k in range(1, ticks + 1):
        i = bisect.bisect_right(times, k * every)
        states.append(reports[i - 1] if i else baseline)
    return states, len(reports)


# -- the table ------------------------------------------------------------------------------------


def _frame(
    sim: TargetWidget,
    states: list[dict[str, Any] | None],
    every: float,
    names: list[str] | None,
    clock: Clock,
    reports: int | None,
) -> pandas.DataFrame:
    pandas = need("pandas", "record()")

    manifest = sim.schema
    if names is None:
        names = _default_names([state for state in states if state is not None], manifest)
    units = {name: _observables.unit(manifest, name) for name in names}
    columns = {
        _column(name, units[name]): [None if state is None else _observables.read(state, name)[1] for state in states]
        for name in names
    }
    index_name = INDEX_NAME if INDEX_NAME not in columns else f"recorded {INDEX_NAME}"
    index = pandas.Index([_tick(k, every) for k in range(1, len(states) + 1)], dtype="float64", name=index_name)
    df = pandas.DataFrame(columns, index=index)
    df.attrs.update({"units": units, "clock": clock, "every": every, "target": sim.target_id})
    if reports is not None:
        df.attrs["reports"] = reports
    return df


def _default_names(states: list[dict[str, Any]], manifest: Manifest) -> list[str]:
    """The declared observables any state reports, in the manifest's order; without declared ones,
    every state key that is not a parameter, in the order first seen."""
    declared = list(manifest.observables)
    if declared:
        return [name for name in declared if any(_observables.read(state, name)[0] for state in states)]
    seen: dict[str, None] = {}
    for state in states:
        for key in state:
            if key not in manifest.parameters and not key.startswith("_") and key != "observables":
                seen.setdefault(key)
        inner = state.get("observables")
        if isinstance(inner, Mapping):
            for key in inner:
                seen.setdefault(str(key))
    return list(seen)


def _column(name: str, unit: str | None) -> str:
    return f"{name} [{unit}]" if unit else name


def _tick(k: int, every: float) -> float:
    return float(f"{k * every:.12g}")  # 0.3, not 0.30000000000000004


def _num(x: float) -> str:
    return f"{x:.6g}"

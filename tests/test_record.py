"""record: a page's observables over time as a DataFrame, on real headless pages and fake live views.

The tests marked ``browser`` run the pendulum and orbits targets in headless Chromium (they skip
without it, and fail under SPLITBRAIN_REQUIRE_BROWSER=1): the rows are the page's own physics. The
others record a :class:`FakeView` that reports its state on its own thread, as a live page does.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import splitbrain_widget as sb
from splitbrain_widget.features import _record
from splitbrain_widget.features._record import arecord, record
from splitbrain_widget.headless import HeadlessTarget

from .browser_env import run_async
from .fake_view import FakeView, wait_for

browser = pytest.mark.browser


class ReportingView(FakeView):
    """A live pendulum page that reports its state on its own thread, about 20 times a second; its
    angle goes up by one degree at each report. ``sent`` is every state it reported or answered with."""

    def __init__(self, sim: Any, **kwargs: Any) -> None:
        self.k = 0
        self.sent: list[dict[str, Any]] = []
        self.running = threading.Event()
        self.running.set()
        super().__init__(sim, state_of=self.sample, **kwargs)
        self.reporter = threading.Thread(target=self._report, name="fake-page-reports", daemon=True)
        self.reporter.start()

    def sample(self, _values: dict[str, Any]) -> dict[str, Any]:
        return {"energy": 0.5916, "angle": float(self.k), "t": round(self.k * 0.05, 3)}

    def state(self) -> dict[str, Any]:
        state = super().state()
        self.sent.append(state)
        return state

    def _report(self) -> None:
        while self.running.is_set():
            self.k += 1
            self._event("state", self.state())
            time.sleep(0.05)  # the page's own cadence, ~20 Hz (not a test waiting on anything)

    def stop(self) -> None:
        self.running.clear()
        self.reporter.join()


@pytest.fixture
def live() -> Iterator[tuple[sb.TargetWidget, ReportingView]]:
    sim = sb.TargetWidget("pendulum", headless=False)
    view = ReportingView(sim)
    wait_for(lambda: sim.bridge.state_version > 0, "the fake page's first report")
    yield sim, view
    view.stop()


# -- a live page (a fake view) --------------------------------------------------------------------


def test_a_live_page_is_resampled_to_one_row_per_tick_from_what_it_reported(
    live: tuple[sb.TargetWidget, ReportingView],
) -> None:
    sim, view = live
    df = record(sim, 1, every=0.1)
    assert len(df) == 10 and df.index.name == "time [s]"
    assert np.allclose(df.index, np.arange(1, 11) * 0.1)
    assert list(df.columns) == ["energy [J/kg]", "angle [deg]", "t [s]"]  # declared and reported, in manifest order
    assert df.attrs["units"] == {"energy": "J/kg", "angle": "deg", "t": "s"}
    assert df.attrs["clock"] == "wall" and df.attrs["every"] == 0.1 and df.attrs["target"] == "pendulum"
    assert df.attrs["reports"] >= 1
    sent = {(s["energy"], s["angle"], s["t"]) for s in view.sent}
    rows = list(df.itertuples(index=False, name=None))
    assert all(row in sent for row in rows), rows  # every row is a state the page sent, as it sent it
    angles = df["angle [deg]"].tolist()
    assert angles == sorted(angles) and len(set(angles)) > 1  # the latest report at each tick: it moves on
    assert df["energy [J/kg]"].dtype == np.float64


def test_observables_picks_columns_and_an_unreported_one_is_a_column_of_none(
    live: tuple[sb.TargetWidget, ReportingView],
) -> None:
    sim, _view = live
    df = record(sim, 0.2, every=0.1, observables=["angle", "angle2"])
    assert list(df.columns) == ["angle [deg]", "angle2 [deg]"] and len(df) == 2
    assert df["angle2 [deg]"].isna().all()
    assert df.attrs["units"] == {"angle": "deg", "angle2": "deg"}
    assert list(record(sim, 0.1, observables="t").columns) == ["t [s]"]


def test_arecord_records_the_same_on_a_worker_thread(live: tuple[sb.TargetWidget, ReportingView]) -> None:
    sim, view = live
    df = asyncio.run(arecord(sim, 0.3, every=0.1))
    assert len(df) == 3 and list(df.columns) == ["energy [J/kg]", "angle [deg]", "t [s]"]
    assert all(angle in {s["angle"] for s in view.sent} for angle in df["angle [deg]"])


def test_a_cancelled_arecord_raises_only_once_its_worker_stopped(
    live: tuple[sb.TargetWidget, ReportingView], monkeypatch: pytest.MonkeyPatch
) -> None:
    sim, _view = live
    inside, finished = threading.Event(), threading.Event()
    engine = _record.record

    def watched(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        try:
            return engine(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(_record, "record", watched)

    async def cancel_it() -> None:
        task = asyncio.ensure_future(arecord(sim, 600))
        while not inside.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()  # the recording stopped before the cancellation came back

    asyncio.run(cancel_it())


def test_no_view_is_a_clear_error_at_once() -> None:
    sim = sb.TargetWidget("pendulum", headless=False)
    with pytest.raises(RuntimeError, match=r"no_view.*Display the widget.*HeadlessTarget.*headless=True"):
        record(sim, 1)


def test_a_page_that_reports_nothing_is_a_clear_error() -> None:
    sim = sb.TargetWidget("pendulum", headless=False, timeout=0.3)
    FakeView(sim, behaviour="silent")
    with pytest.raises(RuntimeError, match=r"reported no state in 0.2 s"):
        record(sim, 0.2, every=0.1)


# -- arguments (no page is asked anything) --------------------------------------------------------


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf, "1", True, None])
def test_seconds_must_be_a_positive_number(seconds: Any) -> None:
    with pytest.raises(ValueError, match=r"^seconds: expected a finite number of seconds > 0, got"):
        record(sb.TargetWidget("pendulum", headless=False), seconds)


@pytest.mark.parametrize("every", [0, -0.1, math.nan])
def test_every_must_be_a_positive_number(every: Any) -> None:
    with pytest.raises(ValueError, match=r"^every: expected a finite number of seconds > 0"):
        record(sb.TargetWidget("pendulum", headless=False), 1, every=every)


def test_every_longer_than_the_recording_or_too_many_rows_are_refused() -> None:
    sim = sb.TargetWidget("pendulum", headless=False)
    with pytest.raises(ValueError, match=r"^every: expected at most seconds \(1\), got 2"):
        record(sim, 1, every=2)
    with pytest.raises(ValueError, match=r"^every: .* 200,000 rows, more than the 100,000"):
        record(sim, 20_000, every=0.1)


def test_an_unknown_observable_is_named_with_the_declared_ones() -> None:
    sim = sb.TargetWidget("pendulum", headless=False)
    declared = r"declares no 'angel', 'speed' \(did you mean angle.*its observables: period, energy"
    with pytest.raises(ValueError, match=declared):
        record(sim, 1, observables=["angel", "speed"])
    with pytest.raises(ValueError, match=r"at least one name"):
        record(sim, 1, observables=[])
    with pytest.raises(TypeError, match=r"a name or several"):
        record(sim, 1, observables=5)  # type: ignore[arg-type]


def test_import_stays_light() -> None:
    code = "import sys, splitbrain_widget, splitbrain_widget.features._record; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


# -- on real pages --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pendulum_page(engine: None) -> Iterator[HeadlessTarget]:
    with HeadlessTarget("pendulum") as sim:
        yield sim


@pytest.fixture
def pendulum(pendulum_page: HeadlessTarget) -> HeadlessTarget:
    assert pendulum_page.reset().ok
    return pendulum_page


@browser
def test_a_minute_of_the_pendulum_is_600_rows_with_its_energy_conserved(pendulum: HeadlessTarget) -> None:
    pendulum.advance(0)  # the page is ready: the timing below is the recording's alone
    started = time.perf_counter()
    df = record(pendulum, 60)
    print(f"record(60) on the headless pendulum: {len(df)} rows in {time.perf_counter() - started:.2f} s wall")
    assert len(df) == 600 and df.attrs["clock"] == "simulated"
    assert np.allclose(np.diff(df.index), 0.1) and df.index[0] == 0.1 and df.index[-1] == 60.0
    energy = df["energy [J/kg]"]
    assert energy.max() - energy.min() <= 1e-3 * energy.mean()  # no damping: conserved (RK4, 1 ms steps)
    t = df["t [s]"]  # the page's own clock ran exactly as far as it was advanced
    assert abs((t.iloc[-1] - t.iloc[0]) - 59.9) < 0.01
    angle = df["angle [deg]"]
    assert angle.max() > 19 and angle.min() < -19  # it swings through its 20 degree amplitude
    assert df["angle2 [deg]"].isna().all()  # simple mode reports null: a column of None, as reported


@browser
def test_a_headless_recording_is_a_few_sampled_advances_not_one_per_row(
    pendulum: HeadlessTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[float, Any]] = []
    aadvance = pendulum.aadvance

    async def counted(seconds: float, **kwargs: Any) -> Any:
        calls.append((seconds, kwargs.get("every")))
        return await aadvance(seconds, **kwargs)

    monkeypatch.setattr(pendulum, "aadvance", counted)
    df = record(pendulum, 25, every=0.1, observables=["t"])
    assert len(df) == 250 and [(round(s, 9), every) for s, every in calls] == [(10, 0.1), (10, 0.1), (5, 0.1)]
    t = df["t [s]"]  # one row per step of the page's clock, each its state at the step's end
    assert np.allclose(np.diff(t), 0.1, atol=2e-3) and t.iloc[-1] - t.iloc[0] == pytest.approx(24.9, abs=0.01)


@browser
def test_a_cancelled_headless_arecord_stops_between_batches(
    pendulum: HeadlessTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[float] = []
    aadvance = pendulum.aadvance

    async def counted(seconds: float, **kwargs: Any) -> Any:
        calls.append(seconds)
        return await aadvance(seconds, **kwargs)

    monkeypatch.setattr(pendulum, "aadvance", counted)

    async def cancel_it() -> int:
        task = asyncio.ensure_future(arecord(pendulum, 6000))  # 600 batches of 10 s
        while not calls:
            await asyncio.sleep(0.01)
        started = len(calls)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return started

    started = run_async(cancel_it())
    assert len(calls) <= started + _record.IN_FLIGHT, calls  # no batch started after the cancel
    assert not pendulum._headless.page._advances, "nothing left running on the page"
    assert pendulum.advance(0)["t"] < 6000


@browser
def test_damping_drains_the_energy_as_e_to_the_minus_gamma_t(pendulum: HeadlessTarget) -> None:
    gamma = 0.1
    assert pendulum.set_parameters({"damping": gamma}).ok
    energy = record(pendulum, 20, observables="energy")["energy [J/kg]"]
    assert (energy.diff().dropna() <= 0).all()  # dE/dt = -γ·L²·ω² never gains
    ratio = energy.loc[15.0] / energy.loc[5.0]
    assert ratio == pytest.approx(math.exp(-gamma * 10), rel=0.1), ratio  # small swings: E ∝ e^(-γt)


@browser
def test_arecord_a_running_loop_and_a_headless_fallback_widget_all_advance_the_clock(pendulum: HeadlessTarget) -> None:
    df = run_async(arecord(pendulum, 1, observables=["t"]))
    assert len(df) == 10 and df["t [s]"].iloc[-1] == pytest.approx(1.0, abs=0.002)

    async def a_notebook_cell() -> Any:  # a blocking record where a loop runs already (as in ipykernel)
        return record(pendulum, 0.5, observables=["t"])

    assert len(run_async(a_notebook_cell())) == 5
    sim = sb.TargetWidget("pendulum", headless=True)
    try:
        assert not sim.can_advance  # no page yet: record starts it
        fallback = record(sim, 2, observables=["energy", "t"])
        assert sim.can_advance and len(fallback) == 20 and fallback.attrs["clock"] == "simulated"
        assert fallback["t [s]"].iloc[-1] == pytest.approx(2.0, abs=0.002)
    finally:
        sim.close()


@browser
def test_the_orbits_energy_drift_shows_over_a_minute(engine: None) -> None:
    with HeadlessTarget("orbits") as sim:
        df = record(sim, 60, every=0.5)
    assert len(df) == 120 and "status" in df.columns and set(df["status"]) == {"orbiting"}
    drift, worst = df["energy_drift [%]"], df["energy_drift_max [%]"]
    assert drift.abs().max() > 0 and drift.nunique() > 10  # Verlet: small, bounded, but there
    assert (worst.diff().dropna() >= 0).all()
    assert worst.iloc[-1] >= drift.abs().max() - 1e-5  # the worst of every step, sampled or not
    elapsed = df["elapsed [days]"]  # 60 simulated days per simulated second (its time_scale)
    assert elapsed.iloc[-1] - elapsed.iloc[0] == pytest.approx(59.5 * 60, rel=1e-3)
    assert df["revolutions"].iloc[-1] >= 10 and df.attrs["units"]["energy_drift"] == "%"

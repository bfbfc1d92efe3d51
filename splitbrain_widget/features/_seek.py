"""Goal seeking: vary one parameter until an observable reaches a goal, or its largest or smallest value.

One engine behind ``sim.seek(...)``, ``await sim.aseek(...)`` (which runs it on a worker thread) and the
agent's tool. It steers the page through the widget's public blocking calls only: every try is one
``set_parameters``; an observable the page measures over time (the pendulum's period) is waited for,
by advancing a headless page's clock or by watching a live page's state reports. The solver is scipy's
(``brentq`` for a goal, ``minimize_scalar`` for an extremum), stopped as soon as a try comes within
``tol`` of the goal. Whatever happens, the parameter ends at the answer or back where it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypedDict

from typing_extensions import Unpack

from ..core import _twins
from ..core._seam import blocking_wait_hears, cannot_hear_in_cell
from ..manifest import Manifest, Parameter, ParameterError
from ..protocol import ERROR_CODES, ChangedValue, ErrorCode, ToolResult
from . import _observables as observables

if TYPE_CHECKING:
    from ..widget import TargetWidget

FIRST_CHUNK_S = 1.0  # a headless page's clock is advanced this much first, then twice as much each time
MAX_ADVANCE_S = 120.0  # simulated seconds an unmeasured observable is given after a change
PAGE_HIDDEN = (
    "the notebook's page is in the background (another tab in front, the window minimised), where the "
    "browser throttles its timers and stops its animation frames; bring it to the front and try again"
)
LIVE_WAIT_S = 30.0  # wall seconds a live page is given to report it (without a timeout)
NEAR_END = 0.02  # an extremum this close to an end (a fraction of the range) is checked against the end
Extreme = Literal["max", "min"]
_EXTREMES: dict[str, Extreme] = {"max": "max", "maximum": "max", "min": "min", "minimum": "min"}
_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Try:
    """One evaluation: the parameter's ``value``, the ``observable`` the page reported (None if it did
    not) and its ``index``, counted from 1."""

    value: float
    observable: float | None
    index: int


class _Reached(Exception):
    """A try came within tol of the goal: the solver stops there."""

    def __init__(self, x: float) -> None:
        self.x = x


class _Crossed(Exception):
    """A try landed on the other side of the goal: the root lies between it and an end."""

    def __init__(self, x: float) -> None:
        self.x = x


class _OutOfTries(Exception):
    """The next try would exceed max_evals."""


class _Failed(Exception):
    """The search stops with this error (the page refused a try, Stop, a deadline, nothing measured)."""

    def __init__(self, code: ErrorCode, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.hint = hint


@dataclass
class _Goal:
    """What is sought: ``extreme`` ("max" / "min"), or ``value`` in the observable's unit within ``tol``."""

    extreme: Extreme | None
    value: float = 0.0
    tol: float = 0.0
    given: str = ""  # the goal as written, when it was converted from another unit


@dataclass
class _Search:
    """One seek's tries: the page calls, the cache by value, the budget and the callbacks."""

    sim: TargetWidget
    param: Parameter
    observable: str
    goal: _Goal
    lo: float
    hi: float
    max_evals: int
    deadline: float
    on_try: Callable[[Try], None] | None
    cancelled: Callable[[], bool]
    seen: dict[float, float] = field(default_factory=dict)
    states: dict[float, dict[str, Any]] = field(default_factory=dict)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    crossing_sign: float | None = None  # while looking for an extremum toward the goal
    exhausted: bool = False  # a try was refused for want of budget
    last: ToolResult | None = None  # the last page call's result
    page_state: dict[str, Any] | None = None  # what the page reported last, and at which value
    page_x: float | None = None
    written: Any = None  # the value the seek's last call left in sim.values (None: none yet)

    def ours(self) -> bool:
        """Whether the parameter still holds what the seek wrote: nobody changed it meanwhile."""
        return self.written is not None and self.sim.values.get(self.param.path) == self.written

    # -- one try ----------------------------------------------------------------------------------

    def snap(self, x: float) -> float:
        x = min(max(float(x), self.lo), self.hi)
        return float(round(x)) if self.param.type == "integer" else x

    def __call__(self, x: float) -> float:
        """The observable at ``x`` (cached); raises to stop the solver."""
        x = self.snap(x)
        if x in self.seen:
            return self.seen[x]
        if len(self.evaluations) >= self.max_evals:
            self.exhausted = True
            raise _OutOfTries
        self.check_going()
        try:
            y, state = self.measure(x)
        except _Failed as exc:
            if exc.code == "not_measured":
                self.record(x, None)
            raise
        self.record(x, y)
        self.seen[x], self.states[x] = y, state
        if self.goal.extreme is None:
            if abs(y - self.goal.value) <= self.goal.tol:
                raise _Reached(x)
            if self.crossing_sign is not None and (y - self.goal.value) * self.crossing_sign < 0:
                raise _Crossed(x)
        return y

    def record(self, x: float, y: float | None) -> None:
        self.evaluations.append({"value": _wire(self.param, x), "observable": y})
        if self.on_try is not None:
            self.on_try(Try(_wire(self.param, x), y, len(self.evaluations)))

    def check_going(self) -> None:
        if self.cancelled():
            raise _Failed("cancelled", f"seek was cancelled after {_tries(len(self.evaluations))}")
        if time.monotonic() >= self.deadline:
            raise _Failed("timeout", f"seek ran out of time after {_tries(len(self.evaluations))}")

    def remaining(self) -> float | None:
        """The timeout of the next page call: what is left of the seek's deadline (None: the sim's own)."""
        if math.isinf(self.deadline):
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Failed("timeout", f"seek ran out of time after {_tries(len(self.evaluations))}")
        return left

    def measure(self, x: float) -> tuple[float, dict[str, Any]]:
        """Set ``x`` and read the observable, waiting for it where the page measures it over time;
        raises :class:`_Failed` (``not_measured`` when the page does not report it)."""
        version = self.sim.bridge.state_version
        result = self.sim.set_parameters({self.param.path: _wire(self.param, x)}, timeout=self.remaining())
        self.last = result
        self.written = self.sim.values.get(self.param.path)
        if not result.ok:
            error = result.error
            code: ErrorCode = error.code if error is not None else "internal_error"
            why = error.message if error is not None else str(result)
            hint = error.hint if error is not None else None
            raise _Failed(code, f"the page did not take {self.param.path} = {_num(x)}: {why}", hint)
        state = dict(result.state or {})
        self.page_state, self.page_x = state, x
        settle = self.settles_in()
        if settle:  # a quantity that follows a change over time (a flock's mean speed): let it
            state = self.settled(settle, state)
            self.page_state = state
        present, y = observables.read(state, self.observable)
        if not present:
            raise _Failed("not_measured", self.unreported_text(state), self.observables_hint())
        if y is None:
            if self.sim.can_advance:
                y, state = self.advance_until_measured(state)
            else:
                y, state = self.wait_for_report(x, version, state)
            self.page_state = state
        if y is None:
            raise _Failed("not_measured", self.unmeasured_text(x), self.observables_hint())
        return self.number(y), state

    def number(self, y: Any) -> float:
        if isinstance(y, bool) or not isinstance(y, int | float) or not math.isfinite(y):
            raise _Failed(
                "invalid_value",
                f"{self.observable} is not a number the goal can be sought on: the page reports {y!r}",
                self.observables_hint(),
            )
        return float(y)

    def settles_in(self) -> float | None:
        declared = self.sim.schema.observables.get(self.observable)
        return declared.settles_in if declared is not None else None

    def settled(self, seconds: float, state: dict[str, Any]) -> dict[str, Any]:
        """The page's state ``seconds`` after a change: a headless page's clock runs that far; a live
        page is given that long (at its own pace) and then asked."""
        if self.sim.can_advance:
            from ..hosts._headless_engine import HeadlessError

            advance = self.sim.advance
            try:
                return dict(advance(seconds, timeout=self.remaining()))
            except HeadlessError as exc:
                raise _Failed(_code(exc.code), f"the page did not advance: {exc.message}") from None
        left = self.remaining()
        self.check_visible(f"seek lets {self.observable} settle on the page for {_num(seconds)} s")
        until = time.monotonic() + (seconds if left is None else min(seconds, left))
        self.sim.bridge.wait_until(lambda: self.cancelled() or self.sim.bridge.page_visible() is False, until)
        self.check_going()
        self.check_visible(f"seek lets {self.observable} settle on the page for {_num(seconds)} s")
        fresh = self.sim.fetch_state(timeout=self.remaining())
        return dict(fresh.state or {}) if fresh.ok else state

    def advance_until_measured(self, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Run a headless page's clock forward in growing chunks until it reports the observable."""
        from ..hosts._headless_engine import HeadlessError

        advance = self.sim.advance
        total, chunk = 0.0, FIRST_CHUNK_S
        while total < MAX_ADVANCE_S:
            self.check_going()
            step = min(chunk, MAX_ADVANCE_S - total)
            try:
                state = dict(advance(step, timeout=self.remaining()))
            except HeadlessError as exc:
                raise _Failed(_code(exc.code), f"the page did not advance: {exc.message}") from None
            total, chunk = total + step, chunk * 2
            self.page_state = state
            y = observables.read(state, self.observable)[1]
            if y is not None:
                return y, state
        return None, state

    def wait_for_report(self, x: float, version: int, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Wait for a live page's state report that carries the observable measured at ``x``."""
        bridge = self.sim.bridge
        path = self.param.path

        def measured() -> bool:
            latest = bridge.latest_state
            if self.cancelled() or bridge.page_visible() is False:
                return True
            if bridge.state_version <= version or not isinstance(latest, dict):
                return False
            if path in latest and not _same(latest[path], x):
                return False  # a report from before the change (or a later one's)
            return observables.read(latest, self.observable)[1] is not None

        self.check_visible()
        left = self.remaining()
        bridge.wait_until(measured, time.monotonic() + (LIVE_WAIT_S if left is None else left))
        self.check_going()
        self.check_visible()
        latest = bridge.latest_state
        if isinstance(latest, dict) and measured():
            return observables.read(latest, self.observable)[1], dict(latest)
        return None, state

    def check_visible(self, why: str = "") -> None:
        """A live page in a background tab reports nothing new (its timers are throttled, its frames
        stopped): say so now rather than wait out the deadline."""
        if self.sim.bridge.page_visible() is False:
            why = why or f"seek needs the page's next report of {self.observable}"
            raise _Failed("page_hidden", f"{why}: {PAGE_HIDDEN}")

    # -- words ------------------------------------------------------------------------------------

    def unreported_text(self, state: Mapping[str, Any]) -> str:
        reported = observables.reported(state, self.sim.schema)
        listed = ", ".join(reported[:20]) + (f" and {len(reported) - 20} more" if len(reported) > 20 else "")
        listed = listed or "none"
        return f"the page does not report {self.observable} (it reports: {listed})"

    def unmeasured_text(self, x: float) -> str:
        waited = (
            f"within {MAX_ADVANCE_S:g} simulated s"
            if self.sim.can_advance
            else "in the state reports it sent meanwhile"
        )
        return f"the page did not report {self.observable} at {self.param.path} = {self.show_x(x)} ({waited})"

    def observables_hint(self) -> str:
        declared = ", ".join(self.sim.schema.observables) or "none"
        return f"observables the target declares: {declared}"

    def show_x(self, x: float) -> str:
        return _with_unit(x, self.param.unit)

    def show_y(self, y: float) -> str:
        return _with_unit(y, _observable_unit(self.sim.schema, self.observable))

    # -- the solvers ------------------------------------------------------------------------------

    def xatol(self) -> float:
        return 0.5 if self.param.type == "integer" else max((self.hi - self.lo) * 1e-3, 1e-12)

    def best(self, extreme: Extreme) -> float:
        """The tried value with the largest (or smallest) observable."""
        pick = max if extreme == "max" else min
        return pick(self.seen, key=lambda x: self.seen[x])

    def closest(self) -> float | None:
        """The tried value whose observable came closest to the goal (None before any try)."""
        if not self.seen:
            return None
        return min(self.seen, key=lambda x: abs(self.seen[x] - self.goal.value))

    def extremum(self, extreme: Extreme) -> float:
        """The value in the range with the largest (or smallest) observable, within the try budget."""
        sign = -1.0 if extreme == "max" else 1.0
        left = self.max_evals - len(self.evaluations)
        with contextlib.suppress(_OutOfTries):
            _optimize().minimize_scalar(
                lambda x: sign * self(x),
                bounds=(self.lo, self.hi),
                method="bounded",
                options={"xatol": self.xatol(), "maxiter": max(left - 1, 1)},
            )
        if not self.seen:
            raise _OutOfTries
        best = self.best(extreme)
        for end in (self.lo, self.hi):  # bounded Brent never tries the ends themselves
            if abs(best - end) <= NEAR_END * (self.hi - self.lo):
                with contextlib.suppress(_OutOfTries):
                    self(end)
        return self.best(extreme)

    def root(self, a: float, b: float) -> None:
        """Brent's method between ``a`` and ``b`` (the observable on either side of the goal); returns
        only when it converged without a try within tol (a jump across the goal)."""
        xtol = 0.5 if self.param.type == "integer" else max(abs(b - a) * 1e-9, 1e-12)
        _optimize().brentq(
            lambda x: self(x) - self.goal.value,
            min(a, b),
            max(a, b),
            xtol=xtol,
            maxiter=self.max_evals + 10,
            full_output=True,
            disp=False,
        )

    def reach(self) -> NoReturn:
        """Find a value within tol of the goal; raises :class:`_Reached` with it, or :class:`_Failed`."""
        goal = self.goal.value
        da = self(self.lo) - goal
        db = self(self.hi) - goal
        if da * db < 0:
            self.root(self.lo, self.hi)
            raise self.jumped()
        toward: Extreme = "max" if da < 0 else "min"
        self.crossing_sign = math.copysign(1.0, da)
        try:
            xe = self.extremum(toward)
        except _Crossed as crossed:
            xe = crossed.x
        self.crossing_sign = None
        if (self.seen[xe] - goal) * da > 0:
            raise _OutOfTries if self.exhausted else self.out_of_reach(toward, xe)
        end = self.lo if abs(xe - self.lo) <= abs(self.hi - xe) else self.hi
        self.root(end, xe)
        raise self.jumped()

    # -- failures -----------------------------------------------------------------------------------

    def out_of_reach(self, toward: Extreme, xe: float) -> _Failed:
        peaks = "peaks at" if toward == "max" else "bottoms out at"
        more = "more" if toward == "max" else "less"
        text = (
            f"{self.observable} {peaks} {self.show_y(self.seen[xe])} at {self.param.path} = {self.show_x(xe)} "
            f"in {_num(self.lo)}..{_num(self.hi)}; {self.goal_text()} needs {more} than this range allows"
        )
        others = _other_numbers(self.sim.schema, self.param.path)
        hint = f"try varying {' or '.join(others[:2])}" if others else "no other number parameter to vary"
        if self.lo > _bound(self.param.min, -math.inf) or self.hi < _bound(self.param.max, math.inf):
            hint += f", or widen within to {self.param.path}'s range {_range(self.param)}"
        return _Failed("goal_unreachable", text, hint)

    def jumped(self) -> _Failed:
        """Brent converged on a crossing no try came within tol of: the response jumps there."""
        pairs = sorted(self.seen.items())
        goal = self.goal.value
        crossings = [(p, q) for p, q in itertools.pairwise(pairs) if (p[1] - goal) * (q[1] - goal) < 0]
        (x1, y1), (x2, y2) = min(crossings, key=lambda pq: pq[1][0] - pq[0][0]) if crossings else (pairs[0], pairs[-1])
        jumps = "between two neighbouring integers" if self.param.type == "integer" else "without passing through it"
        text = (
            f"bracketing failed: {self.observable} crosses {self.goal_text()} between {self.param.path} = "
            f"{self.show_x(x1)} ({self.show_y(y1)}) and {self.show_x(x2)} ({self.show_y(y2)}) {jumps}: the "
            f"response is not continuous or not monotonic there, and no value comes within {_num(self.goal.tol)}"
        )
        return _Failed("goal_unreachable", text, "raise tol, or seek a nearby goal")

    def out_of_tries(self) -> _Failed:
        x = self.closest()
        closest = "" if x is None else f"; closest: {self.show_y(self.seen[x])} at {self.param.path} = {self.show_x(x)}"
        text = f"{self.observable} did not reach {self.goal_text()} within max_evals = {self.max_evals} tries{closest}"
        return _Failed("goal_unreachable", text, "raise max_evals, or raise tol")

    def goal_text(self) -> str:
        text = self.show_y(self.goal.value)
        return f"{text} ({self.goal.given})" if self.goal.given else text


# -- the entry point ------------------------------------------------------------------------------


class SeekOptions(TypedDict, total=False):
    """The options of a seek, shared by :func:`seek` and the widget's ``seek`` / ``aseek`` twins."""

    vary: str | None  # the parameter changed; default: the observable's first depends_on
    within: tuple[float, float] | None  # the range searched; default: the parameter's manifest range
    tol: float | None  # absolute tolerance on the observable; default: 1% of the goal
    max_evals: int  # the most tries (30)
    keep_closest: bool  # on failure, leave the closest value tried instead of putting it back
    timeout: float | None  # the seek's whole deadline, in seconds
    on_try: Callable[[Try], None] | None  # called after every try (from the seek's thread)


def seek(
    sim: TargetWidget,
    observable: str,
    goal: float | str,
    *,
    cancelled: Callable[[], bool] = lambda: False,
    **options: Unpack[SeekOptions],
) -> ToolResult:
    """Vary ``vary`` until ``observable`` reaches ``goal``: a number in its unit, a string with a unit
    ("50 m", "0.05 km"), or "max" / "min".

    ``vary`` defaults to the first parameter of the observable's ``depends_on`` in the manifest;
    without one it must be given (the failure lists the candidates).

    ``within`` is the range searched (default: the parameter's manifest range), ``tol`` the absolute
    tolerance on the observable (default 1% of the goal), ``max_evals`` the most tries, ``timeout`` the
    seek's whole deadline in seconds. ``on_try`` is called after every try and ``cancelled`` polled
    before each. On success the parameter stays at the answer; on any failure it goes back to where it
    was, unless ``keep_closest`` leaves the closest value tried. ``evaluations`` lists every try.
    """
    vary, within, tol = options.get("vary"), options.get("within"), options.get("tol")
    max_evals, timeout = options.get("max_evals", 30), options.get("timeout")
    manifest = sim.schema
    try:
        param = _numeric_param(manifest, _vary_or_default(manifest, observable, vary))
        lo, hi = _span(param, within)
        parsed = _parse_goal(goal, _observable_unit(manifest, observable), tol)
        if isinstance(max_evals, bool) or not isinstance(max_evals, int) or max_evals < 2:
            raise _Failed("invalid_value", f"max_evals: expected an integer of at least 2, got {max_evals!r}")
    except _Failed as exc:
        return ToolResult.failure(exc.code, exc.message, hint=exc.hint, op="seek", target=sim.target_id)
    if not blocking_wait_hears(sim):  # each try waits for the page: in this cell it would hear none
        raise RuntimeError(cannot_hear_in_cell("seek()", "`await sim.aseek(...)`"))
    search = _Search(
        sim,
        param,
        observable,
        parsed,
        lo,
        hi,
        max_evals,
        math.inf if timeout is None else time.monotonic() + timeout,
        options.get("on_try"),
        cancelled,
    )
    return _run(search, options.get("keep_closest", False))


def _run(search: _Search, keep_closest: bool) -> ToolResult:
    """Drive the search; put the parameter back (or at the closest value) unless it succeeded."""
    sim, path = search.sim, search.param.path
    original = sim.values.get(path, search.param.value)
    outcome: ToolResult | None = None
    try:
        try:
            outcome = _succeed(search, _solve(search))
        except _Failed as exc:
            outcome = _fail(search, exc, original, keep_closest)
        return outcome
    finally:
        if outcome is None and search.ours() and search.written != original:  # an exception: no half-made change
            sim.set_parameters({path: original})


def _solve(search: _Search) -> float:
    """The value the search settles on; raises :class:`_Failed` when the goal cannot be met."""
    extreme = search.goal.extreme
    try:
        if extreme is not None:
            return search.extremum(extreme)
        search.reach()
    except _Reached as reached:
        return reached.x
    except _OutOfTries:
        raise search.out_of_tries() from None


def _settle(search: _Search, x: float) -> tuple[dict[str, Any], ToolResult | None]:
    """Leave the page at ``x`` with its state measured there: one more page call (not a try) unless
    the last try was ``x``."""
    if search.page_x != x or search.page_state is None:
        search.measure(x)
    return search.page_state or search.states.get(x, {}), search.last


def _succeed(search: _Search, x: float) -> ToolResult:
    try:
        state, last = _settle(search, x)
    except _Failed as exc:
        raise _Failed(exc.code, f"the answer was found but could not be set: {exc.message}", exc.hint) from None
    y = search.seen[x]
    n = _tries(len(search.evaluations))
    at = f"with {search.param.path} = {search.show_x(x)}"
    if search.goal.extreme is None:
        message = f"{search.observable} reached {search.show_y(y)} (goal {search.goal_text()}) {at} after {n}"
    else:
        largest = "largest" if search.goal.extreme == "max" else "smallest"
        span = f"in {_num(search.lo)}..{_num(search.hi)}"
        message = f"{search.observable} is {largest}, {search.show_y(y)}, {at} {span} after {n}"
        if search.exhausted:
            message += f" (max_evals = {search.max_evals} ran out: a better value may lie between the tries)"
    return ToolResult(
        ok=True,
        op="seek",
        target=search.sim.target_id,
        message=message,
        changed={search.param.path: _changed(search.param, x)},
        state=state,
        applied=last.applied if last is not None else True,
        views_applied=last.views_applied if last is not None else 0,
        evaluations=search.evaluations,
    )


def _fail(search: _Search, exc: _Failed, original: Any, keep_closest: bool) -> ToolResult:
    """The failure result, after the parameter went back (or to the closest value, with keep_closest)."""
    sim, path = search.sim, search.param.path
    search.deadline = math.inf  # putting things right is not held to the seek's deadline
    closest = search.closest()
    changed: dict[str, ChangedValue] = {}
    result: ToolResult | None = None
    state = search.page_state
    kept = False
    if keep_closest and closest is not None and exc.code != "cancelled" and search.ours():
        with contextlib.suppress(_Failed):  # the page is at the closest value, measured or not
            state, result = _settle(search, closest)
        kept = search.ours() and _same(search.written, closest)
    if kept and closest is not None:
        changed[path] = _changed(search.param, closest)
        tail = f"; {path} stays at the closest value tried, {search.show_x(closest)} (keep_closest)"
    elif not search.ours() and search.written is not None:
        tail = f"; {path} was changed by someone else meanwhile, so it keeps that value"
    elif search.ours() and search.written != original:
        result = sim.set_parameters({path: original})
        state = result.state if result.ok else state
        tail = f"; {path} is back at {search.show_x(original)}"
    else:
        tail = ""
    return ToolResult.failure(
        exc.code,
        exc.message + tail,
        hint=exc.hint,
        op="seek",
        target=sim.target_id,
        changed=changed,
        state=state,
        applied=result.applied if result is not None else None,
        evaluations=search.evaluations,
    )


# -- arguments ------------------------------------------------------------------------------------


def _vary_or_default(manifest: Manifest, observable: str, vary: str | None) -> str:
    """``vary``, or the observable's first ``depends_on`` parameter; never a guess."""
    if vary is not None:
        return vary
    found = manifest.observables.get(observable)
    if found is not None and found.depends_on:
        return found.depends_on[0]
    numbers = ", ".join(_other_numbers(manifest, "")) or "none"
    raise _Failed(
        "invalid_value",
        f"vary: which parameter should change to move {observable}? The manifest does not say "
        "(no depends_on for it), so name one",
        f"number parameters: {numbers}",
    )


async def aseek(sim: TargetWidget, observable: str, goal: float | str, **options: Unpack[SeekOptions]) -> ToolResult:
    """:func:`seek` for asyncio code: the same engine on a worker thread (:func:`~.._twins.awaiting`).
    Cancelled, it stops before its next try and puts the parameter back; by the time the
    ``CancelledError`` reaches the caller the value is back (also when the seek had just finished:
    cancelled means undone)."""
    before = dict(sim.values)

    async def undo(finished: ToolResult) -> None:  # it ended before it saw the stop: undo it too
        if not finished.ok:
            return
        back = {p: before[p] for p, c in finished.changed.items() if p in before and sim.values.get(p) == c["value"]}
        if back:
            await asyncio.to_thread(sim.set_parameters, back)

    return await _twins.awaiting(
        lambda cancelled: seek(sim, observable, goal, cancelled=cancelled, **options), undo=undo
    )


def _numeric_param(manifest: Manifest, vary: str) -> Parameter:
    try:
        param = manifest.resolve(vary)
    except ParameterError as exc:
        raise _Failed(_code(exc.code), exc.message, exc.hint or None) from None
    if param.type not in ("number", "integer"):
        numbers = ", ".join(_other_numbers(manifest, "")) or "none"
        raise _Failed(
            "invalid_value",
            f"vary: {param.path} is a {param.type} parameter; seek varies a number or integer parameter",
            f"number parameters: {numbers}",
        )
    if param.readonly:
        raise _Failed("readonly", f"vary: {param.path} is read-only and cannot be varied")
    return param


def _span(param: Parameter, within: tuple[float, float] | None) -> tuple[float, float]:
    """The range searched: ``within``, else the manifest's min..max (both must exist)."""
    if within is None:
        for bound, value in (("min", param.min), ("max", param.max)):
            if value is None:
                raise _Failed(
                    "invalid_value",
                    f"{param.path} has no {bound} in its manifest, so the range to search is unknown",
                    "pass within=(low, high)",
                )
        lo, hi = float(param.min or 0.0), float(param.max or 0.0)
    else:
        try:
            lo, hi = (float(v) for v in within)
        except (TypeError, ValueError):
            raise _Failed("invalid_value", f"within: expected two numbers (low, high), got {within!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise _Failed("invalid_value", f"within: expected finite low < high, got {within!r}")
        if lo < _bound(param.min, -math.inf) or hi > _bound(param.max, math.inf):
            raise _Failed("invalid_value", f"within: {within!r} leaves {param.path}'s range {_range(param)}")
    if param.type == "integer":
        lo, hi = float(math.ceil(lo)), float(math.floor(hi))
    if lo >= hi:
        raise _Failed("invalid_value", f"{param.path}: the range {_num(lo)}..{_num(hi)} holds no two values to try")
    return lo, hi


def _parse_goal(goal: float | str, unit: str | None, tol: float | None) -> _Goal:
    """The goal in the observable's unit, with its tolerance."""
    if isinstance(goal, str) and goal.strip().lower() in _EXTREMES:
        return _Goal(_EXTREMES[goal.strip().lower()])
    given = ""
    if isinstance(goal, str):
        value, given = _convert_goal(goal, unit)
    elif isinstance(goal, bool) or not isinstance(goal, int | float) or not math.isfinite(goal):
        raise _Failed("invalid_value", f"goal: expected a number, a number with a unit or max / min, got {goal!r}")
    else:
        value = float(goal)
    if tol is None and value == 0:
        raise _Failed(
            "invalid_value",
            "tol: a goal of 0 has no default tolerance (the default is 1% of the goal)",
            "give tol, the absolute tolerance in the observable's unit",
        )
    if tol is None:
        tol = abs(value) * 0.01
    elif isinstance(tol, bool) or not isinstance(tol, int | float) or not math.isfinite(tol) or tol <= 0:
        raise _Failed("invalid_value", f"tol: expected a positive number, got {tol!r}")
    return _Goal(None, value, float(tol), given)


def _convert_goal(text: str, unit: str | None) -> tuple[float, str]:
    """``"0.05 km"`` -> (50.0, "0.05 km") when the observable is in m; a bare number stays as it is."""
    match = _NUMBER_UNIT.match(text)
    if match is None:
        raise _Failed("invalid_value", f"goal: expected a number with a unit or max / min, got {text!r}")
    value, from_unit = float(match.group(1)), match.group(2)
    if not from_unit:
        return value, ""
    if unit is None:
        raise _Failed("invalid_value", f"goal: {text!r} has a unit, but the observable has none: give a plain number")
    from ..core._units import convert

    converted = convert(value, from_unit, unit)
    if converted is None:
        raise _Failed("invalid_value", f"goal: {text!r} cannot be expressed in {unit}")
    return converted, (text.strip() if from_unit.strip() != unit else "")


# -- small helpers --------------------------------------------------------------------------------


def _optimize() -> Any:
    """scipy.optimize, imported on first use (scipy ships no type hints)."""
    return importlib.import_module("scipy.optimize")


def _observable_unit(manifest: Manifest, name: str) -> str | None:
    found = manifest.observables.get(name)
    return found.unit if found is not None else None


def _other_numbers(manifest: Manifest, path: str) -> list[str]:
    return [
        p.path
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and p.path != path
    ]


def _same(reported: Any, x: float) -> bool:
    """A page's report of the parameter is ``x`` (a page may round what it reports)."""
    if isinstance(reported, bool) or not isinstance(reported, int | float):
        return True
    return math.isclose(reported, x, rel_tol=1e-6, abs_tol=1e-9)


def _wire(param: Parameter, x: float) -> float | int:
    return int(x) if param.type == "integer" else x


def _changed(param: Parameter, x: float) -> ChangedValue:
    value = _wire(param, x)
    return {"value": value, "unit": param.unit} if param.unit else {"value": value}


def _code(code: str) -> ErrorCode:
    return code if code in ERROR_CODES else "internal_error"  # type: ignore[return-value]


def _bound(value: float | None, default: float) -> float:
    return default if value is None else value


def _range(param: Parameter) -> str:
    lo = "-inf" if param.min is None else _num(param.min)
    hi = "inf" if param.max is None else _num(param.max)
    return f"{lo}..{hi}"


def _num(x: float) -> str:
    return f"{x:.4g}"


def _with_unit(x: float, unit: str | None) -> str:
    return f"{_num(x)} {unit}" if unit else _num(x)


def _tries(n: int) -> str:
    return f"{n} {'try' if n == 1 else 'tries'}"

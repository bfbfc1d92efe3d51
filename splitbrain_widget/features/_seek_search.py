"""The search itself: one try per value (a `set_parameters`), an observable waited for where the
page measures it over time, scipy's solvers stopped as soon as a try is within tolerance."""

from __future__ import annotations

import contextlib
import importlib
import itertools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from ..core._platform import need
from ..manifest import Parameter
from ..protocol import ChangedValue, ErrorCode, ToolResult, changed_value
from . import _observables as observables
from ._seek_goal import (
    Crossed,
    Extreme,
    Failed,
    Goal,
    OutOfTries,
    Reached,
    Try,
    bound_or,
    error_code,
    num_text,
    observable_unit,
    other_numbers,
    range_text,
    same_value,
    tries_text,
    wire_value,
    with_unit_text,
)

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


@dataclass
class Search:
    """One seek's tries: the page calls, the cache by value, the budget and the callbacks."""

    sim: TargetWidget
    param: Parameter
    observable: str
    goal: Goal
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
            raise OutOfTries
        self.check_going()
        try:
            y, state = self.measure(x)
        except Failed as exc:
            if exc.code == "not_measured":
                self.record(x, None)
            raise
        self.record(x, y)
        self.seen[x], self.states[x] = y, state
        if self.goal.extreme is None:
            if abs(y - self.goal.value) <= self.goal.tol:
                raise Reached(x)
            if self.crossing_sign is not None and (y - self.goal.value) * self.crossing_sign < 0:
                raise Crossed(x)
        return y

    def record(self, x: float, y: float | None) -> None:
        self.evaluations.append({"value": self.wire(x), "observable": y})
        if self.on_try is not None:
            self.on_try(Try(self.wire(x), y, len(self.evaluations)))

    def check_going(self) -> None:
        if self.cancelled():
            raise Failed("cancelled", f"seek was cancelled after {tries_text(len(self.evaluations))}")
        if time.monotonic() >= self.deadline:
            raise Failed("timeout", f"seek ran out of time after {tries_text(len(self.evaluations))}")

    def remaining(self) -> float | None:
        """The timeout of the next page call: what is left of the seek's deadline (None: the sim's own)."""
        if math.isinf(self.deadline):
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Failed("timeout", f"seek ran out of time after {tries_text(len(self.evaluations))}")
        return left

    def measure(self, x: float) -> tuple[float, dict[str, Any]]:
        """Set ``x`` and read the observable, waiting for it where the page measures it over time;
        raises :class:`Failed` (``not_measured`` when the page does not report it)."""
        version = self.sim.bridge.state_version
        result = self.sim.set_parameters({self.param.path: self.wire(x)}, timeout=self.remaining())
        self.last = result
        self.written = self.sim.values.get(self.param.path)
        if not result.ok:
            error = result.error
            code: ErrorCode = error.code if error is not None else "internal_error"
            why = error.message if error is not None else str(result)
            hint = error.hint if error is not None else None
            raise Failed(code, f"the page did not take {self.param.path} = {num_text(x)}: {why}", hint)
        state = dict(result.state or {})
        self.page_state, self.page_x = state, x
        settle = self.settles_in()
        if settle:  # a quantity that follows a change over time (a flock's mean speed): let it
            state = self.settled(settle, state)
            self.page_state = state
        present, y = observables.read(state, self.observable)
        if not present:
            raise Failed("not_measured", self.unreported_text(state), self.observables_hint())
        if y is None:
            if self.sim.can_advance:
                y, state = self.advance_until_measured(state)
            else:
                y, state = self.wait_for_report(x, version, state)
            self.page_state = state
        if y is None:
            raise Failed("not_measured", self.unmeasured_text(x), self.observables_hint())
        return self.number(y), state

    def number(self, y: Any) -> float:
        if isinstance(y, bool) or not isinstance(y, int | float) or not math.isfinite(y):
            raise Failed(
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
                raise Failed(error_code(exc.code), f"the page did not advance: {exc.message}") from None
        left = self.remaining()
        self.check_visible(f"seek lets {self.observable} settle on the page for {num_text(seconds)} s")
        until = time.monotonic() + (seconds if left is None else min(seconds, left))
        self.sim.bridge.wait_until(lambda: self.cancelled() or self.sim.bridge.page_visible() is False, until)
        self.check_going()
        self.check_visible(f"seek lets {self.observable} settle on the page for {num_text(seconds)} s")
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
                raise Failed(error_code(exc.code), f"the page did not advance: {exc.message}") from None
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
            if path in latest and not self.reports(latest[path], x):
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
            raise Failed("page_hidden", f"{why}: {PAGE_HIDDEN}")

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
        return with_unit_text(x, self.param.unit)

    def show_value(self, value: Any) -> str:
        """A value of the parameter (not a point of the search) in words."""
        return self.show_x(value)

    def range_words(self) -> str:
        """Where the search looked: ``in 10..80``."""
        return f"in {num_text(self.lo)}..{num_text(self.hi)}"

    # -- a point of the search as the parameter's value ---------------------------------------------

    def wire(self, x: float) -> Any:
        """The parameter's value at ``x``, as the page is sent it."""
        return wire_value(self.param, x)

    def changed(self, x: float) -> ChangedValue:
        return changed_value(self.wire(x), self.param.unit)

    def reports(self, reported: Any, x: float) -> bool:
        """Whether the page's (or the kernel's) value of the parameter is the one at ``x``."""
        return same_value(reported, x)

    def show_y(self, y: float) -> str:
        return with_unit_text(y, observable_unit(self.sim.schema, self.observable))

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
        with contextlib.suppress(OutOfTries):
            optimize().minimize_scalar(
                lambda x: sign * self(x),
                bounds=(self.lo, self.hi),
                method="bounded",
                options={"xatol": self.xatol(), "maxiter": max(left - 1, 1)},
            )
        if not self.seen:
            raise OutOfTries
        best = self.best(extreme)
        for end in (self.lo, self.hi):  # bounded Brent never tries the ends themselves
            if abs(best - end) <= NEAR_END * (self.hi - self.lo):
                with contextlib.suppress(OutOfTries):
                    self(end)
        return self.best(extreme)

    def root(self, a: float, b: float) -> None:
        """Brent's method between ``a`` and ``b`` (the observable on either side of the goal); returns
        only when it converged without a try within tol (a jump across the goal)."""
        xtol = 0.5 if self.param.type == "integer" else max(abs(b - a) * 1e-9, 1e-12)
        optimize().brentq(
            lambda x: self(x) - self.goal.value,
            min(a, b),
            max(a, b),
            xtol=xtol,
            maxiter=self.max_evals + 10,
            full_output=True,
            disp=False,
        )

    def reach(self) -> NoReturn:
        """Find a value within tol of the goal; raises :class:`Reached` with it, or :class:`Failed`."""
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
        except Crossed as crossed:
            xe = crossed.x
        self.crossing_sign = None
        if (self.seen[xe] - goal) * da > 0:
            raise OutOfTries if self.exhausted else self.out_of_reach(toward, xe)
        end = self.lo if abs(xe - self.lo) <= abs(self.hi - xe) else self.hi
        self.root(end, xe)
        raise self.jumped()

    # -- failures -----------------------------------------------------------------------------------

    def out_of_reach(self, toward: Extreme, xe: float) -> Failed:
        peaks = "peaks at" if toward == "max" else "bottoms out at"
        more = "more" if toward == "max" else "less"
        text = (
            f"{self.observable} {peaks} {self.show_y(self.seen[xe])} at {self.param.path} = {self.show_x(xe)} "
            f"in {num_text(self.lo)}..{num_text(self.hi)}; {self.goal_text()} needs {more} than this range allows"
        )
        others = other_numbers(self.sim.schema, self.param.path)
        hint = f"try varying {' or '.join(others[:2])}" if others else "no other number parameter to vary"
        if self.lo > bound_or(self.param.min, -math.inf) or self.hi < bound_or(self.param.max, math.inf):
            hint += f", or widen within to {self.param.path}'s range {range_text(self.param)}"
        return Failed("goal_unreachable", text, hint)

    def jumped(self) -> Failed:
        """Brent converged on a crossing no try came within tol of: the response jumps there."""
        pairs = sorted(self.seen.items())
        goal = self.goal.value
        crossings = [(p, q) for p, q in itertools.pairwise(pairs) if (p[1] - goal) * (q[1] - goal) < 0]
        (x1, y1), (x2, y2) = min(crossings, key=lambda pq: pq[1][0] - pq[0][0]) if crossings else (pairs[0], pairs[-1])
        jumps = "between two neighbouring integers" if self.param.type == "integer" else "without passing through it"
        text = (
            f"bracketing failed: {self.observable} crosses {self.goal_text()} between {self.param.path} = "
            f"{self.show_x(x1)} ({self.show_y(y1)}) and {self.show_x(x2)} ({self.show_y(y2)}) {jumps}: the "
            f"response is not continuous or not monotonic there, and no value comes within {num_text(self.goal.tol)}"
        )
        return Failed("goal_unreachable", text, "raise tol, or seek a nearby goal")

    def out_of_tries(self) -> Failed:
        x = self.closest()
        closest = "" if x is None else f"; closest: {self.show_y(self.seen[x])} at {self.param.path} = {self.show_x(x)}"
        text = f"{self.observable} did not reach {self.goal_text()} within max_evals = {self.max_evals} tries{closest}"
        return Failed("goal_unreachable", text, "raise max_evals, or raise tol")

    def goal_text(self) -> str:
        text = self.show_y(self.goal.value)
        return f"{text} ({self.goal.given})" if self.goal.given else text


def optimize() -> Any:
    """scipy.optimize, imported on first use (scipy ships no type hints)."""
    need("scipy", "seek (its root finder)")
    return importlib.import_module("scipy.optimize")

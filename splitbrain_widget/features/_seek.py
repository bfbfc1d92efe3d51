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
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from typing_extensions import Unpack

from ..core import _twins
from ..core._seam import blocking_wait_hears, cannot_hear_in_cell
from ..manifest import Manifest
from ..protocol import ChangedValue, ToolResult
from ._seek_choices import ChoiceSearch, choices_of
from ._seek_goal import (
    Failed,
    OutOfTries,
    Reached,
    Try,
    narrow_to_rules,
    observable_unit,
    other_numbers,
    parse_goal,
    span,
    tries_text,
    varied_param,
)
from ._seek_search import Search

if TYPE_CHECKING:
    from ..widget import TargetWidget


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
    choices: tuple[Any, ...] = ()
    try:
        param = varied_param(manifest, _vary_or_default(manifest, observable, vary))
        if param.type in ("number", "integer"):
            lo, hi = narrow_to_rules(manifest, param, *span(param, within), dict(sim.values))
        else:  # a boolean or an enum: each of its values is tried
            if within is not None:
                raise Failed("invalid_value", f"within: {param.path} is a {param.type}; seek tries each of its values")
            choices = choices_of(manifest, param, dict(sim.values))
            lo, hi = 0.0, float(len(choices) - 1)
        parsed = parse_goal(goal, observable_unit(manifest, observable), tol)
        if isinstance(max_evals, bool) or not isinstance(max_evals, int) or max_evals < 2:
            raise Failed("invalid_value", f"max_evals: expected an integer of at least 2, got {max_evals!r}")
    except Failed as exc:
        return ToolResult.failure(exc.code, exc.message, hint=exc.hint, op="seek", target=sim.target_id)
    if not blocking_wait_hears(sim):  # each try waits for the page: in this cell it would hear none
        raise RuntimeError(cannot_hear_in_cell("seek()", "`await sim.aseek(...)`"))
    deadline = math.inf if timeout is None else time.monotonic() + timeout
    on_try = options.get("on_try")
    search = (
        ChoiceSearch(sim, param, observable, parsed, lo, hi, max_evals, deadline, on_try, cancelled, choices=choices)
        if choices
        else Search(sim, param, observable, parsed, lo, hi, max_evals, deadline, on_try, cancelled)
    )
    return _run(search, options.get("keep_closest", False))


def _run(search: Search, keep_closest: bool) -> ToolResult:
    """Drive the search; put the parameter back (or at the closest value) unless it succeeded."""
    sim, path = search.sim, search.param.path
    original = sim.values.get(path, search.param.value)
    outcome: ToolResult | None = None
    try:
        try:
            outcome = _succeed(search, _solve(search))
        except Failed as exc:
            outcome = _fail(search, exc, original, keep_closest)
        return outcome
    finally:
        if outcome is None and search.ours() and search.written != original:  # an exception: no half-made change
            sim.set_parameters({path: original})


def _solve(search: Search) -> float:
    """The value the search settles on; raises :class:`Failed` when the goal cannot be met."""
    extreme = search.goal.extreme
    try:
        if extreme is not None:
            return search.extremum(extreme)
        search.reach()
    except Reached as reached:
        return reached.x
    except OutOfTries:
        raise search.out_of_tries() from None


def _settle(search: Search, x: float) -> tuple[dict[str, Any], ToolResult | None]:
    """Leave the page at ``x`` with its state measured there: one more page call (not a try) unless
    the last try was ``x``."""
    if search.page_x != x or search.page_state is None:
        search.measure(x)
    return search.page_state or search.states.get(x, {}), search.last


def _succeed(search: Search, x: float) -> ToolResult:
    try:
        state, last = _settle(search, x)
    except Failed as exc:
        raise Failed(exc.code, f"the answer was found but could not be set: {exc.message}", exc.hint) from None
    y = search.seen[x]
    n = tries_text(len(search.evaluations))
    at = f"with {search.param.path} = {search.show_x(x)}"
    if search.goal.extreme is None:
        message = f"{search.observable} reached {search.show_y(y)} (goal {search.goal_text()}) {at} after {n}"
    else:
        largest = "largest" if search.goal.extreme == "max" else "smallest"
        span = search.range_words()
        message = f"{search.observable} is {largest}, {search.show_y(y)}, {at} {span} after {n}"
        if search.exhausted:
            message += f" (max_evals = {search.max_evals} ran out: a better value may lie between the tries)"
    return ToolResult(
        ok=True,
        op="seek",
        target=search.sim.target_id,
        message=message,
        changed={search.param.path: search.changed(x)},
        state=state,
        applied=last.applied if last is not None else True,
        views_applied=last.views_applied if last is not None else 0,
        evaluations=search.evaluations,
    )


def _fail(search: Search, exc: Failed, original: Any, keep_closest: bool) -> ToolResult:
    """The failure result, after the parameter went back (or to the closest value, with keep_closest)."""
    sim, path = search.sim, search.param.path
    search.deadline = math.inf  # putting things right is not held to the seek's deadline
    closest = search.closest()
    changed: dict[str, ChangedValue] = {}
    result: ToolResult | None = None
    state = search.page_state
    kept = False
    if keep_closest and closest is not None and exc.code != "cancelled" and search.ours():
        with contextlib.suppress(Failed):  # the page is at the closest value, measured or not
            state, result = _settle(search, closest)
        kept = search.ours() and search.reports(search.written, closest)
    if kept and closest is not None:
        changed[path] = search.changed(closest)
        tail = f"; {path} stays at the closest value tried, {search.show_x(closest)} (keep_closest)"
    elif not search.ours() and search.written is not None:
        tail = f"; {path} was changed by someone else meanwhile, so it keeps that value"
    elif search.ours() and search.written != original:
        result = sim.set_parameters({path: original})
        state = result.state if result.ok else state
        tail = f"; {path} is back at {search.show_value(original)}"
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
    numbers = ", ".join(other_numbers(manifest, "")) or "none"
    raise Failed(
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
        lambda cancelled: seek(sim, observable, goal, cancelled=cancelled, **options), undo=undo, what="seek"
    )


# -- small helpers --------------------------------------------------------------------------------

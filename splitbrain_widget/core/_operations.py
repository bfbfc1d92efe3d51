"""The operations behind every tool, and their two drivers.

Every tool exists twice, blocking (``sim.set_parameter("speed", 12)``) and awaitable
(``await sim.aset_parameter("speed", 12)``). Both run the same operation, written once as a
generator that yields what it waits for (:class:`~splitbrain_widget._wait.Wait`) and returns a
:class:`ToolResult`; :meth:`Operations.run_blocking` and :meth:`Operations.run_async` are the two
drivers, the only code that waits (like httpx's auth flows: the flow yields, the client does I/O).

The operations know the widget only through :class:`Session`, the few things they read and write
of its traits; the views only through the bridge (replies, views, state) and a
:class:`~splitbrain_widget.core._seam.Host` (sending). Nothing here imports the widget or a host.
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import logging
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from ..manifest import Manifest, ParameterError
from ..manifest.registry import Target, TargetError, list_targets, load_target
from ..protocol import (
    ERROR_CODES,
    PROTOCOL_VERSION,
    ChangedValue,
    ErrorCode,
    ErrorInfo,
    Op,
    ToolResult,
    changed_value,
    request,
)
from . import _kernel_tap, _page_truth
from ._audit import AuditEntry, AuditLog, current_source
from ._bridge import Bridge, PendingRequest
from ._call_line import BLOCKING_CALL, CallLine, turn_key
from ._pacing import PACER, Ticket
from ._platform import in_browser
from ._seam import Host, ViewHost, answers_reach_caller, as_host
from ._secrets import redact
from ._wait import Operation, Wait

T = TypeVar("T")
Summary = Callable[[T], ToolResult]  # what an audited feature call did, as a tool result

NO_VIEW_MESSAGE = "no view of the widget is displayed; the change is kept and applies when the widget is displayed"
NOT_KEPT = ("target_error", "cancelled")  # the page gave the change back, or the call was taken back
ASYNC_TWINS = {"action": "aact"}  # an audit op whose awaitable twin is not ``a`` + its name
# the request each tool sends, for the result of a call that did not wait for its answer
_DEFERRED_OPS: dict[str, Op] = {"set_parameters": "apply", "reset": "reset", "action": "action"}
log = logging.getLogger("splitbrain_widget.operations")
_AFTER_CELL: set[Any] = set()  # the calls handed over to the kernel's loop, until they finish there
_TURN = turn_key(0).removesuffix("0")  # how the key of a turn in the call line begins


def _calls_reach_iopub() -> bool:
    """Whether a call's messages pass a notebook server's IOPub (and its rate limit): in a kernel."""
    return _kernel_tap.kernel() is not None


class Session(Protocol):
    """What the operations read and write of the widget whose calls they run."""

    lock: threading.RLock  # the trait lock: a commit and its request's send are one step under it

    @property
    def target(self) -> Target: ...

    @property
    def values(self) -> dict[str, Any]: ...

    @property
    def targets_dirs(self) -> tuple[str | Path, ...]: ...

    def commit(self, values: Mapping[str, Any], *, defer_echo: bool) -> None:
        """Write validated values into the synced ``values`` trait (its echo deferred or not)."""

    def show_target(self, loaded: Target) -> None:
        """Make ``loaded`` the active target: its manifest, page and default values."""

    def after_calls(self) -> None:
        """A call ended: when none is pending, the ``state`` trait catches up and the echo goes out."""


class Operations:
    """One widget's calls: the operations, their drivers and the audit of every call.

    Args:
        session: the widget's traits, as the operations need them.
        bridge: pending requests and live views.
        line: the line of calls waiting for a view.
        host: where requests go, behind the seam (``_seam.Host``: the comm's views, a headless page,
            the headless page a widget falls back on while no view is displayed, a fake view).
        timeout: the default deadline of one call, in seconds.
    """

    def __init__(
        self,
        session: Session,
        bridge: Bridge,
        line: CallLine,
        host: ViewHost | Host,
        *,
        timeout: float,
    ) -> None:
        self._session = session
        self.bridge = bridge
        self._line = line
        self.host = host
        self.timeout = timeout
        self.audit = AuditLog()
        self.on_page_kept: Callable[[str], None] | None = None  # the panel's notice (the widget sets it)

    @property
    def host(self) -> ViewHost | Host:
        """Where requests go, as it was given (a plain ``ViewHost`` gets the seam's defaults: ``seam``)."""
        return self._host

    @host.setter
    def host(self, host: ViewHost | Host) -> None:
        self._host = host
        self.seam = as_host(host)

    # -- operations (one implementation for both drivers) -------------------------------------

    def get_parameters(self) -> Operation:
        manifest, values = self._session.target.manifest, self._session.values
        params = {
            path: p.model_dump(exclude_none=True, exclude={"value"}) | {"value": values.get(path, p.value)}
            for path, p in manifest.parameters.items()
        }
        return self.done(ToolResult(ok=True, values=dict(self._session.values), parameters=params))
        yield  # pragma: no cover - makes this a generator

    def list_targets(self) -> Operation:
        found = list_targets(*self._session.targets_dirs)
        targets = [{"id": t.id, "title": t.title, "description": t.description} for t in found]
        message = f"active target: {self._session.target.id}"
        if found.problems:
            message += f"; {len(found.problems)} target(s) failed to load: " + "; ".join(found.problems[:5])
        return self.done(ToolResult(ok=True, targets=targets, message=message))
        yield  # pragma: no cover

    def set(self, values: Mapping[str, Any], timeout: float | None) -> Operation:
        manifest = self._session.target.manifest
        if not values:
            return ToolResult.failure("invalid_value", "no parameters given", hint=f"parameters: {manifest.names()}")
        try:
            coerced = manifest.coerce_many(values)
        except ParameterError as exc:
            return ToolResult.failure(exc.code, exc.message, hint=exc.hint or None)  # type: ignore[arg-type]
        rule = manifest.broken_rule({**self._session.values, **coerced})
        if rule is not None:  # a rule between parameters: refused before anything is sent, as a range is
            after = {**self._session.values, **coerced}
            return ToolResult.failure(
                "invalid_value",
                f"refused by a constraint: {rule.describe(after)}",
                hint="change the other parameters of the rule in the same call, or choose a value that keeps it",
                applied=False,
            )
        changed = {path: _changed(manifest, path, v) for path, v in coerced.items()}
        before = dict(self._session.values)
        result = yield from self.deliver("apply", {"values": coerced}, timeout, changed=changed, commit=coerced)
        return self._follow(result, coerced, before)

    def reset(self, timeout: float | None) -> Operation:
        defaults = self._session.target.manifest.defaults()
        changed = {path: _changed(self._session.target.manifest, path, v) for path, v in defaults.items()}
        result = yield from self.deliver("reset", {"values": defaults}, timeout, changed=changed, commit=defaults)
        return self._follow(result, defaults, {})

    def _follow(self, result: ToolResult, asked: Mapping[str, Any], before: Mapping[str, Any]) -> ToolResult:
        """A bound page's answer to a set or reset: each asked parameter's value in ``values`` becomes
        what the page's model holds (where nothing newer was set since), ``changed`` says the page's
        value beside the one asked, and the message where they differ (``rule.bias: asked 33.3, the
        page took 33.25``); a value the page did not take at all (a reset's) is warned of too."""
        manifest = self._session.target.manifest
        if not (result.ok and manifest.bound and result.state):
            return result
        refused = _page_truth.refusals(manifest, result.state)
        named = {h.path for h in refused}
        differ = [h for h in _page_truth.took(manifest, result.state, asked) if h.path not in named] + refused
        differ += _page_truth.moved(manifest, result.state, asked, before)
        if not differ:
            return result
        refused = [h for h in self._take_page_values(differ) if h.refused]
        changed = dict(result.changed)
        for held in differ:
            if held.held is None:
                continue
            if held.path in changed:
                changed[held.path] = {**changed[held.path], "value": held.held, "asked": held.asked}
            elif held.kind == "moved":  # a value the call changed too, through the page
                changed[held.path] = _changed(manifest, held.path, held.held)
        if refused:
            self._page_kept(refused)
        text = _page_truth.words(manifest, differ)
        return result.model_copy(update={"changed": changed, "message": f"{result.message}; {text}"})

    def page_refused(self, state: Mapping[str, Any]) -> None:
        """A bound page's state after values it got outside a call (as it opened, or ``values`` assigned
        directly): those it did not take (named under ``_refused``) are taken from it as it holds them,
        warned of, audited and told to the panel."""
        manifest = self._session.target.manifest
        refused = _page_truth.refusals(manifest, state) if manifest.bound else []
        refused = self._take_page_values(refused)
        if not refused:
            return
        text = self._page_kept(refused)
        self.audit.record(
            AuditEntry(
                time=time.time(),
                op="page_kept",
                arguments={},
                ok=True,
                code=None,
                message=text,
                duration_ms=0.0,
                view_id=None,
                views_applied=0,
                changed={h.path: copy.deepcopy(h.held) for h in refused if h.held is not None},
                target=self._session.target.id,
                source="view",
            )
        )

    def _take_page_values(self, held: list[_page_truth.Held]) -> list[_page_truth.Held]:
        """Commit the page's values, each where ``values`` still holds the one asked, and return those:
        a value the kernel has moved on from since (a newer set, a refused call's values put back) is
        old news, neither taken nor told."""
        manifest = self._session.target.manifest
        with self._session.lock:
            current = self._session.values
            news = [h for h in held if h.path in manifest.parameters and _page_truth.same(current.get(h.path), h.asked)]
            taken = {h.path: h.held for h in news if h.held is not None}
            if taken:
                self._session.commit(taken, defer_echo=False)
        return news

    def _page_kept(self, refused: list[_page_truth.Held]) -> str:
        """Warn (Python) and tell the panel that the page kept its own values for ``refused``."""
        text = f"the page of '{self._session.target.id}' kept its own values: " + _page_truth.words(
            self._session.target.manifest, refused
        )
        warnings.warn(text, _page_truth.PageValueWarning, stacklevel=2)
        if self.on_page_kept is not None:
            self.on_page_kept(text)
        return text

    def fetch_state(self, timeout: float | None) -> Operation:
        return (yield from self.deliver("state", {}, timeout, needs_view=True))

    def snapshot(self, timeout: float | None) -> Operation:
        """A picture of the page, taken inside its sandbox (the reply's ``picture``)."""
        result = yield from self.deliver("snapshot", {}, timeout, needs_view=True)
        if result.ok and result.picture is None:
            return ToolResult.failure(
                "target_error", "the view answered the snapshot without a picture", applied=False, op="snapshot"
            )
        return result.model_copy(update={"message": "took a picture"}) if result.ok else result

    def act(self, name: str, timeout: float | None) -> Operation:
        """Run the manifest's action ``name`` on the page; a name the manifest does not declare is
        refused before anything is sent (``invalid_value``, listing the actions it does declare)."""
        target = self._session.target
        actions = target.manifest.actions
        if not isinstance(name, str) or name not in actions:
            if not actions:
                return ToolResult.failure(
                    "invalid_value",
                    f"target '{target.id}' declares no actions (its manifest has no \"actions\"), so it cannot "
                    f"run {name!r}",
                    hint='declare it under "actions" in the target\'s manifest',
                    op="action",
                )
            known = ", ".join(repr(known_name) for known_name in actions)
            close = difflib.get_close_matches(str(name), list(actions), n=3)
            return ToolResult.failure(
                "invalid_value",
                f"target '{target.id}' has no action {name!r}; its actions are {known}",
                hint=f"did you mean {', '.join(repr(c) for c in close)}?" if close else None,
                op="action",
            )
        result = yield from self.deliver("action", {"name": name}, timeout, needs_view=True)
        if result.ok and target.manifest.bound and actions[name].steps and result.state:
            self._follow_page(result.state)
        return result.model_copy(update={"message": f"ran {name}"}) if result.ok else result

    def _follow_page(self, state: Mapping[str, Any]) -> None:
        """After a bound page's action (whose steps may set parameters), take the values the page says it
        holds: the kernel's values follow the page, never the other way round. A value that is not valid
        for its parameter is left out (the state is the page's word, untrusted)."""
        manifest = self._session.target.manifest
        taken: dict[str, Any] = {}
        for path, param in manifest.parameters.items():
            if path in state and state[path] is not None:
                try:
                    value = param.check_value(state[path])
                except ParameterError:
                    continue
                if self._session.values.get(path) != value:
                    taken[path] = value
        if taken:
            with self._session.lock:
                self._session.commit(taken, defer_echo=False)

    def select(self, target: str | Path, timeout: float | None) -> Operation:
        try:
            loaded = load_target(target, *self._session.targets_dirs)
        except TargetError as exc:
            return ToolResult.failure("unknown_target", exc.message, hint=exc.hint or None)
        except ValueError as exc:  # a broken manifest: name the file and field
            return ToolResult.failure("unknown_target", f"target '{target}' failed to load: {exc}")
        self.bridge.forget_views()
        self._session.show_target(loaded)
        result = yield from self.deliver("state", {}, timeout)
        return result.model_copy(update={"message": f"switched to {loaded.title} ({loaded.id}). {result.message}"})

    def deliver(
        self,
        op: Op,
        payload: dict[str, Any],
        timeout: float | None,
        *,
        changed: dict[str, ChangedValue] | None = None,
        needs_view: bool = False,
        commit: dict[str, Any] | None = None,
    ) -> Operation:
        """Send one request to the views and wait for the first reply, all within ``timeout``.

        ``commit`` (validated values) goes into the synced ``values`` trait as the request is sent
        (or at once when no view is there), so the kernel's copy holds it before this returns, unless
        the target refused it (``target_error``): then the values it replaced come back. The views
        get the trait's echo later, in a pause between calls (see ``_echo.py``): the request
        carries the values, and an echo in its wake would hold up the page's reply (about 1 ms of a
        3-4 ms round trip). Commit and send are one step under the trait lock, and so is an echo, so
        an echo never carries a value whose request the views have not received before it.

        One deadline bounds the whole call: waiting for a view to attach, its turn in the pacer's
        queue and the page's answer. A call whose deadline passes while queued is taken back unsent
        (nothing changed); a ``timeout`` says where the call was when the deadline passed.
        """
        started = time.monotonic()
        deadline_s = self.timeout if timeout is None else timeout
        deadline = started + deadline_s
        current = self._session.values
        previous = {path: current[path] for path in commit or {} if path in current}

        def write_values(defer_echo: bool = False) -> None:
            if commit:
                self._session.commit(commit, defer_echo=defer_echo)

        base: dict[str, Any] = {"op": op, "target": self._session.target.id, "changed": changed or {}}
        self.seam.before_call(views=bool(self.bridge.live_views()), view_expected=self._line.notebook_view_expected())
        turn = self._line.take_turn()
        try:
            if turn is not None and not (yield from self._line.wait_turn(turn, deadline, self.seam.lost, write_values)):
                return ToolResult.failure(
                    "timeout",
                    f"{op} was still queued behind earlier calls waiting for the view to attach when its "
                    f"{deadline_s:g} s deadline passed; it was not sent and nothing changed",
                    applied=False,
                    **base,
                )
            if not self.bridge.live_views():
                write_values()
                return self._not_delivered(op, needs_view, base)
            ticket: Ticket | None = None  # the place in the pacer's queue, when this call waits its turn
            pending = self.bridge.open_request(op, payload, max(0.0, deadline - time.monotonic()))

            def send_request() -> None:
                with self._session.lock:
                    write_values(defer_echo=True)
                    if pending.settled:  # e.g. the last view closed while this waited for its turn: kept
                        return
                    self.seam.send_request(request(pending.id, op, payload))  # the host of now

            finished = submitted = False
            stuck = "queued"  # where the call is: for the message of a timeout
            try:
                # Two messages (the request; later the values and state echo, in one), or in a burst, where
                # the echoes are coalesced, one; in a burst it waits its turn, first come first served, to
                # stay under the IOPub rate limit. Interrupted while queued, it is taken back: nothing changed.
                # Outside a kernel (a script, a Dask worker's sweep) no call reaches a notebook server's
                # IOPub: it costs no tokens, only its place in the widget's in-flight window.
                messages = (1 if PACER.busy else 2) if _calls_reach_iopub() else 0
                ticket = PACER.submit(
                    messages, send_request, on_sent=lambda: self.bridge.touch(pending.id), key=self.bridge
                )
                submitted = True
                self._line.leave(turn)  # in the pacer's FIFO now: the next call waiting for the view may go
                if ticket is not None:
                    yield Wait(lambda: ticket.sent or pending.settled, deadline, key=pending.id)
                    if not ticket.sent and not pending.settled and PACER.cancel(ticket):
                        finished = True
                        ahead = PACER.position(ticket)
                        return ToolResult.failure(
                            "timeout",
                            f"{op} was still queued{ahead} when its {deadline_s:g} s deadline passed (calls are "
                            "paced under the notebook server's IOPub rate limit); it was not sent and nothing changed",
                            hint="give a burst of calls a longer timeout, or send fewer (sim.stream coalesces values)",
                            applied=False,
                            **base,
                        )
                stuck = "sent"
                yield Wait(lambda: pending.settled, deadline, key=pending.id)
                finished = True
            finally:
                if submitted and (ticket is None or not PACER.cancel(ticket)):
                    PACER.done(self.bridge)  # it went out: its place in the window is free again
                # Closed early (interrupt, task cancelled): settle as cancelled so no entry is left behind.
                cancelled = None if finished else ErrorInfo(code="cancelled", message=f"{op} was cancelled")
                self.bridge.close_request(pending, cancelled)
                self._session.after_calls()  # the last call of a burst updates the state; meanwhile it is throttled
                self.seam.call_settled(pending.id)
            refused = pending.reply is not None and pending.reply.error is not None
            if refused and commit and pending.reply.error.code == "target_error":  # type: ignore[union-attr]
                self._restore(commit, previous)
            return self._outcome(pending, base, waited=time.monotonic() - started, stuck=stuck)
        finally:
            self._line.leave(turn)

    def _not_delivered(self, op: Op, needs_view: bool, base: dict[str, Any]) -> ToolResult:
        """No view to send to: a change is kept, not applied, and the code says why."""
        change = _changes_values(op)
        mismatched = self.bridge.mismatched_views()
        if mismatched:
            return ToolResult.failure(
                "protocol_mismatch",
                f"a view is displayed but speaks protocol {mismatched[0].protocol}, the kernel speaks "
                f"{PROTOCOL_VERSION}, so it was not asked" + ("; the change is kept" if change else ""),
                hint="reinstall splitbrain-widget in the kernel's environment and reload the notebook page",
                applied=False,
                kept=change,
                **base,
            )
        why = self.seam.not_delivered(change)
        if why is not None:
            code, message, hint = why
            return ToolResult.failure(code, message, hint=hint, applied=False, kept=change, **base)
        if op == "action":
            return ToolResult.failure(
                "no_view",
                "no view of the widget is displayed, so no page ran the action; an action is not kept",
                hint="display the widget (or use HeadlessTarget), then run the action again",
                applied=False,
                **base,
            )
        if needs_view or not change:
            return ToolResult.failure(
                "no_view",
                "no view of the widget is displayed, so there is no live target to ask",
                applied=False,
                **base,
            )
        return ToolResult.failure("no_view", NO_VIEW_MESSAGE, applied=False, kept=True, **base)

    def _restore(self, refused: dict[str, Any], previous: dict[str, Any]) -> None:
        """The target refused ``refused``: put back what it replaced, where nothing newer was set since."""
        with self._session.lock:
            current = dict(self._session.values)
            back = {path: previous[path] for path, v in refused.items() if current.get(path) == v and path in previous}
            if back:
                self._session.commit(back, defer_echo=False)

    def _outcome(self, pending: PendingRequest, base: dict[str, Any], *, waited: float, stuck: str) -> ToolResult:
        applied = len(pending.answered_by)
        reply, failure = pending.reply, pending.failure
        change = _changes_values(pending.op)
        if reply is not None and reply.ok:
            message = "applied" if pending.op == "apply" else "done"
            return ToolResult(
                ok=True,
                state=reply.state,
                applied=True,
                views_applied=applied,
                message=message,
                answered_by=reply.view_id,
                picture=reply.picture,
                **base,
            )
        if reply is not None and reply.error is not None:
            return ToolResult(
                ok=False,
                error=reply.error,
                applied=False,
                kept=_kept(pending.op, reply.error.code),
                views_applied=applied,
                answered_by=reply.view_id,
                **base,
            )
        if failure is not None:
            return ToolResult(ok=False, error=failure, applied=False, kept=_kept(pending.op, failure.code), **base)
        kept_text = " The change is kept and applies once the target is ready." if change else ""
        if pending.op == "action":  # the view holds what it sent or queued: the page may still get to it
            kept_text = " The action is not kept, but the page may still run it late."
        if not self.bridge.ready_views():
            return ToolResult.failure(
                "not_ready",
                f"the target '{self._session.target.id}' did not signal ready within {waited:.3g} s.{kept_text}",
                hint="is the page calling SplitBrain.ready()? Check the browser console of the notebook page",
                applied=False,
                kept=change,
                **base,
            )
        where = "sent to the view, waiting for the page's answer" if stuck == "sent" else stuck
        return ToolResult.failure(
            "timeout",
            f"the target did not answer {pending.op} within {waited:.3g} s ({where}).{kept_text}",
            hint="raise the timeout, or check the target's onApply handler",
            applied=False,
            kept=change,
            **base,
        )

    def done(self, result: ToolResult) -> ToolResult:
        return result.model_copy(update={"target": self._session.target.id})

    # -- drivers ---------------------------------------------------------------------------

    def run_blocking(
        self, name: str, arguments: dict[str, Any], operation: Operation, *, audit: bool = True
    ) -> ToolResult:
        """Drive ``operation`` to its end on this thread and audit it (``audit=False``: the package's own
        calls that change nothing, the pictures of a widget's outputs)."""
        started = time.monotonic()
        _kernel_tap.prepare_thread()
        blocking = BLOCKING_CALL.set(True)
        handed_off = False
        try:
            step = next(operation)
            while True:
                if not step.done() and not _moves_without_page(step) and not self._answers_reach(awaiting=False):
                    # The page's answer cannot reach this thread before its cell ends: send, keep, return.
                    handed_off = self._finish_after_cell(operation, step, started)
                    result = self._deferred(name, arguments, awaiting=False)
                    break
                step = operation.send(self.bridge.wait_until(step.done, step.deadline))
        except StopIteration as stop:
            result = stop.value
        except KeyboardInterrupt:
            operation.close()
            if audit:
                self.record(name, arguments, cancelled_result(name), started)
            raise
        finally:
            if not handed_off:
                operation.close()  # whatever ended the drive: the operation's own cleanup runs now
            BLOCKING_CALL.reset(blocking)
        return self.record(name, arguments, result, started) if audit else self.done(result)

    async def run_async(self, name: str, arguments: dict[str, Any], operation: Operation) -> ToolResult:
        import asyncio

        started = time.monotonic()
        _kernel_tap.prepare_thread()
        handed_off = False
        try:
            step = next(operation)
            while True:
                if not step.done() and not _moves_without_page(step) and not self._answers_reach(awaiting=True):
                    handed_off = self._finish_after_cell(operation, step, started)
                    result = self._deferred(name, arguments, awaiting=True)
                    break
                step = operation.send(await self.bridge.await_until(step.done, step.deadline, step.key))
        except StopIteration as stop:
            result = stop.value
        except asyncio.CancelledError:
            operation.close()
            self.record(name, arguments, cancelled_result(name), started)
            raise
        finally:
            if not handed_off:
                operation.close()  # whatever ended the drive: the operation's own cleanup runs now
        return self.record(name, arguments, result, started)

    # -- calls whose answer comes after the cell (docs/protocol.md section 3, ``deferred``) ------

    def _answers_reach(self, *, awaiting: bool) -> bool:
        return answers_reach_caller(self.seam, awaiting=awaiting)

    def _finish_after_cell(self, operation: Operation, step: Wait, started: float) -> bool:
        """Hand the rest of ``operation`` to the kernel's main loop, which runs it once the cell ends.

        There it waits as the driver would have, with the call's whole timeout counted from then (the
        cell may have outlasted it), so the page's late answer still settles the request: the
        ``state`` trait catches up, and a refusal (``target_error``) gives back the values it replaced.
        Returns False, and the caller closes the operation, where no loop can take it."""
        loop = _kernel_tap.main_loop()
        if loop is None:
            return False
        budget = max(0.0, step.deadline - started)

        async def finish() -> None:
            _kernel_tap.prepare_thread()
            resumed_by = time.monotonic() + budget
            current = step
            try:
                while True:
                    deadline = max(current.deadline, resumed_by)
                    current = operation.send(await self.bridge.await_until(current.done, deadline, current.key))
            except StopIteration as stop:
                late: ToolResult = stop.value
                if not late.ok and late.error is not None:
                    log.warning("a call that did not wait for its cell ended after it: %s", late)
            except Exception:
                log.exception("a call handed over to the kernel's loop failed")
            finally:
                operation.close()

        def start() -> None:
            import asyncio

            task = asyncio.ensure_future(finish())
            _AFTER_CELL.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(_AFTER_CELL.discard)

        loop.call_soon_threadsafe(start)
        return True

    def _deferred(self, name: str, arguments: dict[str, Any], *, awaiting: bool) -> ToolResult:
        """The result of a call that did not wait for the page: what was sent, what is kept, when the answer comes."""
        op = _DEFERRED_OPS.get(name, "state")
        change = _changes_values(op)
        requested = self._requested(name, arguments)
        sent = bool(self.bridge.live_views())
        current = self._session.values
        committed = all(path in current and current[path] == c["value"] for path, c in requested.items())
        if not sent:
            where = "not sent yet: no view has attached (one displayed in this cell attaches after it)"
        elif committed:
            where = "sent to the view"
        else:  # its send waits its turn in the pacer's queue (a burst), which sends it without the page
            where = "queued behind earlier calls, sent in its turn"
        kept = " The change is kept: sim.values holds it and the page gets it." if change else ""
        if change and not committed:
            kept = " The change is kept: sim.values gets it when it is sent, and the page with it."
        if op == "action":
            kept = " The action is not kept; the page runs it when it gets it." if sent else " The action is not kept."
        how = "an awaited call on this loop" if awaiting else "a blocking call on the thread that runs cells"
        message = (
            f"{name} did not wait for the page's answer: {_kernel_tap.describe()} hands it to Python only after "
            f"the running cell ends, and this is {how} ({where}).{kept} The page's state arrives in sim.state "
            "after the cell."
        )
        hint = (
            "read sim.state in a later cell"
            + (
                ""
                if awaiting or in_browser()  # in the browser an awaited call in a cell does not hear it either
                else f", or await the call here (`await sim.{ASYNC_TWINS.get(name, 'a' + name)}(...)`)"
            )
            + "; the chat panel and calls from other threads wait for the page as usual"
        )
        return ToolResult.failure(
            "deferred",
            message,
            hint=hint,
            applied=False,
            kept=change,
            op=op,
            target=self._session.target.id,
            changed=requested,
        )

    def _requested(self, name: str, arguments: dict[str, Any]) -> dict[str, ChangedValue]:
        """What a set or reset asked for, path -> value (with its unit), as its ``changed`` says."""
        manifest = self._session.target.manifest
        if name == "reset":
            wanted = manifest.defaults()
        elif name == "set_parameters":
            try:
                wanted = manifest.coerce_many(arguments)
            except ParameterError:
                return {}
        else:
            return {}
        return {path: _changed(manifest, path, value) for path, value in wanted.items()}

    def record(self, name: str, arguments: dict[str, Any], result: ToolResult, started: float) -> ToolResult:
        """Audit one call: its result, what it left in ``values``, the target after it, and its source
        (:func:`~splitbrain_widget._audit.call_source`, read in the context that ends the call)."""
        result = self.done(result)
        source = current_source()
        self.audit.record(
            AuditEntry(
                time=time.time(),
                op=name,
                arguments=redact(arguments),
                ok=result.ok,
                code=result.error.code if result.error else None,
                message=str(result),
                duration_ms=(time.monotonic() - started) * 1000,
                view_id=result.answered_by,
                views_applied=result.views_applied,
                changed=self._left(name, arguments, result),
                target=result.target,
                source=source.text if source is not None else None,
                agent_id=source.agent_id if source is not None else None,
            )
        )
        return result

    def audited(self, name: str, arguments: dict[str, Any], run: Callable[[], T], summary: Summary[T]) -> T:
        """Run a feature's blocking twin (``seek``, ``advance``, ``record``) and audit it as the tools
        are: one entry, from ``summary(outcome)``, a failure, or ``cancelled`` on Ctrl-C or when the
        awaiter of the thread it runs on was cancelled."""
        started = time.monotonic()
        try:
            outcome = run()
        except (KeyboardInterrupt, asyncio.CancelledError, Exception) as exc:
            self._record_raised(name, arguments, exc, started)
            raise
        return self._recorded(name, arguments, outcome, summary, started)

    async def aaudited(
        self, name: str, arguments: dict[str, Any], run: Callable[[], Awaitable[T]], summary: Summary[T]
    ) -> T:
        """:meth:`audited` for the awaitable twin: the same entry, ``cancelled`` when the task is."""
        started = time.monotonic()
        try:
            outcome = await run()
        except (asyncio.CancelledError, Exception) as exc:
            self._record_raised(name, arguments, exc, started)
            raise
        return self._recorded(name, arguments, outcome, summary, started)

    def _record_raised(self, name: str, arguments: dict[str, Any], exc: BaseException, started: float) -> None:
        """The entry of a twin that raised: ``cancelled`` for Ctrl-C or a cancelled task, else the failure."""
        result = failure_of(exc) if isinstance(exc, Exception) else cancelled_result(name)  # Ctrl-C, a cancel
        self.record(name, arguments, result, started)

    def _recorded(self, name: str, arguments: dict[str, Any], outcome: T, summary: Summary[T], started: float) -> T:
        entry = self.record(name, arguments, summary(outcome), started)
        return cast("T", entry) if isinstance(outcome, ToolResult) else outcome

    def _left(self, name: str, arguments: dict[str, Any], result: ToolResult) -> dict[str, Any]:
        """What a call left in the kernel's ``values``, dotted path -> value: a set's or seek's
        ``changed`` (a change kept for a page to come counts: the values hold it), a reset's defaults,
        the new target's defaults after ``select_target``; nothing for a read or a refused call
        (``target_error``, an invalid value, a queued call whose deadline passed). A call cancelled
        after it committed its values left them: those still in ``values`` count."""
        code = result.error.code if result.error is not None else None
        if name == "select_target":
            # it loads and shows the target before its first wait, so only a refusal left nothing
            switched = code != "unknown_target"
            return copy.deepcopy(self._session.target.manifest.defaults()) if switched else {}
        if code == "cancelled" and name in ("set_parameters", "reset"):
            return self._still_there(name, arguments)
        if not (result.ok or result.kept or name == "seek"):  # seek: its changed is what it left, either way
            return {}
        return {path: copy.deepcopy(change["value"]) for path, change in result.changed.items()}

    def _still_there(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The values an interrupted set or reset would have committed that ``values`` holds now."""
        manifest, current = self._session.target.manifest, self._session.values
        if name == "reset":
            wanted = manifest.defaults()
        else:
            try:
                wanted = manifest.coerce_many(arguments)
            except ParameterError:
                return {}
        return {path: copy.deepcopy(v) for path, v in wanted.items() if path in current and current[path] == v}


def _moves_without_page(step: Wait) -> bool:
    """Whether ``step`` ends without a message from the page: a turn in line behind earlier calls
    (they leave it by themselves, within their deadlines)."""
    return step.key is not None and step.key.startswith(_TURN)


def _changed(manifest: Manifest, path: str, value: Any) -> ChangedValue:
    return changed_value(value, manifest.parameters[path].unit)


def _kept(op: Op, code: str) -> bool:
    """Whether a change that was not applied stays in the kernel's values and reaches the page later:
    yes (a missing, stopped or slow page), unless the page refused it (``target_error``: the values
    it replaced came back) or the call was taken back (``cancelled``). A state request or an action
    changes no value."""
    return _changes_values(op) and code not in NOT_KEPT


def _changes_values(op: Op) -> bool:
    """Whether a request carries values the kernel keeps (``apply``, ``reset``); ``state`` and ``action`` do not."""
    return op in ("apply", "reset")


def cancelled_result(name: str) -> ToolResult:
    return ToolResult.failure("cancelled", f"{name} was interrupted before the target answered")


def failure_of(exc: Exception) -> ToolResult:
    """An exception a feature raised, as the audit records it: its protocol code where it has one
    (a :class:`~splitbrain_widget.headless.HeadlessError`), ``invalid_value`` for a bad argument."""
    code = getattr(exc, "code", None)
    if code not in ERROR_CODES:
        code = "invalid_value" if isinstance(exc, (ValueError, TypeError)) else "internal_error"
    return ToolResult.failure(cast("ErrorCode", code), str(exc) or type(exc).__name__)

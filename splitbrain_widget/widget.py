"""TargetWidget: a target page in a sandboxed iframe, and the tool surface that steers it.

Every tool exists twice, blocking (``sim.set_parameter("speed", 12)``) and awaitable
(``await sim.aset_parameter("speed", 12)``). Both run the same operation, written once as a
generator that yields what it is waiting for (:class:`_Wait`); ``_run_blocking`` and
``_run_async`` are the two drivers.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from . import _kernel_tap
from ._audit import AuditEntry, AuditLog
from ._bridge import Bridge, PendingRequest
from ._chat import POLICIES, ChatController
from ._host import CommHost, ViewHost
from ._later import LATER
from ._pacing import PACER, Ticket
from ._secrets import redact
from ._stream import Streamer, StreamStats
from .manifest import Manifest, ParameterError
from .protocol import (
    PROTOCOL_VERSION,
    VIEW_MESSAGE_KINDS,
    ApprovalMessage,
    CancelMessage,
    ChangedValue,
    ChatMessage,
    ErrorCode,
    ErrorInfo,
    EventMessage,
    Op,
    ProtocolError,
    ReplyMessage,
    SetMessage,
    SkipWaitMessage,
    ToolResult,
    parse_view_message,
    request,
)
from .registry import Target, TargetError, list_targets, load_target

if TYPE_CHECKING:
    from .headless import HeadlessFallback

log = logging.getLogger("splitbrain_widget")

_STATIC = Path(__file__).parent / "static"
SYNC_INTERVAL_S = 0.1  # while a burst runs, the views get the state at most this often
ECHO_DELAY_S = 0.03  # a call's echo to the views waits this long for a pause between calls ...
ECHO_MAX_DELAY_S = 0.5  # ... and no longer than this
NO_VIEW_MESSAGE = "no view of the widget is displayed; the change is kept and applies when the widget is displayed"
ENV_HEADLESS = "SPLITBRAIN_HEADLESS"  # "1": every widget without a view runs its calls on a headless page
NOT_KEPT = ("target_error", "cancelled")  # the page gave the change back, or the call was taken back


# Set while a blocking driver runs an operation (see TargetWidget._take_turn).
_BLOCKING_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("splitbrain_blocking_call", default=False)
NO_LINE = -1  # a turn that waits for the view but not behind the others (a blocking call, see _take_turn)


def _turn_key(turn: int) -> str:
    """What wakes a call waiting for its turn behind earlier calls (see ``TargetWidget._wait_turn``)."""
    return f"turn:{turn}"


def _calls_reach_iopub() -> bool:
    """Whether a call's messages pass a notebook server's IOPub (and its rate limit): in a kernel."""
    return _kernel_tap.kernel() is not None


class _Wait:
    """A step of an operation: wait until ``done()`` holds or ``deadline`` (monotonic) passes.

    ``key`` names the request waited for, so only its reply (or a change of the views) wakes it.
    """

    __slots__ = ("deadline", "done", "key")

    def __init__(self, done: Callable[[], bool], deadline: float, key: str | None = None) -> None:
        self.done = done
        self.deadline = deadline
        self.key = key


Operation = Generator[_Wait, bool, ToolResult]


class TargetWidget(anywidget.AnyWidget):
    """A live target (a simulation page) in a notebook cell, steerable from Python and by an agent.

    Args:
        target: a target id (see :func:`splitbrain_widget.list_targets`) or a path to its page,
            manifest or folder.
        height: iframe height in CSS pixels.
        targets_dir: extra folder(s) searched for targets, before ``SPLITBRAIN_TARGETS`` and the built-ins.
        timeout: default deadline of one browser round trip, in seconds.
        attach_timeout: how long a call waits for a view to appear right after the widget was displayed.
        chat: show a chat panel and parameter inspector beside the target, answered by a default
            ``Agent(sim)`` (the offline planner unless ``SPLITBRAIN_MODEL`` says otherwise).
        approval: a policy per parameter path, leaf name or tool (``"auto"``, ``"ask"``, ``"deny"``;
            ``"*"`` for the rest): "ask" shows Approve / Deny in the panel before the agent's change runs.
        headless: while no view is displayed, run the calls on a headless page (Chromium, virtual
            clock, seed 0) that a notebook view takes over when one appears; None (the default)
            follows ``SPLITBRAIN_HEADLESS=1``. See :class:`~splitbrain_widget.headless.HeadlessFallback`.

    Raises:
        HeadlessUnavailable: ``headless=True`` where Chromium or playwright is missing (with
            ``SPLITBRAIN_HEADLESS=1`` the widget works with views, and a call without one answers
            ``no_view`` with the install hint instead).
    """

    _esm = _STATIC / "widget.js"

    target_id = traitlets.Unicode("").tag(sync=True)
    manifest = traitlets.Dict().tag(sync=True)
    _html = traitlets.Unicode("").tag(sync=True)
    values = traitlets.Dict().tag(sync=True)
    state = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    protocol_version = traitlets.Int(PROTOCOL_VERSION).tag(sync=True)
    chat_enabled = traitlets.Bool(False).tag(sync=True)
    chat_busy = traitlets.Bool(False).tag(sync=True)
    chat_model = traitlets.Unicode("").tag(sync=True)
    transcript: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    approval = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        target: str | Path = "bouncer",
        *,
        height: int = 420,
        targets_dir: str | Path | list[str | Path] | None = None,
        timeout: float = 10.0,
        attach_timeout: float = 5.0,
        chat: bool = False,
        approval: dict[str, str] | None = None,
        headless: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(targets_dir, str | Path):
            self._targets_dirs: tuple[str | Path, ...] = (targets_dir,)
        else:
            self._targets_dirs = tuple(targets_dir or ())
        loaded = load_target(target, *self._targets_dirs)
        self.timeout = timeout
        self.attach_timeout = attach_timeout
        self.audit = AuditLog()
        self._target = loaded
        self._displayed_at: float | None = None
        self._displayed_by_frontend = False
        self._view_expected_until = 0.0  # see expect_view
        # Calls that wait for a view, in call order: a later call never goes before them (_wait_turn).
        self._arrivals = itertools.count()
        self._waiting_for_view: collections.deque[int] = collections.deque()
        self._turn_threads: dict[int, int] = {}  # turn -> the thread that took it
        self._order_lock = threading.Lock()
        self._trait_lock = threading.RLock()
        self._state_sync_pending = False
        self._synced_state_version = 0
        self._synced_at = 0.0
        self._deferring: frozenset[str] = frozenset()  # traits whose echo to the views waits (see send_state)
        self._echo_due: set[str] = set()
        self._echo_scheduled = False
        self._echo_since = 0.0
        self.bridge = Bridge(on_change=self._schedule_state_sync)
        self.host: ViewHost = CommHost(self)
        self._fallback: HeadlessFallback | None = None
        if headless or (headless is None and os.environ.get(ENV_HEADLESS, "").strip() == "1"):
            from .headless import HeadlessFallback

            self._fallback = HeadlessFallback(self, required=bool(headless))
        self._chat: ChatController | None = None
        self._streamer = Streamer(lambda batch: self.set_parameters(batch))
        super().__init__(height=height, approval=dict(approval or {}), **self._target_traits(loaded), **kwargs)
        if chat:
            self.chat()
        self._comm_id = str(self.model_id)
        self.on_msg(self._on_custom_message)
        if _kernel_tap.install():
            _kernel_tap.register(self._comm_id, self._tap_message)
        self.observe(self._closed, names="comm")

    # -- the tool surface: blocking ------------------------------------------------------------

    def get_parameters(self) -> ToolResult:
        """The current value of every parameter, with its schema (type, unit, range, description)."""
        return self._run_blocking("get_parameters", {}, self._op_get_parameters())

    def set_parameter(self, name: str, value: Any, *, timeout: float | None = None) -> ToolResult:
        """Set one parameter (by dotted path or unique leaf name) and return what the target reports."""
        return self.set_parameters({name: value}, timeout=timeout)

    def set_parameters(self, values: Mapping[str, Any], *, timeout: float | None = None) -> ToolResult:
        """Set several parameters at once; nothing is changed if any value is refused."""
        return self._run_blocking("set_parameters", dict(values), self._op_set(values, timeout))

    def reset(self, *, timeout: float | None = None) -> ToolResult:
        """Restore every parameter to the manifest's default and reset the target."""
        return self._run_blocking("reset", {}, self._op_reset(timeout))

    def fetch_state(self, *, timeout: float | None = None) -> ToolResult:
        """Ask the target for a fresh state (its observables)."""
        return self._run_blocking("get_state", {}, self._op_fetch_state(timeout))

    def select_target(self, target: str | Path, *, timeout: float | None = None) -> ToolResult:
        """Switch to another target; its parameters start at their defaults."""
        return self._run_blocking("select_target", {"target": str(target)}, self._op_select(target, timeout))

    def available_targets(self) -> ToolResult:
        """The targets this widget can switch to."""
        return self._run_blocking("list_targets", {}, self._op_list_targets())

    def stream(self, values: Mapping[str, Any]) -> None:
        """Send values without waiting, for slider-like streams (opt-in coalescing).

        At most one apply is in flight; values given meanwhile are merged, the latest per parameter
        winning, and sent as one apply when it returns. Bad values raise :class:`ParameterError`
        at once; ``sim.values`` changes immediately. See :attr:`stream_stats` and :meth:`flush_stream`.
        """
        coerced = self.schema.coerce_many(values)
        with self._trait_lock, self._deferred_echo("values"):  # one echo per pause, not one per value
            self.values = {**self.values, **coerced}
        self._schedule_echo()
        self._streamer.push(coerced)

    def flush_stream(self, timeout: float = 30.0) -> bool:
        """Wait until every streamed value was sent and answered; True only if the page applied every
        batch sent since the last flush (``stream_stats.failed`` and ``.last_error`` say what did not)."""
        return self._streamer.flush(timeout)

    @property
    def stream_stats(self) -> StreamStats:
        """How many streamed values were given, sent, and coalesced away."""
        return self._streamer.stats

    # -- the tool surface: async twins ---------------------------------------------------------

    async def aget_parameters(self) -> ToolResult:
        return await self._run_async("get_parameters", {}, self._op_get_parameters())

    async def aset_parameter(self, name: str, value: Any, *, timeout: float | None = None) -> ToolResult:
        return await self.aset_parameters({name: value}, timeout=timeout)

    async def aset_parameters(self, values: Mapping[str, Any], *, timeout: float | None = None) -> ToolResult:
        return await self._run_async("set_parameters", dict(values), self._op_set(values, timeout))

    async def areset(self, *, timeout: float | None = None) -> ToolResult:
        return await self._run_async("reset", {}, self._op_reset(timeout))

    async def afetch_state(self, *, timeout: float | None = None) -> ToolResult:
        return await self._run_async("get_state", {}, self._op_fetch_state(timeout))

    async def aselect_target(self, target: str | Path, *, timeout: float | None = None) -> ToolResult:
        return await self._run_async("select_target", {"target": str(target)}, self._op_select(target, timeout))

    async def aavailable_targets(self) -> ToolResult:
        return await self._run_async("list_targets", {}, self._op_list_targets())

    # -- chat -------------------------------------------------------------------------------------

    def chat(self, agent: Any = None) -> TargetWidget:
        """Show the chat panel, answered by ``agent`` (default: ``Agent(self)``, created on first use)."""
        controller = self._controller()
        if agent is not None:
            controller.agent = agent
        if agent is not None:
            self.chat_model = agent.model
        self.chat_enabled = True
        return self

    def _controller(self) -> ChatController:
        if self._chat is None:
            self._chat = ChatController(self)
        return self._chat

    @property
    def agent(self) -> Any:
        """The agent answering the chat panel (None until the first message or :meth:`chat`)."""
        return self._chat.agent if self._chat is not None else None

    async def ask_approval(self, tool: str, arguments: dict[str, Any], asking: list[str]) -> tuple[bool, str]:
        """Show Approve / Deny for an agent's call in the chat panel and wait for the click: (approved, why).

        Denied at once, saying so, where no notebook view shows the panel (a headless page has none)."""
        if not self.notebook_views:
            return False, "approval is needed for " + ", ".join(asking) + " but no view of the widget is open"
        return await self._controller().approve(tool, arguments, asking)

    @traitlets.validate("approval")
    def _validate_approval(self, proposal: Any) -> dict[str, str]:
        policies = dict(proposal["value"])
        for key, level in policies.items():
            if level not in POLICIES:
                raise traitlets.TraitError(f"approval[{key!r}]: expected one of {', '.join(POLICIES)}, got {level!r}")
        return policies

    # -- read-only views of the widget ---------------------------------------------------------

    @property
    def target(self) -> Target:
        """The active target (manifest and page)."""
        return self._target

    @property
    def schema(self) -> Manifest:
        """The active target's manifest."""
        return self._target.manifest

    @property
    def targets_dirs(self) -> tuple[str | Path, ...]:
        """The extra folders searched for targets (``targets_dir=``), before ``SPLITBRAIN_TARGETS`` and built-ins."""
        return self._targets_dirs

    @property
    def views(self) -> int:
        """How many views of this widget are attached right now (a headless page counts as one)."""
        return len(self.bridge.live_views())

    @property
    def notebook_views(self) -> int:
        """How many notebook views are attached: the views that are not headless pages (they show the chat panel)."""
        headless = self._headless_view_ids()
        return sum(1 for view in self.bridge.live_views() if view.view_id not in headless)

    def _headless_view_ids(self) -> set[str]:
        page = self._fallback.view_id if self._fallback is not None else None
        return {page} if page is not None else set()

    def expect_view(self, timeout: float) -> None:
        """A view is on its way (a headless page starting, say): for the next ``timeout`` seconds a call
        that finds no view waits for one to attach, within its own deadline, instead of answering
        ``no_view`` at once. ``expect_view(0)`` ends the wait."""
        self._view_expected_until = time.monotonic() + timeout
        self.bridge.wake()

    # -- operations (one implementation for both drivers) -------------------------------------

    def _op_get_parameters(self) -> Operation:
        manifest = self.schema
        params = {
            path: p.model_dump(exclude_none=True, exclude={"value"}) | {"value": self.values.get(path, p.value)}
            for path, p in manifest.parameters.items()
        }
        return self._done(ToolResult(ok=True, values=dict(self.values), parameters=params))
        yield  # pragma: no cover - makes this a generator

    def _op_list_targets(self) -> Operation:
        found = list_targets(*self._targets_dirs)
        targets = [{"id": t.id, "title": t.title, "description": t.description} for t in found]
        message = f"active target: {self.target_id}"
        if found.problems:
            message += f"; {len(found.problems)} target(s) failed to load: " + "; ".join(found.problems[:5])
        return self._done(ToolResult(ok=True, targets=targets, message=message))
        yield  # pragma: no cover

    def _op_set(self, values: Mapping[str, Any], timeout: float | None) -> Operation:
        manifest = self.schema
        if not values:
            return ToolResult.failure("invalid_value", "no parameters given", hint=f"parameters: {manifest.names()}")
        try:
            coerced = manifest.coerce_many(values)
        except ParameterError as exc:
            return ToolResult.failure(exc.code, exc.message, hint=exc.hint or None)  # type: ignore[arg-type]
        changed = {path: _changed(manifest, path, v) for path, v in coerced.items()}
        return (yield from self._deliver("apply", {"values": coerced}, timeout, changed=changed, commit=coerced))

    def _op_reset(self, timeout: float | None) -> Operation:
        defaults = self.schema.defaults()
        changed = {path: _changed(self.schema, path, v) for path, v in defaults.items()}
        return (yield from self._deliver("reset", {"values": defaults}, timeout, changed=changed, commit=defaults))

    def _op_fetch_state(self, timeout: float | None) -> Operation:
        return (yield from self._deliver("state", {}, timeout, needs_view=True))

    def _op_select(self, target: str | Path, timeout: float | None) -> Operation:
        try:
            loaded = load_target(target, *self._targets_dirs)
        except TargetError as exc:
            return ToolResult.failure("unknown_target", exc.message, hint=exc.hint or None)
        except ValueError as exc:  # a broken manifest: name the file and field
            return ToolResult.failure("unknown_target", f"target '{target}' failed to load: {exc}")
        self.bridge.forget_views()
        with self._trait_lock, self.hold_sync():
            self._target = loaded
            for name, value in self._target_traits(loaded).items():
                setattr(self, name, value)
        result = yield from self._deliver("state", {}, timeout)
        return result.model_copy(update={"message": f"switched to {loaded.title} ({loaded.id}). {result.message}"})

    def _deliver(
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
        get the trait's echo later, in a pause between calls (:meth:`_schedule_echo`): the request
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
        previous = {path: self.values[path] for path in commit or {} if path in self.values}

        def write_values(defer_echo: bool = False) -> None:
            if commit:
                with self._trait_lock, self._deferred_echo("values" if defer_echo else None):
                    self.values = {**self.values, **commit}

        base: dict[str, Any] = {"op": op, "target": self.target_id, "changed": changed or {}}
        fallback = self._fallback
        if fallback is not None and not self.bridge.live_views() and not self._notebook_view_expected():
            fallback.start()  # a headless page, unless one is on its way; it calls expect_view
        turn = self._take_turn()
        try:
            if turn is not None:
                lost = fallback.lost if fallback is not None else lambda: False
                if not (yield from self._wait_turn(turn, deadline, lost, write_values)):
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
                with self._trait_lock:
                    write_values(defer_echo=True)
                    if pending.settled:  # e.g. the last view closed while this waited for its turn: kept
                        return
                    message = request(pending.id, op, payload)
                    if fallback is None or not fallback.send_request(message):  # one home per call
                        self.host.send_request(message)

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
                self._leave_turn(turn)  # in the pacer's FIFO now: the next call waiting for the view may go
                if ticket is not None:
                    yield _Wait(lambda: ticket.sent or pending.settled, deadline, key=pending.id)
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
                yield _Wait(lambda: pending.settled, deadline, key=pending.id)
                finished = True
            finally:
                if submitted and (ticket is None or not PACER.cancel(ticket)):
                    PACER.done(self.bridge)  # it went out: its place in the window is free again
                # Closed early (interrupt, task cancelled): settle as cancelled so no entry is left behind.
                cancelled = None if finished else ErrorInfo(code="cancelled", message=f"{op} was cancelled")
                self.bridge.close_request(pending, cancelled)
                if not self.bridge.pending:  # the last call of a burst updates the state; meanwhile it is throttled
                    self._update_state()
                    self._schedule_echo()
                if fallback is not None:
                    fallback.call_settled(pending.id)  # a notebook view took over: the page may close now
            refused = pending.reply is not None and pending.reply.error is not None
            if refused and commit and pending.reply.error.code == "target_error":  # type: ignore[union-attr]
                self._restore(commit, previous)
            return self._outcome(pending, base, waited=time.monotonic() - started, stuck=stuck)
        finally:
            self._leave_turn(turn)

    def _not_delivered(self, op: Op, needs_view: bool, base: dict[str, Any]) -> ToolResult:
        """No view to send to: a change is kept, not applied, and the code says why."""
        change = op != "state"
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
        if self._fallback is not None:
            why = self._fallback.not_delivered(change)
            if why is not None:
                code, message, hint = why
                return ToolResult.failure(code, message, hint=hint, applied=False, kept=change, **base)
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
        with self._trait_lock:
            current = dict(self.values)
            back = {path: previous[path] for path, v in refused.items() if current.get(path) == v and path in previous}
            if back:
                self.values = {**current, **back}

    def _outcome(self, pending: PendingRequest, base: dict[str, Any], *, waited: float, stuck: str) -> ToolResult:
        applied = len(pending.answered_by)
        reply, failure = pending.reply, pending.failure
        change = pending.op != "state"
        if reply is not None and reply.ok:
            message = "applied" if pending.op == "apply" else "done"
            return ToolResult(
                ok=True,
                state=reply.state,
                applied=True,
                views_applied=applied,
                message=message,
                answered_by=reply.view_id,
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
        if not self.bridge.ready_views():
            return ToolResult.failure(
                "not_ready",
                f"the target '{self.target_id}' did not signal ready within {waited:.3g} s.{kept_text}",
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

    def _done(self, result: ToolResult) -> ToolResult:
        return result.model_copy(update={"target": self.target_id})

    # -- call order while a view is on its way ------------------------------------------------

    def _take_turn(self) -> int | None:
        """A place in the line of calls waiting for a view, if this call must wait: no view yet but
        one on its way, or earlier calls still waiting (then this one goes after them)."""
        live = bool(self.bridge.live_views())  # read before the order lock: predicates take it under the bridge's
        expecting = self._attach_deadline() is not None
        me = threading.get_ident()
        with self._order_lock:
            if not self._waiting_for_view and (live or not expecting):
                return None
            if _BLOCKING_CALL.get() and any(self._turn_threads.get(t) == me for t in self._waiting_for_view):
                # A blocking call on the thread whose event loop runs async calls waiting in line: they
                # cannot move while it blocks, so it must not wait behind them (only, at most, for the view).
                return NO_LINE
            turn = next(self._arrivals)
            self._waiting_for_view.append(turn)
            self._turn_threads[turn] = me
            return turn

    def _first_in_line(self, turn: int) -> bool:
        with self._order_lock:
            return bool(self._waiting_for_view) and self._waiting_for_view[0] == turn

    def _leave_turn(self, turn: int | None) -> None:
        """Leave the line (idempotent) and wake the call that is first in it now."""
        if turn is None or turn == NO_LINE:
            return
        with self._order_lock:
            self._turn_threads.pop(turn, None)
            try:
                self._waiting_for_view.remove(turn)
            except ValueError:
                return
            head = self._waiting_for_view[0] if self._waiting_for_view else None
        if head is not None:
            self.bridge.wake(_turn_key(head))

    def _wait_turn(
        self, turn: int, deadline: float, lost: Callable[[], bool], write_values: Callable[..., None]
    ) -> Generator[_Wait, bool, bool]:
        """Wait to be first in line, then (as before) for the view, within the deadline. False: the
        deadline passed while earlier calls still waited (this one was not sent, nothing changed)."""
        while turn != NO_LINE and not self._first_in_line(turn):
            yield _Wait(lambda: self._first_in_line(turn), deadline, key=_turn_key(turn))
            if time.monotonic() >= deadline and not self._first_in_line(turn):
                return False
        attach_by = self._attach_deadline()
        if not self.bridge.live_views() and attach_by is not None and not lost():
            write_values()  # not the hot path: keep the value even if this wait is interrupted
            yield _Wait(
                lambda: bool(self.bridge.live_views()) or lost() or self._attach_deadline() is None,
                min(attach_by, deadline),
            )
        return True

    def _attach_deadline(self) -> float | None:
        """Until when a call that finds no view waits for one to attach; None: no view is worth waiting for.

        A view is on its way when :meth:`expect_view` said so, or when the widget was displayed
        moments ago and some widget frontend is connected."""
        if time.monotonic() < self._view_expected_until:
            return self._view_expected_until
        end = self._display_window()
        if end is not None and (self.bridge.ever_attached or self._notebook_view_expected()):
            return end
        return None

    def _notebook_view_expected(self) -> bool:
        """Displayed by a notebook frontend moments ago: its view is on its way (no headless page needed)."""
        return self._display_window() is not None and (self._displayed_by_frontend or _frontend_connected())

    def _display_window(self) -> float | None:
        """When the last display's wait for its view ends, while it has not ended."""
        if self._displayed_at is None or time.monotonic() > self._displayed_at + self.attach_timeout:
            return None
        return self._displayed_at + self.attach_timeout

    # -- drivers ---------------------------------------------------------------------------

    def _run_blocking(self, name: str, arguments: dict[str, Any], operation: Operation) -> ToolResult:
        started = time.monotonic()
        _kernel_tap.prepare_thread()
        blocking = _BLOCKING_CALL.set(True)
        try:
            step = next(operation)
            while True:
                if _kernel_tap.in_main_thread() and not _kernel_tap.installed():
                    operation.close()
                    raise RuntimeError(
                        "a blocking call cannot receive the browser's reply in this kernel (the shell-channel "
                        f"tap is unavailable); use the async API instead: `await sim.a{name}(...)`"
                    )
                step = operation.send(self.bridge.wait_until(step.done, step.deadline))
        except StopIteration as stop:
            result: ToolResult = stop.value
        except KeyboardInterrupt:
            operation.close()
            self._record(name, arguments, _cancelled(name), started)
            raise
        finally:
            operation.close()  # whatever ended the drive: the operation's own cleanup runs now
            _BLOCKING_CALL.reset(blocking)
        return self._record(name, arguments, result, started)

    async def _run_async(self, name: str, arguments: dict[str, Any], operation: Operation) -> ToolResult:
        import asyncio

        started = time.monotonic()
        _kernel_tap.prepare_thread()
        try:
            step = next(operation)
            while True:
                step = operation.send(await self.bridge.await_until(step.done, step.deadline, step.key))
        except StopIteration as stop:
            result: ToolResult = stop.value
        except asyncio.CancelledError:
            operation.close()
            self._record(name, arguments, _cancelled(name), started)
            raise
        finally:
            operation.close()  # whatever ended the drive: the operation's own cleanup runs now
        return self._record(name, arguments, result, started)

    def _record(self, name: str, arguments: dict[str, Any], result: ToolResult, started: float) -> ToolResult:
        result = self._done(result)
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
            )
        )
        return result

    # -- messages from views ----------------------------------------------------------------

    def _tap_message(self, content: dict[str, Any]) -> bool:
        """Shell-channel thread: take every message of ours (chat ones start worker threads), even mid-cell."""
        if content.get("kind") not in VIEW_MESSAGE_KINDS:
            return False
        self._receive(content)
        return True

    def _on_custom_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self._receive(content)
        self._sync_views()

    def receive_view_message(self, content: Any) -> None:
        """A message from a view (any thread): the comm's, a headless page's or a test's fake view."""
        self._receive(content)

    def _receive(self, content: Any) -> None:
        try:
            message = parse_view_message(content)
        except ProtocolError as exc:
            log.warning("dropped a message from a view: %s", exc)
            return
        if isinstance(message, ReplyMessage):
            self.bridge.handle_reply(message)
        elif isinstance(message, EventMessage):
            if message.type == "attached":
                self._check_protocol(message)
            self.bridge.handle_event(message)
            if self._fallback is not None:
                self._fallback.on_event(message)
        elif isinstance(message, ChatMessage):
            self._controller().on_chat(message.text)
        elif isinstance(message, CancelMessage):
            self._controller().on_cancel()
        elif isinstance(message, SkipWaitMessage):
            self._controller().on_skip_wait()
        elif isinstance(message, ApprovalMessage):
            self._controller().on_approval(message.id, message.approved)
        elif isinstance(message, SetMessage):
            self._controller().on_set(message.values)

    def _check_protocol(self, event: EventMessage) -> None:
        payload = event.payload if isinstance(event.payload, dict) else {}
        if payload.get("protocol") != PROTOCOL_VERSION:
            log.error(
                "view %s speaks protocol %r, the kernel speaks %d; reinstall splitbrain-widget and reload the page",
                event.view_id,
                payload.get("protocol"),
                PROTOCOL_VERSION,
            )

    # -- traits and lifecycle -----------------------------------------------------------------

    def send_state(self, key: Any = None) -> None:
        """ipywidgets' sync of traits to the views; the echo of a trait being deferred waits for :meth:`_sync_views`."""
        if isinstance(key, str) and key in self._deferring:
            self._echo_due.add(key)
            return
        super().send_state(key)

    @contextlib.contextmanager
    def _deferred_echo(self, name: str | None) -> Iterator[None]:
        """Assignments to trait ``name`` in this block reach the views with the next :meth:`_sync_views`."""
        if name is None:
            yield
            return
        self._deferring = self._deferring | {name}
        try:
            yield
        finally:
            self._deferring = self._deferring - {name}

    def _schedule_state_sync(self) -> None:
        """Bridge hook (any thread): bring the views up to date on the main loop."""
        if self._state_sync_pending or (self.bridge.state_version == self._synced_state_version and not self._echo_due):
            return
        self._state_sync_pending = True
        _kernel_tap.call_on_main(self._sync_views_throttled)

    def _sync_views_throttled(self) -> None:
        """While requests are pending (a burst) the views follow at most 10 times a second; the last
        call of the burst syncs them in any case."""
        self._state_sync_pending = False
        if self.bridge.pending and time.monotonic() - self._synced_at < SYNC_INTERVAL_S:
            return
        self._sync_views()

    def _sync_views(self) -> None:
        """Copy the latest state into the trait and send the views every deferred echo, in one message."""
        self._update_state()
        self._flush_echo()

    def _update_state(self) -> None:
        """The ``state`` trait takes the latest state the bridge holds; its echo is deferred."""
        with self._trait_lock:
            version, state = self.bridge.state_version, self.bridge.latest_state
            if version != self._synced_state_version and state is not None:
                self._synced_state_version = version
                with self._deferred_echo("state"):
                    self.state = state

    def _flush_echo(self) -> None:
        with self._trait_lock:  # snapshot and send in one step: see _deliver
            keys, self._echo_due = sorted(self._echo_due), set()
            self._synced_at = time.monotonic()
            if keys and self.comm is not None:
                super().send_state(keys)

    def _schedule_echo(self) -> None:
        """Send the deferred echoes soon, in a pause between calls: an echo sent while a request is
        on its way holds that request up (about 1 ms of a 3-4 ms round trip), so a run of calls
        gets its echoes at most every ``ECHO_MAX_DELAY_S``, not one per call."""
        with self._trait_lock:
            if not self._echo_due or self._echo_scheduled:
                return
            self._echo_since = time.monotonic()
            self._echo_scheduled = True
        LATER.call_at(time.monotonic() + ECHO_DELAY_S, self._echo_when_quiet)

    def _echo_when_quiet(self) -> None:
        with self._trait_lock:
            if self.bridge.pending and time.monotonic() - self._echo_since < ECHO_MAX_DELAY_S:
                # a call is on its way: wait for the pause after it
                LATER.call_at(time.monotonic() + ECHO_DELAY_S, self._echo_when_quiet)
                return
            self._echo_scheduled = False
        try:
            self._flush_echo()
        except Exception:  # the comm closed meanwhile
            log.debug("deferred echo not sent", exc_info=True)

    @staticmethod
    def _target_traits(target: Target) -> dict[str, Any]:
        manifest = target.manifest
        return {
            "target_id": target.id,
            "manifest": {
                "id": target.id,
                "title": target.title,
                "description": manifest.description or "",
                "parameters": {
                    path: p.model_dump(mode="json", exclude_none=True) for path, p in manifest.parameters.items()
                },
                "observables": {k: o.model_dump(exclude_none=True) for k, o in manifest.observables.items()},
            },
            "_html": target.html,
            "values": manifest.defaults(),
            "state": {},
        }

    @traitlets.validate("values")
    def _validate_values(self, proposal: Any) -> dict[str, Any]:
        try:
            return self.schema.coerce_many(proposal["value"], allow_readonly=True)
        except ParameterError as exc:
            raise traitlets.TraitError(str(exc)) from None

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self._displayed_at = time.monotonic()
        # Decided here, on the displaying cell's thread: a call from a worker thread (the agent's)
        # cannot see which cell, or which frontend, it came from.
        self._displayed_by_frontend = _frontend_connected()
        return super()._repr_mimebundle_(**kwargs)

    def _closed(self, change: Any) -> None:
        if change.get("new") is None:
            _kernel_tap.unregister(self._comm_id)
            self.bridge.fail_all("cancelled", "the widget was closed")
            if self._fallback is not None:
                self._fallback.close()

    def __repr__(self) -> str:
        return f"<TargetWidget {self.target_id!r}: {self.views} view(s), values={self.values}>"


def _changed(manifest: Manifest, path: str, value: Any) -> ChangedValue:
    unit = manifest.parameters[path].unit
    return {"value": value, "unit": unit} if unit else {"value": value}


def _kept(op: Op, code: str) -> bool:
    """Whether a change that was not applied stays in the kernel's values and reaches the page later:
    yes (a missing, stopped or slow page), unless the page refused it (``target_error``: the values
    it replaced came back) or the call was taken back (``cancelled``). A state request changes nothing."""
    return op != "state" and code not in NOT_KEPT


def _cancelled(name: str) -> ToolResult:
    return ToolResult.failure("cancelled", f"{name} was interrupted before the target answered")


def _frontend_connected() -> bool:
    """Whether a frontend that renders widgets is likely connected to this kernel.

    True when a widget manager opened ipywidgets' control comm, or when the running cell came from
    a notebook UI (JupyterLab and Notebook 7 put ``cellId`` in the execute request's metadata);
    False under nbval, papermill or a script, which render nothing, so no call waits for a view there.
    """
    import ipywidgets

    if ipywidgets.Widget._control_comm is not None:
        return True
    k = _kernel_tap.kernel()
    try:
        parent = k.get_parent() if k is not None else {}
    except Exception:
        return False
    return bool((parent or {}).get("metadata", {}).get("cellId"))


__all__ = ["NO_VIEW_MESSAGE", "ErrorCode", "TargetWidget"]

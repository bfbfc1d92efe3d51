"""TargetWidget: a target page in a sandboxed iframe, and the tool surface that steers it.

Every tool exists twice, blocking (``sim.set_parameter("speed", 12)``) and awaitable
(``await sim.aset_parameter("speed", 12)``); both run the same operation (``_operations.py``,
which also holds the two drivers). This module keeps the traits, the lifecycle, the message
dispatch and the public twins; the echo of traits to the views is ``_echo.py``'s, the order of
calls waiting for a view ``_call_line.py``'s.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import anywidget
import traitlets
from typing_extensions import Unpack

from .chat._controller import ChatController
from .core import _kernel_tap, _to_code
from .core._approval import POLICIES
from .core._audit import AuditEntry, AuditLog
from .core._bridge import Bridge
from .core._call_line import CallLine
from .core._echo import EchoThrottle
from .core._operations import NO_VIEW_MESSAGE, Operations
from .core._page_truth import REFUSED_KEY
from .core._picture import Picture, PictureError, SnapshotError, checked_picture, picture_from
from .core._platform import desktop_only
from .core._seam import Host, ViewHost, as_host
from .core._stream import Streamer, StreamStats
from .features import _describe, _export, _seek
from .features._pictures import SIMULATION_MIME, OutputPictures, runner_data, simulation_data, snapshots_default
from .features._seek import SeekOptions
from .hosts._comm import CommHost
from .manifest import Manifest, ParameterError
from .manifest.registry import Target, load_target
from .protocol import (
    PROTOCOL_VERSION,
    VIEW_MESSAGE_KINDS,
    ActMessage,
    ApprovalMessage,
    CancelMessage,
    ChatMessage,
    CopyCodeMessage,
    ErrorCode,
    EventMessage,
    PictureMessage,
    ProtocolError,
    ReplyMessage,
    SetMessage,
    SkipWaitMessage,
    ToolResult,
    parse_view_message,
)

if TYPE_CHECKING:
    import pandas

    from .hosts._headless import HeadlessFallback
    from .hosts._headless_page import HeadlessPage, Keep

log = logging.getLogger("splitbrain_widget")

_STATIC = Path(__file__).parent / "static"
# Every widget of this process until it is closed, and who wants to hear when that set changes (the
# MCP server: its tool list follows the widgets that live).
_LIVE: weakref.WeakSet[TargetWidget] = weakref.WeakSet()
_LIVE_LISTENERS: list[Callable[[], None]] = []


def live_widgets() -> list[TargetWidget]:
    """The widgets of this process that are not closed, oldest first."""
    return sorted(_LIVE, key=lambda widget: widget._born)


def on_live_change(listener: Callable[[], None]) -> Callable[[], None]:
    """Call ``listener()`` (on whichever thread made or closed the widget) when a widget is made or
    closed, or switches target; returns the function that stops it."""
    _LIVE_LISTENERS.append(listener)
    return lambda: _LIVE_LISTENERS.remove(listener) if listener in _LIVE_LISTENERS else None


def _live_changed() -> None:
    for listener in list(_LIVE_LISTENERS):
        try:
            listener()
        except Exception:  # a listener's bug must not break the widget
            log.exception("a live-widget listener failed")


T = TypeVar("T")
ENV_HEADLESS = "SPLITBRAIN_HEADLESS"  # "1": every widget without a view runs its calls on a headless page


class _Kept(Generic[T]):
    """A widget attribute that one of its parts keeps: ``sim.timeout`` is ``sim._ops.timeout``."""

    def __init__(self, part: str, doc: str) -> None:
        self._part = part
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, widget: None, owner: type) -> _Kept[T]: ...
    @overload
    def __get__(self, widget: object, owner: type) -> T: ...
    def __get__(self, widget: object | None, owner: type) -> T | _Kept[T]:
        if widget is None:
            return self
        value: T = getattr(getattr(widget, self._part), self._name)
        return value

    def __set__(self, widget: object, value: T) -> None:
        setattr(getattr(widget, self._part), self._name, value)


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
        snapshots: give the widget's outputs a picture of the page beside the live view, for readers of
            a saved or exported notebook (``features/_pictures.py``); None (the default) follows
            ``SPLITBRAIN_SNAPSHOTS`` (on unless ``0``).

    Raises:
        HeadlessUnavailable: ``headless=True`` where Chromium or playwright is missing (with
            ``SPLITBRAIN_HEADLESS=1`` the widget works with views, and a call without one answers
            ``no_view`` with the install hint instead).
    """

    _esm = _STATIC / "widget.js"

    target_id = traitlets.Unicode("").tag(sync=True)
    manifest = traitlets.Dict().tag(sync=True)
    _html = traitlets.Unicode("").tag(sync=True)
    # The view's sandbox frame (js/host/sandbox.js under the target's policy): it holds the target's iframe.
    _sandbox = traitlets.Unicode("").tag(sync=True)
    values = traitlets.Dict().tag(sync=True)
    state = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    protocol_version = traitlets.Int(PROTOCOL_VERSION).tag(sync=True)
    chat_enabled = traitlets.Bool(False).tag(sync=True)
    _snapshots = traitlets.Bool(True).tag(sync=True)  # the view takes pictures for the saved outputs (1.8)
    chat_busy = traitlets.Bool(False).tag(sync=True)
    chat_model = traitlets.Unicode("").tag(sync=True)
    chat_lesson = traitlets.Unicode("").tag(sync=True)  # the lesson policy in force, in one line ("": none)
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
        snapshots: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(targets_dir, str | Path):
            self._targets_dirs: tuple[str | Path, ...] = (targets_dir,)
        else:
            self._targets_dirs = tuple(targets_dir or ())
        loaded = load_target(target, *self._targets_dirs)
        self._target = loaded
        self._trait_lock = threading.RLock()
        self.bridge = Bridge()
        self._echo = EchoThrottle(
            self.bridge,
            self._trait_lock,
            assign_state=self._assign_state,
            send_keys=super().send_state,
            connected=lambda: self.comm is not None,
        )
        self.bridge.on_change = self._echo.on_bridge_change
        self._line = CallLine(self.bridge, attach_timeout)
        self._fallback: HeadlessFallback | None = None
        if headless or (headless is None and os.environ.get(ENV_HEADLESS, "").strip() == "1"):
            from .hosts._headless import HeadlessFallback

            self._fallback = HeadlessFallback(self, required=bool(headless))
        self._views: ViewHost | Host = CommHost(self)
        self._ops = Operations(_WidgetSession(self), self.bridge, self._line, self._seam(), timeout=timeout)
        self._ops.on_page_kept = lambda text: self._controller().notice(text)
        self._pictures = OutputPictures(self, snapshots_default() if snapshots is None else snapshots)
        kwargs.setdefault("_snapshots", self._pictures.enabled)
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
        self._born = time.monotonic_ns()
        _LIVE.add(self)
        self.observe(lambda _change: _live_changed(), names="target_id")
        _live_changed()

    # -- call settings and what the calls go through ------------------------------------------

    timeout = _Kept[float]("_ops", "The default deadline of one call, in seconds.")
    attach_timeout = _Kept[float](
        "_line", "How long a call waits for a view to appear right after the widget was displayed."
    )

    @property
    def host(self) -> ViewHost | Host:
        """Where requests go: the comm's views, or a headless page or test's fake view in their place
        (with ``headless=True``, the widget's headless page stands beside them while no view is shown)."""
        return self._views

    @host.setter
    def host(self, host: ViewHost | Host) -> None:
        self._views = host
        self._ops.host = self._seam()

    def _seam(self) -> ViewHost | Host:
        if self._fallback is None:
            return self._views
        from .hosts._headless import FallbackHost

        return FallbackHost(as_host(self._views), self._fallback)  # the page while no notebook view is displayed

    @property
    def audit(self) -> AuditLog:
        """Every call made through the tool surface, newest last."""
        return self._ops.audit

    # -- the tool surface: blocking ------------------------------------------------------------

    def get_parameters(self) -> ToolResult:
        """The current value of every parameter, with its schema (type, unit, range, description)."""
        return self._ops.run_blocking("get_parameters", {}, self._ops.get_parameters())

    def set_parameter(self, name: str, value: Any, *, timeout: float | None = None) -> ToolResult:
        """Set one parameter (by dotted path or unique leaf name) and return what the target reports."""
        return self.set_parameters({name: value}, timeout=timeout)

    def set_parameters(self, values: Mapping[str, Any], *, timeout: float | None = None) -> ToolResult:
        """Set several parameters at once; nothing is changed if any value is refused."""
        return self._ops.run_blocking("set_parameters", dict(values), self._ops.set(values, timeout))

    def reset(self, *, timeout: float | None = None) -> ToolResult:
        """Restore every parameter to the manifest's default and reset the target."""
        return self._ops.run_blocking("reset", {}, self._ops.reset(timeout))

    def fetch_state(self, *, timeout: float | None = None) -> ToolResult:
        """Ask the target for a fresh state (its observables)."""
        return self._ops.run_blocking("fetch_state", {}, self._ops.fetch_state(timeout))

    def snapshot(self, *, timeout: float | None = None) -> Picture:
        """A picture of the page as it is now: a PNG the page takes of itself inside its sandbox (its
        largest canvas, or what its ``SplitBrain.onSnapshot`` handler gives), at most 1024 pixels a side
        and 512 KiB. It is ``bytes`` (``.save(path)``, ``.width``, ``.height``, ``.alt``: the page in
        words) and shows as an image as a cell's result. Raises :class:`SnapshotError` saying why when
        none could be taken (no view, no canvas on the page, a picture that is no PNG)."""
        return self._kept(self._picture(self._ops.run_blocking("snapshot", {}, self._ops.snapshot(timeout))))

    def _kept(self, picture: Picture) -> Picture:
        """``sim.snapshot()``'s picture is also its outputs' picture from now on (a notebook saved
        after it shows the page as the snapshot saw it)."""
        self._pictures.keep(picture)
        return picture

    def _picture(self, result: ToolResult) -> Picture:
        if not result.ok and self._draws_no_canvas(result) and self.can_advance:
            return self._screenshot(result)  # a page drawn in HTML, on a headless page: Chromium's picture
        if not result.ok or result.picture is None:
            raise SnapshotError(f"no picture of {self.target.id!r}: {result}", result)
        try:
            return picture_from(result.picture, alt=self.describe())
        except PictureError as exc:
            raise SnapshotError(f"no picture of {self.target.id!r}: the page's {exc}") from None

    @staticmethod
    def _draws_no_canvas(result: ToolResult) -> bool:
        return (
            result.error is not None
            and result.error.code == "target_error"
            and "draws no canvas" in result.error.message
        )

    def _screenshot(self, result: ToolResult) -> Picture:
        """Chromium's picture of the headless page's frame, checked as a page's picture is."""
        from .hosts._headless_engine import HeadlessError

        try:
            return checked_picture(self._headless_page().screenshot(), alt=self.describe())
        except (HeadlessError, PictureError) as exc:
            raise SnapshotError(f"no picture of {self.target.id!r}: {result}; Chromium's: {exc}", result) from None

    def describe(self) -> str:
        """The simulation in words: the target's title, every parameter's value and each observable the
        page last reported, with units ("Pendulum. Set: length 1 m, ... The page measures: period 2.006 s,
        ..."). Reads what the kernel holds (``values``, ``state``); ``fetch_state()`` first for a fresh one.
        """
        return _describe.describe(self.schema, self.target.title, self.values, self.state or {})

    def to_html(self, path: str | Path, *, controls: bool = True, replay: bool = True) -> _export.ExportedPage:
        """Write the simulation as one self-contained HTML file that runs in any browser with no kernel
        and no network: the target's page at the widget's current values, in the same sandbox as here,
        with the inspector's controls (``controls=False``: the page alone) and its observables; with
        ``replay`` the session's changes as steps a reader steps through, each headed by what caused it
        ("chat: make it red → color = 'red'"). Returns where it went and its size in bytes."""
        return _export.write(self, path, controls=controls, replay=replay)

    def act(self, name: str, *, timeout: float | None = None) -> ToolResult:
        """Run the manifest's action ``name`` on the page (press its Run button, say) and return the
        state it reports after. A name the manifest's ``actions`` lack is refused (``invalid_value``,
        listing them) and nothing is sent; a page without an ``onAction`` handler answers
        ``target_error``. An action is never kept for a page to come: without a view it answers
        ``no_view``. One sent to a view whose page is still loading waits there for it, so if the
        call times out first (``timeout``, saying so) the page may still run it when it is ready."""
        return self._ops.run_blocking("action", {"name": name}, self._ops.act(name, timeout))

    def select_target(self, target: str | Path, *, timeout: float | None = None) -> ToolResult:
        """Switch to another target; its parameters start at their defaults."""
        return self._ops.run_blocking("select_target", {"target": str(target)}, self._ops.select(target, timeout))

    def list_targets(self) -> ToolResult:
        """The targets this widget can switch to."""
        return self._ops.run_blocking("list_targets", {}, self._ops.list_targets())

    def seek(self, observable: str, goal: float | str, **options: Unpack[SeekOptions]) -> ToolResult:
        """Change a parameter until the page's ``observable`` reaches ``goal``, trying values on the page.

        ``goal`` is a number in the observable's manifest unit, a string with a unit (``"50 m"``) or
        ``"max"`` / ``"min"``. Options (:class:`~splitbrain_widget._seek.SeekOptions`): ``vary`` (default:
        the observable's first ``depends_on`` parameter), ``within`` (default: its manifest range),
        ``tol`` (default 1% of the goal), ``max_evals`` (30), ``keep_closest``, ``timeout``, ``on_try``.
        The result's ``state`` is the page's at the answer, ``changed`` the value that reached it,
        ``evaluations`` every try. A goal out of reach fails (``goal_unreachable``) saying the closest
        value reached and where, with the parameter back where it was unless ``keep_closest``. In a
        cell that cannot hear the page while it blocks (ipykernel < 7, marimo) it raises RuntimeError
        at once, naming ``await sim.aseek(...)``.
        """
        arguments = _seek_arguments(observable, goal, options)
        return self._ops.audited("seek", arguments, lambda: _seek.seek(self, observable, goal, **options), _itself)

    def stream(self, values: Mapping[str, Any]) -> None:
        """Send values without waiting, for slider-like streams (opt-in coalescing).

        At most one apply is in flight; values given meanwhile are merged, the latest per parameter
        winning, and sent as one apply when it returns. Bad values raise :class:`ParameterError`
        at once; ``sim.values`` changes immediately. See :attr:`stream_stats` and :meth:`flush_stream`.
        """
        desktop_only("stream()", "await sim.aset_parameters(...) for each value")
        coerced = self.schema.coerce_many(values)
        with self._trait_lock, self._echo.deferred("values"):  # one echo per pause, not one per value
            self.values = {**self.values, **coerced}
        self._echo.schedule()
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
        return await self._ops.run_async("get_parameters", {}, self._ops.get_parameters())

    async def aset_parameter(self, name: str, value: Any, *, timeout: float | None = None) -> ToolResult:
        return await self.aset_parameters({name: value}, timeout=timeout)

    async def aset_parameters(self, values: Mapping[str, Any], *, timeout: float | None = None) -> ToolResult:
        return await self._ops.run_async("set_parameters", dict(values), self._ops.set(values, timeout))

    async def areset(self, *, timeout: float | None = None) -> ToolResult:
        return await self._ops.run_async("reset", {}, self._ops.reset(timeout))

    async def afetch_state(self, *, timeout: float | None = None) -> ToolResult:
        return await self._ops.run_async("fetch_state", {}, self._ops.fetch_state(timeout))

    async def asnapshot(self, *, timeout: float | None = None) -> Picture:
        return self._kept(self._picture(await self._ops.run_async("snapshot", {}, self._ops.snapshot(timeout))))

    async def aact(self, name: str, *, timeout: float | None = None) -> ToolResult:
        return await self._ops.run_async("action", {"name": name}, self._ops.act(name, timeout))

    async def aselect_target(self, target: str | Path, *, timeout: float | None = None) -> ToolResult:
        return await self._ops.run_async("select_target", {"target": str(target)}, self._ops.select(target, timeout))

    async def alist_targets(self) -> ToolResult:
        return await self._ops.run_async("list_targets", {}, self._ops.list_targets())

    async def aseek(self, observable: str, goal: float | str, **options: Unpack[SeekOptions]) -> ToolResult:
        arguments = _seek_arguments(observable, goal, options)
        return await self._ops.aaudited(
            "seek", arguments, lambda: _seek.aseek(self, observable, goal, **options), _itself
        )

    # The names of 0.1, kept as aliases: each tool now has one name, its method's (see CHANGELOG.md).
    available_targets = list_targets
    aavailable_targets = alist_targets

    def to_cell(self, var: str = "sim") -> None:
        """Put ``sim.audit.to_code(var)`` in a new cell below the running one (JupyterLab, Notebook 7);
        outside IPython a RuntimeError says to ``print(sim.audit.to_code())`` instead."""
        _to_code.to_cell(self.audit, var)

    # -- observables as data ------------------------------------------------------------------------

    def record(
        self, seconds: float, *, every: float = 0.1, observables: str | Iterable[str] | None = None
    ) -> pandas.DataFrame:
        """The page's observables over ``seconds``, one row every ``every`` seconds, as a pandas table
        (columns named with their units, ``attrs["units"]``). On a headless page the clock runs
        forward (no waiting); on a live page the page's own reports are sampled in real time."""
        from .features._record import record

        run = lambda: record(self, seconds, every=every, observables=observables)  # noqa: E731
        return self._ops.audited("record", _record_arguments(seconds, every, observables), run, _recorded)

    async def arecord(
        self, seconds: float, *, every: float = 0.1, observables: str | Iterable[str] | None = None
    ) -> pandas.DataFrame:
        from .features._record import arecord

        run = lambda: arecord(self, seconds, every=every, observables=observables)  # noqa: E731
        return await self._ops.aaudited("record", _record_arguments(seconds, every, observables), run, _recorded)

    def sweep(
        self, grid: Mapping[str, Any], *, measure: str | Iterable[str] | None = None, advance: float | None = None
    ) -> pandas.DataFrame:
        """:func:`splitbrain_widget.sweep` of this widget's target from its current values (headless
        pages of its own, this widget's page untouched), audited as this widget's call."""
        from .sweep import sweep  # a handoff to the sweep's face, made when the call is (tests/test_layers.py)

        run = lambda: sweep(self, grid, measure=measure, advance=advance, progress=False)  # noqa: E731
        arguments = {"grid": {k: list(v) if isinstance(v, Iterable) else v for k, v in grid.items()}}
        return self._ops.audited("sweep", arguments, run, _swept)

    # -- simulated time (while the calls run on a headless page) -----------------------------------

    @property
    def can_advance(self) -> bool:
        """Whether :meth:`advance` can run this widget's page clock: its calls go to a headless page now
        (``headless=True`` or ``SPLITBRAIN_HEADLESS=1`` with no notebook view displayed)."""
        fallback = self._fallback
        return fallback is not None and fallback.runs_calls()

    @overload
    def advance(self, seconds: float, *, timeout: float | None = None, every: None = None) -> dict[str, Any]: ...
    @overload
    def advance(
        self, seconds: float, *, timeout: float | None = None, every: float, keep: Keep | None = None
    ) -> list[dict[str, Any]]: ...
    def advance(
        self, seconds: float, *, timeout: float | None = None, every: float | None = None, keep: Keep | None = None
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """Run the headless page's clock ``seconds`` of simulated time forward; return the state it
        reports then (with ``every``: in steps of ``every`` simulated seconds, the list of the states
        after each step, from one call; ``keep`` cuts each state down as it arrives, so that only what
        it returns is held). ``timeout`` defaults to the widget's ``timeout`` plus
        ``ADVANCE_BUDGET_S`` (60 s) of wall time for the simulation. Raises
        :class:`~splitbrain_widget.headless.HeadlessError` where the calls do not run on a headless
        page (a notebook view runs its page in real time), and ``timeout`` when the page did not get
        there in time (it stops where it was)."""

        def run() -> dict[str, Any] | list[dict[str, Any]]:
            page, wait = self._headless_page(), self._advance_timeout(timeout)
            return page.advance(seconds, wait) if every is None else page.advance(seconds, wait, every=every, keep=keep)

        return self._ops.audited("advance", _advance_arguments(seconds, every), run, _advanced)

    @overload
    async def aadvance(self, seconds: float, *, timeout: float | None = None, every: None = None) -> dict[str, Any]: ...
    @overload
    async def aadvance(
        self, seconds: float, *, timeout: float | None = None, every: float, keep: Keep | None = None
    ) -> list[dict[str, Any]]: ...
    async def aadvance(
        self, seconds: float, *, timeout: float | None = None, every: float | None = None, keep: Keep | None = None
    ) -> dict[str, Any] | list[dict[str, Any]]:
        async def run() -> dict[str, Any] | list[dict[str, Any]]:
            page, wait = self._headless_page(), self._advance_timeout(timeout)
            if every is None:
                return await page.aadvance(seconds, wait)
            return await page.aadvance(seconds, wait, every=every, keep=keep)

        return await self._ops.aaudited("advance", _advance_arguments(seconds, every), run, _advanced)

    def _advance_timeout(self, timeout: float | None) -> float:
        from .hosts._headless_page import ADVANCE_BUDGET_S

        return timeout if timeout is not None else self.timeout + ADVANCE_BUDGET_S

    def _headless_page(self) -> HeadlessPage:
        from .hosts._headless_engine import HeadlessError

        if self._fallback is None:
            raise HeadlessError(
                "no_view",
                "advance() runs a headless page's clock: create the widget with headless=True, or use HeadlessTarget",
            )
        return self._fallback.page()

    def serve_mcp(self, *, port: int = 0, token: str | None = None) -> Any:
        """Serve this widget's tools over MCP: :func:`splitbrain_widget.serve_mcp` for this widget
        (the kernel's one server, serving it too when it runs already)."""
        from .mcp import serve_mcp

        return serve_mcp(self, port=port, token=token)

    # -- chat -------------------------------------------------------------------------------------

    def chat(self, agent: Any = None) -> TargetWidget:
        """Show the chat panel, answered by ``agent`` (default: ``Agent(self)``, created on first use)."""
        controller = self._controller()
        if agent is not None:
            controller.agent = agent
        if agent is not None:
            self.chat_model = agent.model
        controller.show_lesson()
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
        self._line.expect_view(timeout)

    # -- messages from views ----------------------------------------------------------------

    def _tap_message(self, content: dict[str, Any]) -> bool:
        """Shell-channel thread: take every message of ours (chat ones start worker threads), even mid-cell."""
        if content.get("kind") not in VIEW_MESSAGE_KINDS:
            return False
        self._receive(content)
        return True

    def _on_custom_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self._receive(content)
        self._echo.sync()

    def values_echo_waits(self) -> bool:
        """Whether ``values`` is being assigned by a call's commit (its echo waits; its request carries them)."""
        return self._echo.deferring("values")

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
            was_visible, visible = self.bridge.handle_event(message)
            if message.type == "state" and isinstance(message.payload, dict) and REFUSED_KEY in message.payload:
                self._ops.page_refused(message.payload)  # values the page got outside a call, not all taken
            if visible != was_visible and visible is not None and was_visible is not None:
                self._visibility_changed(visible, message)
            if self._fallback is not None:
                self._fallback.on_event(message)
            if message.type in ("attached", "detached"):
                _live_changed()  # a widget shown or hidden: what can answer changed (the MCP server's list)
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
        elif isinstance(message, CopyCodeMessage):
            self._controller().on_copy_code()
        elif isinstance(message, ActMessage):
            self._controller().on_act(message.name)
        elif isinstance(message, PictureMessage):
            self._pictures.from_view(message.picture)

    def _visibility_changed(self, visible: bool, event: EventMessage) -> None:
        """Audit the page going to the background or coming back; when it comes back, send the
        ``values`` trait again (in the echo's next pause, under the trait lock): a view that missed an
        update while its page slept gets it, and checks its target against it (protocol 1.6)."""
        payload = event.payload if isinstance(event.payload, dict) else {}
        cause = payload.get("cause") if event.type == "visibility" else event.type
        self._ops.audit.record(
            AuditEntry(
                time=time.time(),
                op="page_visible" if visible else "page_hidden",
                arguments={"cause": cause} if cause else {},
                ok=True,
                code=None,
                message="the notebook's page came back" if visible else "the notebook's page went to the background",
                duration_ms=0.0,
                view_id=event.view_id,
                views_applied=0,
                target=self.target.id,
                source="view",
            )
        )
        if visible:
            self._echo.resend("values")

    @property
    def page_visible(self) -> bool | None:
        """Whether the notebook's page showing this widget can be seen: False while every view's page
        is in the background (another tab in front, the window minimised), None with no view; a
        headless page is always seen. A view scrolled out of sight counts as visible.
        While it is False, calls that need the page's own clock (a live ``seek`` waiting for the
        next report, a live ``record``) answer ``page_hidden`` at once instead of waiting."""
        return self.bridge.page_visible()

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
        """ipywidgets' sync of traits to the views; a deferred trait's echo waits (see ``_echo.py``)."""
        if self._echo.holds(key):
            return
        super().send_state(key)

    def _assign_state(self, state: dict[str, Any]) -> None:
        self.state = state

    @staticmethod
    def _target_traits(target: Target) -> dict[str, Any]:
        return {
            "target_id": target.id,
            "manifest": target.view_manifest(),
            "_html": target.html,
            "_sandbox": target.sandbox_html,
            "values": target.manifest.defaults(),
            "state": {},
        }

    @traitlets.validate("values")
    def _validate_values(self, proposal: Any) -> dict[str, Any]:
        try:
            return self.schema.coerce_many(proposal["value"], allow_readonly=True)
        except ParameterError as exc:
            raise traitlets.TraitError(str(exc)) from None

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # Told here, on the displaying cell's thread: a call from a worker thread (the agent's)
        # cannot see which cell, or which frontend, it came from.
        self._line.displayed()
        return self._output_bundle(**kwargs)

    def _output_bundle(self, **kwargs: Any) -> Any:
        """The widget view and its line of text, and the last picture where there is one
        (``features/_pictures.py``)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})  # anywidget: (data, metadata)
        return {**data, SIMULATION_MIME: simulation_data(self), **self._pictures.bundle()}, metadata

    @property
    def _ipython_display_(self) -> Callable[..., None] | None:
        # IPython displays through this method where it is callable, else through _repr_mimebundle_:
        # only a runner's display of a widget whose calls run on its headless page with no notebook
        # view is its picture with a display id (updated after each cell); a person's notebook gets
        # the widget view as it always did.
        if self._pictures.for_a_runner():
            return self._display_with_picture
        return None

    def _display_with_picture(self, **kwargs: Any) -> None:
        from IPython.display import display

        self._pictures.take()  # before the display, so the call goes to the headless page at once
        bundle = self._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data, metadata = bundle
            display_id = self._pictures.new_display(str(data.get("text/plain", "")))
            display(runner_data(data), metadata=metadata, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]

    def _closed(self, change: Any) -> None:
        if change.get("new") is None:
            _LIVE.discard(self)
            _live_changed()
            _kernel_tap.unregister(self._comm_id)
            self.bridge.fail_all("cancelled", "the widget was closed")
            self._pictures.forget()
            if self._fallback is not None:
                self._fallback.close()

    def __repr__(self) -> str:
        return f"<TargetWidget {self.target_id!r}: {self.views} view(s), values={self.values}>"


def _itself(result: ToolResult) -> ToolResult:
    return result


def _advance_arguments(seconds: float, every: float | None) -> dict[str, Any]:
    return {"seconds": seconds} if every is None else {"seconds": seconds, "every": every}


def _advanced(states: dict[str, Any] | list[dict[str, Any]]) -> ToolResult:
    count = len(states) if isinstance(states, list) else 1
    return ToolResult(ok=True, op="advance", message=f"advanced the page's clock ({count} state{'s' * (count != 1)})")


def _record_arguments(seconds: float, every: float, observables: str | Iterable[str] | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"seconds": seconds, "every": every}
    if observables is not None:
        arguments["observables"] = [observables] if isinstance(observables, str) else list(observables)
    return arguments


def _recorded(table: pandas.DataFrame) -> ToolResult:
    return ToolResult(ok=True, op="record", message=f"recorded {len(table)} rows")


def _swept(table: pandas.DataFrame) -> ToolResult:
    return ToolResult(ok=True, op="sweep", message=f"measured {len(table)} points")


def _seek_arguments(observable: str, goal: float | str, options: SeekOptions) -> dict[str, Any]:
    """A seek as the audit records it: the goal and the options given (not the callback)."""
    given = {k: v for k, v in options.items() if k != "on_try" and v is not None}
    return {"observable": observable, "goal": goal, **given}


class _WidgetSession:
    """The widget's traits as the operations see them (:class:`~splitbrain_widget._operations.Session`)."""

    def __init__(self, widget: TargetWidget) -> None:
        self._widget = widget
        self.lock = widget._trait_lock

    @property
    def target(self) -> Target:
        return self._widget._target

    @property
    def values(self) -> dict[str, Any]:
        return self._widget.values

    @property
    def targets_dirs(self) -> tuple[str | Path, ...]:
        return self._widget._targets_dirs

    def commit(self, values: Mapping[str, Any], *, defer_echo: bool) -> None:
        widget = self._widget
        with self.lock, widget._echo.deferred("values" if defer_echo else None):
            widget.values = {**widget.values, **values}

    def show_target(self, loaded: Target) -> None:
        widget = self._widget
        with self.lock, widget.hold_sync():
            widget._target = loaded
            for name, value in widget._target_traits(loaded).items():
                setattr(widget, name, value)

    def after_calls(self) -> None:
        self._widget._echo.after_calls()


__all__ = ["NO_VIEW_MESSAGE", "ErrorCode", "TargetWidget"]

"""The headless homes of a widget's calls: a page in headless Chromium behind the seam.

:class:`HeadlessHost` is the seam's headless implementation (requests go to a
:class:`~splitbrain_widget.hosts._headless_engine.HeadlessPage`); :class:`HeadlessFallback` is the
page a :class:`~splitbrain_widget.TargetWidget` falls back on while no notebook view is displayed,
and :class:`FallbackHost` puts it behind the seam beside the comm's views, so that the drivers know
no more of it than of any host.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ..core._later import LATER
from ..core._seam import Host, Hosted
from ..manifest import registry
from ..protocol import ErrorCode, RequestMessage

if TYPE_CHECKING:
    from ._headless_page import HeadlessPage

log = logging.getLogger("splitbrain_widget.headless")

START_WAIT_S = 60.0  # a call waits this long (within its own deadline) for a starting page to attach


def require_headless() -> None:
    """Raise :class:`HeadlessUnavailable` at once, saying how to install it, when Chromium or playwright is missing."""
    from ._headless_engine import _require_playwright, chromium_executable

    chromium_executable()
    _require_playwright()


class HeadlessHost:
    """The host seam's headless implementation: requests go to a :class:`HeadlessPage`."""

    def __init__(self, widget: Hosted, *, seed: int = 0, fps: float | None = None) -> None:
        from ._headless_page import HeadlessPage

        self._widget = widget
        self._seed = seed
        self._fps = fps
        self.page = HeadlessPage(
            widget.target.headless_html(seed, fps),
            on_message=widget.receive_view_message,
            values=dict(widget.values),
            seed=seed,
            fps=fps,
            network=registry.network_sources(widget.target.manifest.csp),
        )
        # The page's relay reads the kernel's values as a view reads the synced trait.
        self._held_values: dict[str, Any] | None = None  # a call's values, until its request went out
        widget.observe(self._values_changed, names="values")
        widget.observe(self._page_changed, names="_html")

    def send_request(self, message: RequestMessage) -> None:
        self.page.send(dict(message))
        held, self._held_values = self._held_values, None
        if held is not None:  # behind the request that carries them: the relay finds nothing new in them
            self._push_values(held)

    def _values_changed(self, change: dict[str, Any]) -> None:
        if self._widget.values_echo_waits():
            # A call's commit: its request, sent next under the same lock, carries these values. Sent
            # before it they would reach the page twice, first without an id (js/host/relay.js), as a
            # notebook view never gets them: its echo waits for a pause between calls.
            self._held_values = dict(change["new"])
            return
        self._push_values(dict(change["new"]))

    def _push_values(self, values: dict[str, Any]) -> None:
        from ._headless_engine import HeadlessError

        with contextlib.suppress(HeadlessError):  # closing on another thread: it needs no values any more
            self.page.set_values(values)

    def _page_changed(self, _change: dict[str, Any]) -> None:  # select_target: the new page replaces the old
        self.page.set_values(dict(self._widget.values))
        self.page.network = registry.network_sources(self._widget.target.manifest.csp)
        self.page.reload(self._widget.target.headless_html(self._seed, self._fps))

    def close(self) -> None:
        if self.page.closed:
            return
        self._widget.unobserve(self._values_changed, names="values")
        self._widget.unobserve(self._page_changed, names="_html")
        self.page.close()


class HeadlessFallback:
    """A widget's headless page, for while no notebook view is displayed.

    The widget has one with ``headless=True`` or ``SPLITBRAIN_HEADLESS=1``. The first call that finds
    no view, and none on its way, starts a page (a :class:`HeadlessHost`: virtual clock, seed 0,
    the kernel's values); calls go to it while no notebook view is attached. A notebook view that
    attaches takes over at once: later calls go to it, and it catches up with the kernel's values
    as every fresh view does. The page is closed as soon as the calls already sent to it are
    answered (an idle page would mirror every value and hold a browser page for nothing); if the
    view goes away, the next call starts a fresh page from the kernel's values. Each call goes to
    exactly one home, and every value lives in the kernel's ``values``, so none is lost in between.

    Where no page can start (Chromium or playwright missing, or its launch failed), a call without
    a view answers at once with a ``no_view`` or ``not_ready`` result that says why and how to
    install Chromium; a change is kept, as without the fallback.
    """

    def __init__(self, widget: Hosted, *, required: bool) -> None:
        if required:
            require_headless()  # headless=True: no browser is a clear error now, never a hang later
        self._widget = widget
        self._lock = threading.Lock()
        self.host: HeadlessHost | None = None
        self._sent: set[str] = set()  # requests sent to the page, kept until they are answered
        self._page_error = ""
        self._lost: str | None = None  # why the last page went away on its own (a crash, a failed launch)
        self._unavailable: str | None = None  # why no page could start
        self._closed = False

    @property
    def view_id(self) -> str | None:
        """The page's view id, while there is a page."""
        host = self.host
        return host.page.view_id if host is not None else None

    def lost(self) -> bool:
        """The last page went away on its own before it was closed (read by waits: no lock)."""
        return self._lost is not None

    def start(self) -> None:
        """Start a page unless one is open or starting; the widget's next calls wait for it to attach."""
        from ._headless_engine import HeadlessUnavailable

        with self._lock:
            if self._closed or self.host is not None:
                return
            try:
                self.host = HeadlessHost(self._widget)
            except HeadlessUnavailable as exc:
                if self._unavailable is None:
                    log.warning("a widget without a view found no headless page to run its calls on: %s", exc)
                self._unavailable = str(exc)
                return
            self._unavailable = self._lost = None
            self._page_error = ""
            self._sent = set()
            # A view is on its way before the lock is let go: a call that comes meanwhile waits for it.
            self._widget.expect_view(START_WAIT_S)

    def send_request(self, message: RequestMessage) -> bool:
        """Send ``message`` to the page if the page is the home now (no notebook view attached); False if not."""
        with self._lock:
            host = self.host
            if host is None or self._notebook_views(host):
                return False
            self._sent.add(message["id"])
            host.send_request(message)
            return True

    def call_settled(self, request_id: str | None = None) -> None:
        """A call ended (``request_id``, answered or given up) or a view attached: once a notebook view
        is there and nothing sent to the page is pending, close the page (on the deferred-call thread:
        closing waits for the browser)."""
        if self.host is None:  # the usual case, on the hot path: no lock
            return
        with self._lock:
            if request_id is not None:
                self._sent.discard(request_id)  # answered: it needs no keeping (else it grew for good)
            host = self.host
            if host is None or not self._notebook_views(host):
                return
            self._sent = self._widget.bridge.still_pending(self._sent)
            if self._sent:
                return
            self.host = None
            self._widget.bridge.drop_view(host.page.view_id)  # one home: the notebook view's alone, at once
        log.info("a notebook view took over from headless page %s; closing it", host.page.view_id)
        LATER.call_at(time.monotonic(), host.close)

    def on_event(self, event: Any) -> None:
        """Every view event, after the bridge saw it: a notebook view attached, or the page went away."""
        host = self.host
        if event.type == "attached":
            self.call_settled()
        elif host is None or event.view_id != host.page.view_id:
            return
        elif event.type == "error":
            payload = event.payload if isinstance(event.payload, dict) else {}
            self._page_error = str(payload.get("message", event.payload))[:300]
        elif event.type == "detached":  # not closed by us (that forgets the host first): lost
            with self._lock:
                if self.host is not host:
                    return
                self.host = None
                self._lost = self._page_error or "the headless page closed"
            host.close()
            self._widget.bridge.wake()  # a call waiting for the page to attach ends now

    def not_delivered(self, change: bool) -> tuple[ErrorCode, str, str] | None:
        """Why a call found no view although the fallback is on: (code, message, hint), or None."""
        kept = "; the change is kept and applies when the widget is displayed" if change else ""
        if self._unavailable is not None:
            return (
                "no_view",
                f"no view of the widget is displayed, and no headless page can start: {self._unavailable}{kept}",
                "install a Chromium-family browser (`python -m splitbrain_widget doctor` says how), "
                "or display the widget in a notebook",
            )
        if self._lost is not None:
            return (
                "not_ready",
                f"no view of the widget is displayed, and the headless page failed: {self._lost}{kept}",
                "the next call starts a new page; if it fails again, check that Chromium starts here",
            )
        if self.host is not None:
            return (
                "not_ready",
                f"the headless page did not attach within the call's deadline (Chromium starting?){kept}",
                "raise the timeout: the next call waits for the same page",
            )
        return None

    def runs_calls(self) -> bool:
        """Whether the widget's calls go to the page now (it is open and no notebook view is attached)."""
        host = self.host
        return host is not None and not self._notebook_views(host)

    def page(self) -> HeadlessPage:
        """The page the widget's calls go to, started if need be; raises where there is none."""
        from ._headless_engine import HeadlessError

        if self.host is None:
            self.start()
        host = self.host
        if host is None:
            raise HeadlessError(
                "no_view", f"no headless page can start: {self._unavailable or 'the widget was closed'}"
            )
        if self._notebook_views(host):
            raise HeadlessError(
                "no_view", "a notebook view shows this widget: its page runs in real time, there is no clock to advance"
            )
        return host.page

    def close(self) -> None:
        """Close the page, if any, for good (the widget was closed)."""
        with self._lock:
            self._closed = True
            host, self.host = self.host, None
        if host is not None:
            host.close()

    def _notebook_views(self, host: HeadlessHost) -> bool:
        return any(v.view_id != host.page.view_id for v in self._widget.bridge.live_views())


class FallbackHost(Host):
    """The comm's views and the widget's headless fallback page, behind the seam as one host: each
    call goes to exactly one of them (the page while no notebook view is attached)."""

    answers_through_kernel = True

    def __init__(self, views: Host, fallback: HeadlessFallback) -> None:
        self.views = views
        self.fallback = fallback

    def send_request(self, message: RequestMessage) -> None:
        if not self.fallback.send_request(message):  # one home per call
            self.views.send_request(message)

    def before_call(self, *, views: bool, view_expected: bool) -> None:
        if not views and not view_expected:
            self.fallback.start()  # a headless page, unless one is on its way; it calls expect_view

    def lost(self) -> bool:
        return self.fallback.lost()

    def call_settled(self, request_id: str) -> None:
        self.fallback.call_settled(request_id)  # a notebook view took over: the page may close now

    def not_delivered(self, change: bool) -> tuple[ErrorCode, str, str] | None:
        return self.fallback.not_delivered(change)

    def answers_here(self) -> bool:
        return self.fallback.runs_calls()

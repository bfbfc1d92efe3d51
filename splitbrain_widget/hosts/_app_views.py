"""The MCP App views of a widget: its page as a chat renders it (MCP Apps), behind the seam.

An App view (``js/app/app_view.js``, the ``ui://`` resource the MCP server serves) runs the view's own
relay code (``js/host/host.js``) in the chat's iframe, the target in a sandboxed frame inside it. It has
no channel from the server but the tool calls its host passes on, so it asks: :meth:`AppViews.exchange`
takes the view's messages (replies and events, as a notebook view sends them over the comm) and
answers with the requests queued for it, waiting up to ``wait_s`` for one when it brought none (a long
poll). Every request goes to every attached view and the first reply wins (the bridge), so every view
the chat keeps shows the same values; a view that attaches later applies the current values once its
page is ready, as a notebook view does, and gets the requests not answered yet (the relay applies each
id once). A view that has not asked for :data:`STALE_S` is gone (a chat
closed without tearing its views down): it is detached, and a call waits for it no longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from ..core._seam import Host, Hosted
from ..protocol import MAX_MESSAGE_BYTES, ErrorCode, RequestMessage

POLL_S = 5.0  # the longest wait of one exchange: each view holds a connection of its host meanwhile
STALE_S = POLL_S + 15.0  # a view silent this long is gone
MAX_MESSAGES = 256  # messages one exchange may bring
MAX_QUEUED = 1024  # requests queued for a view that stopped asking (the oldest go first)
VIEW_KINDS = ("reply", "event")  # what an App view may send (no chat panel there)

_counter = itertools.count(1)


class AppViewError(ValueError):
    """An exchange the server refuses: its ``code`` (``no_view``, ``invalid_value``) and what to do."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class _View:
    id: str
    seen: float
    mailbox: deque[RequestMessage] = field(default_factory=deque)
    waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None


class AppViews(Host):
    """The widget's home in MCP App views: requests go to every attached view's mailbox."""

    def __init__(self, widget: Hosted) -> None:
        self._widget = widget
        self._lock = threading.Lock()
        self._views: dict[str, _View] = {}
        # Requests not answered yet: a view that attaches meanwhile gets them too (the one a chat
        # renders for this very call, or one that replaces a view closed without a teardown).
        self._unsettled: OrderedDict[str, RequestMessage] = OrderedDict()

    # -- the seam ------------------------------------------------------------------------------

    def send_request(self, message: RequestMessage) -> None:
        with self._lock:
            self._unsettled[message["id"]] = message
            while len(self._unsettled) > MAX_QUEUED:
                self._unsettled.popitem(last=False)
        for view in self._live():
            with self._lock:
                if len(view.mailbox) >= MAX_QUEUED:
                    view.mailbox.popleft()
                view.mailbox.append(message)
            self._wake(view)

    def call_settled(self, request_id: str) -> None:
        with self._lock:
            self._unsettled.pop(request_id, None)

    def not_delivered(self, change: bool) -> tuple[ErrorCode, str, str] | None:
        kept = " The change is kept and applies when one is." if change else ""
        return (
            "no_view",
            f"no MCP App view of this page is open: no chat host rendered it, or it was closed.{kept}",
            "a client that renders MCP Apps shows the page beside a call to a tool that changes it",
        )

    # -- the views' side -----------------------------------------------------------------------

    @property
    def count(self) -> int:
        return len(self._live())

    def knows(self, view_id: Any) -> bool:
        """Whether ``view_id`` is a view attached here."""
        with self._lock:
            return isinstance(view_id, str) and view_id in self._views

    def attach(self) -> str:
        """A new view's id (its ``attached`` event comes with its first exchange)."""
        view_id = f"app-{next(_counter)}-{secrets.token_hex(4)}"
        with self._lock:
            self._views[view_id] = _View(view_id, time.monotonic(), deque(self._unsettled.values()))
        return view_id

    async def exchange(self, view_id: str, messages: Any, wait_s: float) -> list[RequestMessage]:
        """Take ``view_id``'s messages, then answer the requests queued for it (waiting up to ``wait_s``).

        Raises:
            AppViewError: ``no_view`` for a view this host does not know (never attached, detached, or
                silent for :data:`STALE_S`: attach again); ``invalid_value`` for messages that are not a
                list of at most :data:`MAX_MESSAGES` objects of this view's, each within the protocol's
                bound; nothing of such an exchange is taken.
        """
        view = self._find(view_id)
        for message in _checked(view_id, messages):
            self._widget.receive_view_message(message)
            if message["kind"] == "event" and message.get("type") == "detached":
                self._forget(view_id)
                return []
        requests = self._take(view)
        if requests or wait_s <= 0:
            return requests
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if view.waiter is not None:  # the view's older poll gives way (it answers empty)
                self._release(view.waiter)
            view.waiter = (loop, waiter)
        try:
            if not view.mailbox:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(waiter), min(wait_s, POLL_S))
        finally:
            with self._lock:
                if view.waiter is not None and view.waiter[1] is waiter:
                    view.waiter = None
                view.seen = time.monotonic()
        return self._take(view)

    def detach(self, view_id: str) -> bool:
        """Forget a view and tell the widget it went; False when it was not attached."""
        if not self._forget(view_id):
            return False
        self._widget.receive_view_message({"kind": "event", "view_id": view_id, "type": "detached"})
        return True

    def values(self) -> dict[str, Any]:
        """The widget's current values, as a view's relay reads them (its catch-up apply on ready)."""
        return dict(self._widget.values)

    def target_id(self) -> str:
        """The widget's target now: a view holding another (``select_target`` ran) loads it again."""
        return str(self._widget.target.id)

    # -- inside --------------------------------------------------------------------------------

    def _find(self, view_id: str) -> _View:
        self._live()
        with self._lock:
            view = self._views.get(view_id) if isinstance(view_id, str) else None
            if view is None:
                raise AppViewError("no_view", f"view_id {view_id!r}: no such App view here (attach again)")
            view.seen = time.monotonic()
            return view

    def _take(self, view: _View) -> list[RequestMessage]:
        with self._lock:
            requests = list(view.mailbox)
            view.mailbox.clear()
            return requests

    def _wake(self, view: _View) -> None:
        with self._lock:
            waiter = view.waiter
        if waiter is not None:
            self._release(waiter)

    @staticmethod
    def _release(waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]) -> None:
        loop, future = waiter

        def settle() -> None:
            if not future.done():
                future.set_result(None)

        with contextlib.suppress(RuntimeError):  # the server's loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle)

    def _forget(self, view_id: str) -> bool:
        with self._lock:
            view = self._views.pop(view_id, None)
        if view is not None and view.waiter is not None:
            self._release(view.waiter)
        return view is not None

    def _live(self) -> list[_View]:
        """The attached views, after detaching the ones silent for :data:`STALE_S` (none is waiting)."""
        now = time.monotonic()
        with self._lock:
            stale = [v.id for v in self._views.values() if v.waiter is None and now - v.seen > STALE_S]
        for view_id in stale:
            self.detach(view_id)
        with self._lock:
            return list(self._views.values())


def _checked(view_id: str, messages: Any) -> list[dict[str, Any]]:
    """The view's messages, each a reply or an event of its own and within the protocol's bound."""
    if not isinstance(messages, list) or len(messages) > MAX_MESSAGES:
        raise AppViewError("invalid_value", f"messages: expected a list of at most {MAX_MESSAGES} messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("kind") not in VIEW_KINDS:
            raise AppViewError("invalid_value", f"messages[{index}]: expected a reply or an event of the view")
        if message.get("view_id") != view_id:
            raise AppViewError("invalid_value", f"messages[{index}]: view_id is not {view_id!r}")
        if len(json.dumps(message, default=str)) > MAX_MESSAGE_BYTES:
            raise AppViewError("invalid_value", f"messages[{index}]: more than {MAX_MESSAGE_BYTES} bytes of JSON")
    return messages

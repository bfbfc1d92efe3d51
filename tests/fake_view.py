"""An in-process fake view at the host seam, like httpx's MockTransport or pydantic-ai's FunctionModel.

It takes the widget's requests through ``sim.host`` and answers as a page behind ``js/host/relay.js``
would: from its own thread, applying the values and reporting a state. Behaviours: ``"ok"``,
``"silent"`` (never answers), ``"throw"`` (the page's handler throws: ``target_error``) and
``"delay"`` (answers after ``delay_s``); a ``snapshot`` is answered with ``picture``. An ``action`` request runs ``on_action(name, values)``, as a
page's ``SplitBrain.onAction`` handler would (its state is merged into the reply's); without one it
answers ``target_error``, as the target API does. No kernel, no comm, no browser.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from splitbrain_widget.protocol import PROTOCOL_VERSION, RequestMessage


class FakeView:
    """A view of ``sim`` whose page applies what it is sent; ``state_of`` adds observables."""

    def __init__(
        self,
        sim: Any,
        *,
        view_id: str = "fake-1",
        behaviour: str = "ok",
        delay_s: float = 0.0,
        ready: bool = True,
        protocol: int = PROTOCOL_VERSION,
        state_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        on_action: Callable[[str, dict[str, Any]], dict[str, Any] | None] | None = None,
        picture: dict[str, Any] | None = None,
    ) -> None:
        self.sim = sim
        self.view_id = view_id
        self.behaviour = behaviour
        self.delay_s = delay_s
        self.state_of = state_of or (lambda values: {})
        self.on_action = on_action
        self.picture = picture  # a snapshot's reply (``{png, width, height}``); None: the page draws no canvas
        self.values: dict[str, Any] = dict(sim.values)  # the catch-up apply of a fresh page
        self.requests: list[RequestMessage] = []
        self._inbox: queue.Queue[RequestMessage | None] = queue.Queue()
        self._worker = threading.Thread(target=self._serve, name=f"fake-view-{view_id}", daemon=True)
        self._worker.start()
        sim.host = self
        self._event("attached", {"protocol": protocol, "user_agent": "fake view"})
        if ready:
            self._event("ready")

    def send_request(self, message: RequestMessage) -> None:
        self.requests.append(message)
        self._inbox.put(message)

    def state(self) -> dict[str, Any]:
        return {**self.values, **self.state_of(self.values)}

    def detach(self) -> None:
        self._event("detached")
        self._inbox.put(None)

    def _event(self, kind: str, payload: Any = None) -> None:
        message: dict[str, Any] = {"kind": "event", "view_id": self.view_id, "type": kind}
        if payload is not None:
            message["payload"] = payload
        self.sim.receive_view_message(message)

    def _serve(self) -> None:
        while (message := self._inbox.get()) is not None:
            if self.behaviour == "silent":
                continue
            if self.behaviour == "delay":
                time.sleep(self.delay_s)  # the page is slow: what a caller waits for
            reply: dict[str, Any] = {"kind": "reply", "id": message["id"], "view_id": self.view_id}
            if self.behaviour == "throw" and message["op"] != "state":
                reply |= {"ok": False, "error": {"code": "target_error", "message": "TypeError: boom in onApply"}}
            elif message["op"] == "action":
                reply |= self._act(message["payload"]["name"])
            elif message["op"] == "snapshot":
                reply |= self._snapshot()
            else:
                if message["op"] == "reset":
                    self.values = {}
                self.values.update(message["payload"].get("values", {}))
                reply |= {"ok": True, "state": self.state()}
            self.sim.receive_view_message(reply)

    def _snapshot(self) -> dict[str, Any]:
        if self.picture is None:
            return {"ok": False, "error": {"code": "target_error", "message": "the page draws no canvas"}}
        return {"ok": True, "state": self.state(), "picture": self.picture}

    def _act(self, name: str) -> dict[str, Any]:
        if self.on_action is None:
            return {"ok": False, "error": {"code": "target_error", "message": NO_ACTION_HANDLER}}
        try:
            reported = self.on_action(name, dict(self.values))
        except Exception as exc:  # the page's handler threw
            return {"ok": False, "error": {"code": "target_error", "message": str(exc)}}
        return {"ok": True, "state": {**self.state(), **(reported or {})}}


NO_ACTION_HANDLER = "the target page registered no SplitBrain.onAction handler"  # js/page/target_api.js's words


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait until ``condition()`` holds (polled: it reads state other threads change)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.01)

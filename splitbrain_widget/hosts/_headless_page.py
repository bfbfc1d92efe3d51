"""One target page in headless Chromium: the ops that go in (batched, one evaluate each), the messages
that come out, and its virtual clock's ``advance`` (single or sampled, within a wall-time budget)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, overload

from .._bounds import MAX_NODES, NodeBudget
from ..manifest import registry
from ..protocol import bounded_state
from ._headless_engine import BINDING, CLOSE_WAIT_S, READY_WAIT_S, Engine, HeadlessError, HostPage, MessageHandler, log

# Wall seconds an advance gets for its simulated time when no timeout is given (beside the widget's
# timeout, or READY_WAIT_S for a page that is still loading): docs/protocol.md, *Bounds*.
ADVANCE_BUDGET_S = 60.0
EVALUATES_IN_FLIGHT = 2  # batches of ops sent before the first is answered (each answer is ~1 ms away)
MAX_SAMPLES = 100_000  # states of one sampled advance (js/host/host.js MAX_SAMPLES)
MAX_SAMPLE_CHARS = 64 << 20  # their JSON together, enforced by the host page (js/host/host.js MAX_SAMPLE_CHARS)
Keep = Callable[[dict[str, Any]], dict[str, Any]]  # what of each state a sampled advance keeps


def _samples(ms: float, every_ms: float) -> int:
    """The steps of a sampled advance: the last ends at ``ms``; at least one (js/host/host.js sampleCount)."""
    return max(1, math.ceil(ms / every_ms - 1e-9))


class _Samples:
    """The states of one sampled advance, as its parts come in: ``expected`` of them, dicts each.

    Each state is bounded as it arrives (:func:`~splitbrain_widget.protocol.bounded_state`), cut down
    to what the caller keeps (``keep``: a recording keeps its observables), and counted against the
    call's budget of values (:class:`~splitbrain_widget._bounds.NodeBudget`): what is not kept is
    never held, whatever the page sends.
    """

    def __init__(self, expected: int, keep: Keep | None = None) -> None:
        self.expected = expected
        self.keep = keep
        self.budget = NodeBudget()
        self.states: list[dict[str, Any]] = []
        self.bad = ""

    def add(self, states: Any) -> bool:
        """Take a part; False (and :meth:`why`) when it is not a list of states, one too many, or over budget."""
        if not isinstance(states, list) or not all(isinstance(state, dict) for state in states):
            self.bad = "the host page sent a part of a sampled advance that is not a list of states"
        elif len(self.states) + len(states) > self.expected:
            self.bad = f"the host page sent more states than the {self.expected} steps of a sampled advance"
        else:
            for state in states:
                kept = bounded_state(state)
                if self.keep is not None:
                    kept = self.keep(kept)
                if not self.budget.take(kept):
                    self.bad = (
                        f"the states of a sampled advance hold more than {self.budget.limit:,} values together "
                        f"after {len(self.states)} of {self.expected} steps (a page's state is bounded to "
                        f"{MAX_NODES:,} values, a call's states to {self.budget.limit:,}): sample less "
                        "often (a larger every), fewer seconds at a time, or record only the observables you need"
                    )
                    self.states.clear()
                    break
                self.states.append(kept)
        return not self.bad

    def complete(self) -> bool:
        if not self.bad and len(self.states) != self.expected:
            got = len(self.states)
            self.bad = f"the host page sent {got} states for the {self.expected} steps of a sampled advance"
        return not self.bad

    def why(self) -> str:
        return self.bad or "a sampled advance failed"


class HeadlessPage:
    """One target page in headless Chromium, spoken to with the view's own wire protocol.

    ``html`` is the target page with the bridge injected (:attr:`registry.Target.html`); with
    ``virtual_time`` the engine adds the virtual clock (time stands still until :meth:`advance`,
    ``Math.random`` seeded by ``seed``, ``fps`` animation frames per virtual second, 60 by default:
    see :func:`registry.inject_clock`). An advance is as fast as the page's own frames: one that
    redraws everything each frame may skip drawing while ``window.__splitbrainClock.unseen`` is true
    (a later frame of the same advance draws over it; js/page/clock.js). ``on_message`` gets every
    view -> kernel message the relay produces (``attached``, ``ready``, replies, ``state`` and
    ``error`` events, ``detached``), in order, on the engine's thread. Every method may be called
    from any thread.
    """

    def __init__(
        self,
        html: str,
        *,
        on_message: MessageHandler,
        values: dict[str, Any],
        view_id: str | None = None,
        virtual_time: bool = True,
        seed: int = 0,
        fps: float | None = None,
        height: int = 420,
        network: tuple[str, ...] = (),
    ) -> None:
        self.view_id = view_id or f"h-{secrets.token_hex(8)}"
        # The network sources the page's manifest declares (registry.network_sources): the only
        # requests the browser lets through (_network_gate.py).
        self.network = network
        self.virtual_time = virtual_time
        self.seed = seed
        self.fps = fps
        self._on_message = on_message
        self._html = self._prepare(html)
        self._engine = Engine.get()
        self._lock = threading.Lock()
        self._ops: list[str] = []
        self._closing = False
        self._closed = concurrent.futures.Future[None]()
        self._advances: dict[str, concurrent.futures.Future[Any]] = {}
        self._sampled: dict[str, _Samples] = {}  # the sampled ones among them
        self.max_sample_chars = MAX_SAMPLE_CHARS
        self._failure: HeadlessError | None = None
        self._host: HostPage | None = None
        # Used on the engine's loop only (an Event binds to the loop that first waits on it).
        self._wake = asyncio.Event()
        self._hosted = asyncio.Event()
        self._counter = 0
        # Serialised now, so that values JSON cannot carry fail here, at once (as in send()).
        self._created = json.dumps(
            {"viewId": self.view_id, "html": self._html, "values": values, "binding": BINDING, "height": height},
            allow_nan=False,
        )
        self._engine.submit(self._run())

    # -- the caller's side (any thread) -----------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """A kernel -> view message, as over the comm (``{kind: "request", id, op, payload}``); never blocks."""
        self._push({"op": "send", "msg": message})

    def set_values(self, values: dict[str, Any]) -> None:
        """The ``values`` trait changed (the relay catches a new page up with it and posts what differs)."""
        self._push({"op": "values", "values": values})

    def reload(self, html: str | None = None) -> None:
        """Load the page again (fresh iframe, fresh nonce), optionally a new ``html``; values are kept."""
        op: dict[str, Any] = {"op": "reload"}
        if html is not None:
            self._html = self._prepare(html)
            op["html"] = self._html
        self._push(op)

    @overload
    def advance(self, seconds: float, timeout: float | None = None, *, every: None = None) -> dict[str, Any]: ...
    @overload
    def advance(
        self, seconds: float, timeout: float | None = None, *, every: float, keep: Keep | None = None
    ) -> list[dict[str, Any]]: ...
    def advance(
        self, seconds: float, timeout: float | None = None, *, every: float | None = None, keep: Keep | None = None
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """Run the page's virtual clock ``seconds`` forward; returns the page's state after it.

        With ``every`` (simulated seconds), the clock runs in steps of ``every`` and the result is the
        list of the states after each step, in order, from one call (the page is asked for its state
        at the end of every step; the states come back together, not one round trip each). There are
        ``ceil(seconds / every)`` of them, at least one: the last step ends at ``seconds`` (shorter
        than ``every`` when ``every`` does not divide it), so the last state is the one ``advance``
        without ``every`` returns. At most :data:`MAX_SAMPLES` (100,000) steps (more is a ValueError,
        at once), their states at most ``max_sample_chars`` (64 Mi) characters of JSON together
        (more fails the call with :class:`HeadlessError` ``target_error``, no states returned), and
        at most :data:`~splitbrain_widget._bounds.MAX_CALL_NODES` values together once each state is
        bounded and passed through ``keep`` (what of a state the caller keeps: a recording keeps
        its observables; more fails the call as well).

        Waits for a loading page to become ready first. ``timeout`` (default: :data:`READY_WAIT_S`
        plus :data:`ADVANCE_BUDGET_S`) bounds the wall time; raises :class:`HeadlessError`
        (``not_ready``, ``timeout``, ...). An advance that ends early (its timeout, a cancel, a
        failure) leaves nothing running on the page. Sends made while it runs reach the page between
        two of its steps (at most one second each).
        """
        if self._engine.on_loop():
            raise RuntimeError("advance() on the headless engine's thread (in on_message?) would wait for itself")
        token, future = self._start_advance(seconds, every, keep)
        wait = timeout if timeout is not None else READY_WAIT_S + ADVANCE_BUDGET_S
        try:
            result: dict[str, Any] | list[dict[str, Any]] = future.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            self._cancel_advance(token, future)
            raise HeadlessError("timeout", f"the page did not advance {seconds} s within {wait:.1f} s") from None
        except KeyboardInterrupt:  # Ctrl-C: the page stops advancing too
            self._cancel_advance(token, future)
            raise
        return result

    @overload
    async def aadvance(self, seconds: float, timeout: float | None = None, *, every: None = None) -> dict[str, Any]: ...
    @overload
    async def aadvance(
        self, seconds: float, timeout: float | None = None, *, every: float, keep: Keep | None = None
    ) -> list[dict[str, Any]]: ...
    async def aadvance(
        self, seconds: float, timeout: float | None = None, *, every: float | None = None, keep: Keep | None = None
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """:meth:`advance` for asyncio code: waits without blocking the running loop."""
        token, future = self._start_advance(seconds, every, keep)
        wait = timeout if timeout is not None else READY_WAIT_S + ADVANCE_BUDGET_S
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), wait)
        except TimeoutError:
            self._cancel_advance(token, future)
            raise HeadlessError("timeout", f"the page did not advance {seconds} s within {wait:.1f} s") from None
        except asyncio.CancelledError:  # the awaiting task was cancelled (Ctrl-C, a timeout around it)
            self._cancel_advance(token, future)
            raise

    def close(self) -> None:
        """Remove the page (``detached`` is sent) and hand its host page back to the engine."""
        with self._lock:
            if self._closing:
                already = True
            else:
                already, self._closing = False, True
                self._ops.append("")  # the close marker: the worker empties the host page there
        if not already:
            self._kick()
        if not self._engine.on_loop():
            try:
                self._closed.result(timeout=CLOSE_WAIT_S)
            except concurrent.futures.TimeoutError:
                log.warning("headless page %s did not close within %s s", self.view_id, CLOSE_WAIT_S)

    @property
    def closed(self) -> bool:
        return self._closing

    def refused_requests(self) -> list[str]:
        """The last requests the browser refused for the pages this one shares its proxy with (every
        page without network sources shares one; a page with some has its own): ``"GET http://..."``."""
        host = self._host
        return list(host.gate.refused) if host is not None else []

    def _host_evaluate(self, expression: str, timeout: float = 30.0) -> Any:
        """For tests and debugging: evaluate ``expression`` in the host page (not in the target's frame)."""

        async def evaluate() -> Any:
            await self._hosted.wait()
            if self._host is None:
                raise HeadlessError("not_ready", "the headless page has no host page")
            return await self._host.page.evaluate(expression)

        return self._engine.submit(evaluate()).result(timeout=timeout)

    def screenshot(self, timeout: float = 30.0) -> bytes:
        """Chromium's PNG of the target's frame as it shows (a page that draws no canvas has no picture
        of its own): the frame's CSS pixels at a device pixel ratio of 1."""

        async def shoot() -> bytes:
            await self._hosted.wait()
            if self._host is None:
                raise HeadlessError("not_ready", "the headless page has no host page")
            element = await self._host.page.query_selector("iframe[data-splitbrain-target]")
            if element is None:
                raise HeadlessError("not_ready", "the headless page holds no target frame")
            return bytes(await element.screenshot(type="png", animations="allow", timeout=timeout * 1000))

        return bytes(self._engine.submit(shoot()).result(timeout=timeout))

    def _frame_evaluate(self, expression: str, frame_name: str | None = None, timeout: float = 30.0) -> Any:
        """For tests and debugging: evaluate ``expression`` in the target's frame, or in the host page's
        frame named ``frame_name`` (Playwright's frame API; the host page itself cannot reach either)."""

        async def evaluate() -> Any:
            await self._hosted.wait()
            if self._host is None:
                raise HeadlessError("not_ready", "the headless page has no host page")
            page = self._host.page
            # A frame the host page just mounted reaches Playwright's frame tree a little later (a
            # sandboxed frame runs in a process of its own): wait for it, within the deadline.
            until = time.monotonic() + timeout
            while (frame := await self._find_frame(page, frame_name)) is None:
                if time.monotonic() > until:
                    raise HeadlessError("not_ready", f"no frame {frame_name or 'of the target'!r} in the host page")
                await asyncio.sleep(0.02)
            return await frame.evaluate(expression)

        return self._engine.submit(evaluate()).result(timeout=timeout)

    @staticmethod
    async def _find_frame(page: Any, frame_name: str | None) -> Any:
        """The target's frame (the iframe js/host/frame.js marks), or the host page's iframe named
        ``frame_name``; None while it is not there yet."""
        # By the iframe's attribute: a target page takes its window.name (the nonce), so Playwright's
        # frame names say nothing.
        selector = "iframe[data-splitbrain-target]" if frame_name is None else f"iframe[name={json.dumps(frame_name)}]"
        element = await page.query_selector(selector)
        frame = await element.content_frame() if element is not None else None
        # A target's frame holds about:blank until it is given its page (js/host/frame.js `start`)
        if frame is None or (frame_name is None and frame.url == "about:blank"):
            return None
        await frame.wait_for_load_state("load")
        return frame

    def __enter__(self) -> HeadlessPage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _prepare(self, html: str) -> str:
        return registry.inject_clock(html, self.seed, self.fps) if self.virtual_time else html

    def _push(self, op: dict[str, Any]) -> None:
        # Serialised here, so that a message JSON cannot carry fails in the caller, at once.
        text = json.dumps(op, allow_nan=False, separators=(",", ":"))
        with self._lock:
            if self._closing:
                raise HeadlessError("no_view", "the headless page was closed")
            self._ops.append(text)
        self._kick()

    def _kick(self) -> None:
        self._engine.loop.call_soon_threadsafe(self._wake.set)

    def _start_advance(
        self, seconds: float, every: float | None = None, keep: Keep | None = None
    ) -> tuple[str, concurrent.futures.Future[Any]]:
        if not self.virtual_time:
            raise ValueError("advance() needs a page with virtual time (virtual_time=True); this one runs in real time")
        if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"advance() takes a finite number of seconds >= 0, got {seconds!r}")
        op: dict[str, Any] = {"op": "advance", "ms": seconds * 1000.0}
        samples = 0
        if every is not None:
            if isinstance(every, bool) or not isinstance(every, int | float) or not math.isfinite(every) or every <= 0:
                raise ValueError(f"advance(every=...) takes a finite number of seconds > 0, got {every!r}")
            samples = _samples(op["ms"], every * 1000.0)
            if samples > MAX_SAMPLES:
                raise ValueError(
                    f"advance({seconds}, every={every}) would take {samples:,} samples, more than the "
                    f"{MAX_SAMPLES:,} of one advance: raise every, or advance fewer seconds at a time"
                )
            op.update(every=every * 1000.0, max_chars=self.max_sample_chars)
        future = concurrent.futures.Future[Any]()
        with self._lock:
            failure = self._failure
            self._counter += 1
            token = f"a{self._counter}"
            if failure is None:
                self._advances[token] = future
                if every is not None:
                    self._sampled[token] = _Samples(samples, keep)
        if failure is not None:
            raise failure
        self._push({**op, "token": token})
        return token, future

    def _cancel_advance(self, token: str, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._advances.pop(token, None)
            self._sampled.pop(token, None)
        future.cancel()
        if not self._closing:
            self._push({"op": "cancel", "token": token})

    def _fail(self, error: HeadlessError) -> None:
        """The page is gone or never came: settle every advance with ``error``."""
        with self._lock:
            if self._failure is None:
                self._failure = error
            pending, self._advances = self._advances, {}
            self._sampled.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    def _deliver(self, message: dict[str, Any]) -> None:
        try:
            self._on_message(message)
        except Exception:  # the receiver's bug must not stop the page's other messages
            log.exception("headless page %s: on_message failed", self.view_id)

    # -- the engine's side (its thread) -----------------------------------------------------

    def _from_host(self, message: dict[str, Any]) -> None:
        kind = message.get("kind")
        if kind == "_samples":
            self._take_samples(str(message.get("token")), message.get("states"))
            return
        if kind == "_advance":
            token = str(message.get("token"))
            with self._lock:
                future = self._advances.pop(token, None)
                sampled = self._sampled.pop(token, None)
            result = message.get("result")
            if future is None or future.done() or not isinstance(result, dict):
                return
            error = result.get("error")
            if result.get("ok") is not True:
                error = error if isinstance(error, dict) else {}
                future.set_exception(
                    HeadlessError(str(error.get("code", "internal_error")), str(error.get("message", "advance failed")))
                )
            elif sampled is None and isinstance(result.get("state"), dict):
                future.set_result(bounded_state(result["state"]))
            elif sampled is not None and sampled.add(result.get("states")) and sampled.complete():
                future.set_result(sampled.states)
            else:
                why = "the host page's answer to an advance was malformed" if sampled is None else sampled.why()
                future.set_exception(HeadlessError("internal_error", why))
            return
        if message.get("type") == "error" and isinstance(message.get("payload"), dict):
            self._say_why_not_ready(message["payload"])
        self._deliver(message)

    def _say_why_not_ready(self, error: dict[str, Any]) -> None:
        """A page that never got ready: log what its console showed (there is no browser to open)."""
        host = self._host
        if error.get("code") != "not_ready" or host is None:
            return
        said = "; ".join(host.console) or "no error in the page's console"
        log.warning("headless view %s: the target did not get ready; %s", self.view_id, said)

    def _take_samples(self, token: str, states: Any) -> None:
        """A part of a sampled advance's states, while it runs (the rest comes with its ``_advance``)."""
        with self._lock:
            sampled = self._sampled.get(token)
            if sampled is None or sampled.add(states):
                return
            future = self._advances.pop(token, None)
            self._sampled.pop(token, None)
        if future is not None and not future.done():
            future.set_exception(HeadlessError("internal_error", sampled.why()))

    def _host_lost(self, why: str) -> None:
        self._fail(HeadlessError("not_ready", why))
        error = {"code": "internal_error", "message": why}
        self._deliver({"kind": "event", "view_id": self.view_id, "type": "error", "payload": error})
        self._deliver({"kind": "event", "view_id": self.view_id, "type": "detached"})

    async def _run(self) -> None:
        """The page's worker: create the view, then hand over batches of ops in order, one evaluate each.

        A batch goes out without waiting for the answer to the one before (the session runs them in
        order), up to EVALUATES_IN_FLIGHT: a call does not wait behind an echo's evaluate, and in a
        burst the ops that come meanwhile ride together in the next batch. A failed evaluate fails
        the page.
        """
        wake = self._wake
        host: HostPage | None = None
        sent: list[asyncio.Task[Any]] = []  # evaluates not answered yet, oldest first

        def answered(task: asyncio.Task[Any]) -> None:
            if not task.cancelled() and task.exception() is not None:
                wake.set()  # the worker raises it

        try:
            host = await self._engine.acquire(self.network)
            host.owner = self
            self._host = host
            await host.evaluate(f"splitbrainHost.create(JSON.parse({json.dumps(self._created)}))")
            self._created = ""
            self._hosted.set()
            while True:
                for task in [task for task in sent if task.done()]:
                    sent.remove(task)
                    task.result()  # a failure ends the page here
                if len(sent) >= EVALUATES_IN_FLIGHT:
                    await asyncio.wait(sent[:1])
                    continue
                with self._lock:
                    ops, self._ops = self._ops, []
                if not ops:
                    # An op pushed after the swap above sets the event again: none is missed.
                    await wake.wait()
                    wake.clear()
                    continue
                closing = "" in ops
                batch = ops[: ops.index("")] if closing else ops
                if batch:
                    # Data crosses into the page as a string it parses, never as source: a key such as
                    # "__proto__" stays a key (JSON.parse), where an object literal would set a prototype.
                    text = json.dumps(f"[{','.join(batch)}]")
                    task = asyncio.ensure_future(host.evaluate(f"splitbrainHost.run(JSON.parse({text}))"))
                    task.add_done_callback(answered)
                    sent.append(task)
                if closing:
                    await asyncio.gather(*sent)  # the host page is emptied after the last batch ran
                    sent.clear()
                    break
        except Exception as exc:
            message = f"the headless page failed: {exc}"[:500]
            log.warning("headless page %s: %s", self.view_id, message)
            self._fail(HeadlessError("internal_error", message))
            if host is None or not host.broken:
                self._host_lost(message)
            if host is not None:
                host.broken = True
        finally:
            for task in sent:  # after a failure: their answers no longer matter
                task.cancel()
            self._fail(HeadlessError("not_ready", "the headless page was closed"))
            self._host = None
            self._hosted.set()
            if host is not None:
                await self._engine.release(host)
            self._closed.set_result(None)

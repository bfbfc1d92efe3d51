"""The headless engine: target pages in headless Chromium, behind the view's own relay code.

One Chromium per Python process, driven by Playwright's async API on a private daemon thread with
its own asyncio loop: Playwright's sync API refuses to run inside a running asyncio loop and only
delivers callbacks while it is inside a call, so a private loop is what works alike from a plain
cell, a script and an async task. The browser starts on first use and closes at interpreter exit.

Each :class:`HeadlessPage` gets a host page (``static/host_page.js``: the relay, the sandboxed iframe,
the nonce checks and the message budget of the notebook view, ``js/host/frame.js``) holding one target.
Kernel -> view messages go in as batches of ops, one ``Runtime.evaluate`` per batch (consecutive
sends ride together); view -> kernel messages come out through a CDP binding, batched per task.
Host pages are reused when a HeadlessPage closes.

The browser is the one the user has, found by :mod:`._browser_finder` (``SPLITBRAIN_CHROMIUM``, the
Chromium Playwright installed, then the system's Chromium, Chrome or Edge). Playwright is imported
here only, lazily.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Coroutine
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .._bounds import repair_text
from ..core._platform import in_browser
from ._browser_finder import BrowserNotFound, FoundBrowser, find_browser
from ._network_gate import NetworkGate, open_gate

if TYPE_CHECKING:
    from ._headless_page import HeadlessPage

log = logging.getLogger("splitbrain_widget.headless")

# Headless Chromium on a machine with a closed network (BROWSER-TESTING.md): without the
# background-networking flags it keeps trying to reach Google's hosts. Playwright adds --headless,
# and --no-sandbox only where the sandbox cannot work (as root).
CHROMIUM_ARGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT = {"width": 960, "height": 600}
BINDING = "__splitbrainOut"
MAX_IDLE_PAGES = 4
CONSOLE_KEPT = 5  # console errors a host page keeps (the last ones)
CONSOLE_CHARS = 300  # of each
READY_WAIT_S = 15.0  # the relay's READY_TIMEOUT_MS: an advance waits this long for a loading page
CLOSE_WAIT_S = 5.0
# One hand-over of messages from the host page (js/host/host_page.js BATCH_CHARS, plus one message of at most
# about a MiB): a longer one is refused before it is parsed.
MAX_HANDOVER_CHARS = 4 << 20
# A lone surrogate as JSON.stringify writes it ("\ud800"); only then is a hand-over repaired.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
DOCTOR_HINT = "`python -m splitbrain_widget doctor` says what this machine has"

_T = TypeVar("_T")
MessageHandler = Callable[[dict[str, Any]], None]


class HeadlessUnavailable(RuntimeError):
    """What the headless runtime needs is missing here: Chromium or the playwright package."""


class HeadlessError(RuntimeError):
    """A headless call failed; ``code`` is one of the protocol's error codes (``not_ready``, ``timeout``...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def chromium_executable() -> str:
    """The browser to run (:func:`._browser_finder.find_browser`); raises HeadlessUnavailable at once,
    naming what was tried and the fix for this system, when there is none."""
    return found_browser().path


def found_browser() -> FoundBrowser:
    """The browser to run and how it was found (:mod:`._browser_finder`)."""
    try:
        return find_browser()
    except BrowserNotFound as exc:
        raise HeadlessUnavailable(f"{exc} ({DOCTOR_HINT})") from None


def new_engine_loop(platform: str = sys.platform) -> asyncio.AbstractEventLoop:
    """The engine thread's loop. On Windows a Proactor loop whatever policy the kernel set: Playwright
    starts its driver as a subprocess, which a selector loop (the policy some notebook setups install
    on Windows) cannot do."""
    if platform == "win32":
        proactor: type[asyncio.AbstractEventLoop] = getattr(asyncio, "ProactorEventLoop")  # noqa: B009 (Windows only)
        return proactor()
    return asyncio.new_event_loop()


def _require_playwright() -> None:
    if in_browser():  # a subprocess and threads: neither exists in the browser's Python
        raise HeadlessUnavailable(
            "the headless runtime (HeadlessTarget, headless=True, sweep) is not available in the browser "
            "(JupyterLite's Python has no threads or processes); the notebook's own view runs the page there"
        )
    try:
        import playwright.async_api  # noqa: F401
    except ImportError as exc:
        raise HeadlessUnavailable(
            f"the headless runtime needs the playwright Python package ({exc}): pip install playwright "
            f"(and a Chromium-family browser: {DOCTOR_HINT})"
        ) from None


@cache
def host_html() -> str:
    """The blank host page with the host module (``static/host_page.js``) inlined: no network needed."""
    module = (Path(__file__).resolve().parent.parent / "static" / "host_page.js").read_text(encoding="utf-8")
    return (
        # frame-src 'none', as the notebook view's sandbox frame has (registry.sandbox_html): a target
        # frame cannot navigate to a network, data: or blob: URL (the srcdoc itself always loads).
        '<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="frame-src \'none\'">'
        '<meta charset="utf-8"><title>splitbrain headless host</title>'
        "<style>html,body{margin:0;background:#fff}iframe{display:block;width:100%;border:0}</style>"
        f'</head><body><script type="module">{module}</script></body></html>'
    )


class HostPage:
    """One Playwright page running host.js, with the CDP session its messages come out of."""

    def __init__(self, page: Any, cdp: Any, gate: NetworkGate, own_context: Any = None) -> None:
        self.page = page
        self.cdp = cdp
        self.gate = gate  # the proxy its requests go through (shared, or its own with own_context)
        self.own_context = own_context
        self.owner: HeadlessPage | None = None
        self.broken = False
        # the last errors the page's console and uncaught exceptions showed (any frame), for a
        # page that never gets ready: what a person would look for in the browser's console
        self.console: collections.deque[str] = collections.deque(maxlen=CONSOLE_KEPT)

    def on_console(self, message: Any) -> None:
        if getattr(message, "type", "") == "error":
            self.console.append(f"console.error: {str(message.text)[:CONSOLE_CHARS]}")

    def on_page_error(self, error: Any) -> None:
        self.console.append(f"uncaught: {str(error)[:CONSOLE_CHARS]}")

    def on_binding(self, params: dict[str, Any]) -> None:
        owner = self.owner
        if params.get("name") != BINDING or owner is None:
            return
        payload = params.get("payload", "[]")
        if not isinstance(payload, str) or len(payload) > MAX_HANDOVER_CHARS:
            size = len(payload) if isinstance(payload, str) else type(payload).__name__
            log.warning("headless host handed over %s characters, over %s: dropped unread", size, MAX_HANDOVER_CHARS)
            return
        try:
            batch = json.loads(payload)
        except (ValueError, RecursionError) as exc:
            log.warning("headless host sent an unreadable batch: %.200s", exc)
            return
        if _SURROGATE_ESCAPE.search(payload):  # a lone surrogate: repaired before anything keeps it
            batch = repair_text(batch, json.dumps(batch, ensure_ascii=False))
        for message in batch if isinstance(batch, list) else []:
            # A reused host page may still flush a message of the view it held before.
            if isinstance(message, dict) and message.get("view_id", owner.view_id) == owner.view_id:
                owner._from_host(message)

    def on_crash(self, *_: Any) -> None:
        self.broken = True
        if self.owner is not None:
            self.owner._host_lost("the headless page crashed")

    async def evaluate(self, expression: str) -> Any:
        answer = await self.cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        details = answer.get("exceptionDetails")
        if details:
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise RuntimeError(f"host page: {str(text)[:500]}")
        return answer.get("result", {}).get("value")


class Engine:
    """One Chromium for the process: a daemon thread running an asyncio loop that owns Playwright."""

    _instance: Engine | None = None
    _instance_lock = threading.Lock()

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.loop = new_engine_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="splitbrain-headless", daemon=True)
        self.thread.start()
        self.closed = False
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._idle: list[HostPage] = []
        self._gate: NetworkGate  # the shared context's proxy (set by _launch, on the loop)
        self._launched: concurrent.futures.Future[None] = asyncio.run_coroutine_threadsafe(self._launch(), self.loop)

    @classmethod
    def get(cls) -> Engine:
        """The running engine, started on first use; raises HeadlessUnavailable at once when it cannot run."""
        with cls._instance_lock:
            engine = cls._instance
            if engine is not None and not engine.closed and not engine._failed():
                return engine
            if engine is not None:  # its browser failed to start or went away: start afresh
                engine.loop.call_soon_threadsafe(engine.loop.stop)
            executable = chromium_executable()
            _require_playwright()
            engine = cls._instance = Engine(executable)
            return engine

    def _failed(self) -> bool:
        return self._launched.done() and self._launched.exception() is not None

    def on_loop(self) -> bool:
        return threading.current_thread() is self.thread

    def submit(self, coro: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def _launch(self) -> None:
        from playwright.async_api import async_playwright

        # Defence in depth: every request of every page goes to a loopback proxy that refuses what no
        # manifest allows (_network_gate.py), whatever the page's policy says.
        self._gate = await open_gate()
        self._playwright = await async_playwright().start()
        # The sandbox cannot run as root; elsewhere keep it (and say so when it fails to start).
        sandbox = hasattr(os, "geteuid") and os.geteuid() != 0
        try:
            self._browser = await self._start_browser(sandbox)
        except Exception as exc:
            if not sandbox or "sandbox" not in str(exc).lower():
                await self._playwright.stop()
                raise
            log.warning("Chromium's sandbox failed to start here; running it with --no-sandbox")
            self._browser = await self._start_browser(False)
        self._browser.on("disconnected", lambda *_: self._disconnected())
        self._context = await self._browser.new_context(viewport=VIEWPORT, proxy=self._gate.playwright_proxy())

    async def _start_browser(self, sandbox: bool) -> Any:
        return await self._playwright.chromium.launch(
            executable_path=self.executable,
            headless=True,
            args=list(CHROMIUM_ARGS),
            chromium_sandbox=sandbox,
            proxy=self._gate.playwright_proxy(),
        )

    def _disconnected(self) -> None:
        self.closed = True
        self._idle.clear()

    async def acquire(self, network: tuple[str, ...] = ()) -> HostPage:
        """A host page: an idle one when there is one, else a new one. A page whose manifest lets it
        reach ``network`` sources gets a browser context (and a gate) of its own, closed with it."""
        await asyncio.wrap_future(self._launched)
        while self._idle and not network:
            host = self._idle.pop()
            if not host.broken and not host.page.is_closed():
                host.console.clear()  # the last view's errors are not this one's
                return host
        gate, context = self._gate, self._context
        if network:
            gate = await open_gate(network)
            context = await self._browser.new_context(viewport=VIEWPORT, proxy=gate.playwright_proxy())
        page = await context.new_page()
        await page.set_content(host_html())
        cdp = await context.new_cdp_session(page)
        host = HostPage(page, cdp, gate, own_context=context if network else None)
        cdp.on("Runtime.bindingCalled", host.on_binding)
        page.on("crash", host.on_crash)
        page.on("console", host.on_console)
        page.on("pageerror", host.on_page_error)
        await cdp.send("Runtime.addBinding", {"name": BINDING})
        return host

    async def release(self, host: HostPage) -> None:
        """Empty the host page and keep it for the next HeadlessPage (or close it)."""
        try:
            if not host.broken:
                await host.evaluate("splitbrainHost.dispose()")
        except Exception as exc:
            log.info("headless host page could not be emptied: %s", exc)
            host.broken = True
        host.owner = None
        if host.own_context is not None:  # a page that could reach the network: never reused
            with contextlib.suppress(Exception):
                await host.own_context.close()
            await host.gate.close()
        elif host.broken or self.closed or len(self._idle) >= MAX_IDLE_PAGES:
            with contextlib.suppress(Exception):  # already gone with its browser
                await host.page.close()
        else:
            self._idle.append(host)

    async def _shutdown(self) -> None:
        try:
            if self._browser is not None:
                await self._browser.close()
        finally:
            if self._playwright is not None:
                await self._playwright.stop()
            gate = getattr(self, "_gate", None)
            if gate is not None:
                await gate.close()

    def shutdown(self) -> None:
        """Close the browser and stop the loop (at exit, or for tests)."""
        if self.closed and not self.thread.is_alive():
            return
        self.closed = True
        if self.thread.is_alive():
            try:
                self.submit(self._shutdown()).result(timeout=CLOSE_WAIT_S)
            except Exception as exc:
                log.info("headless engine shutdown: %s", exc)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=CLOSE_WAIT_S)


def shutdown_engine() -> None:
    """Close the process's headless Chromium now (it restarts on the next HeadlessPage)."""
    with Engine._instance_lock:
        engine, Engine._instance = Engine._instance, None
    if engine is not None:
        engine.shutdown()


atexit.register(shutdown_engine)

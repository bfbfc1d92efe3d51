"""A tiny host page that plays the widget view's part for one target (docs/protocol.md, section 2).

The page is served by a stdlib HTTP server on 127.0.0.1 (a real origin, like a notebook's). It
creates ``<iframe sandbox="allow-scripts">`` with ``name`` = a fresh nonce set before the iframe is
inserted and ``srcdoc`` = ``splitbrain_widget.load_target(id).html`` (the registry injects the
target API and the CSP), accepts only ``{source: "splitbrain-target", nonce, ...}`` messages whose
``event.source`` is that iframe's window, and posts ``{source: "splitbrain-parent", nonce, type,
id, payload}`` into it with targetOrigin ``'*'``. ``window.host.apply(values)`` and friends return
promises of the replied state, matched by request id.

Used by the browser tests in this folder and by ``python -m benchmarks.target_fps``.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..browser_env import CHROMIUM_ARGS, chromium_path

DEFAULT_WIDTH = 800
DEFAULT_HEIGHT = 420
REQUEST_TIMEOUT_MS = 15_000

HOST_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>splitbrain target host</title>
<link rel="icon" href="data:,">
<style>
  html, body { margin: 0; background: #ffffff; }
  @media (prefers-color-scheme: dark) { html, body { background: #111111; } }
  #slot { padding: 10px; display: inline-block; }
  #slot iframe { display: block; border: 0; }
</style>
</head>
<body>
<div id="slot"></div>
<script>
(() => {
  "use strict";
  const TIMEOUT_MS = __TIMEOUT_MS__;
  const MAX_KEPT = 5000;
  let iframe = null;
  let nonce = "";
  let counter = 0;
  let onReady = null;
  const pending = new Map();

  function makeNonce() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const host = {
    ready: false,
    readyAt: null,
    states: [],     // every state message: {at, id, payload}
    errors: [],     // every error message: {at, id, error}
    ignored: 0,     // messages that were not from our iframe / nonce
    lastState: null,
    get nonce() { return nonce; },

    /** Put a target page in a fresh sandboxed iframe; resolves when it posts ready. */
    load(html, width, height) {
      for (const [, p] of pending) p.reject(new Error("target reloaded"));
      pending.clear();
      if (iframe) iframe.remove();
      host.ready = false;
      host.readyAt = null;
      host.states = [];
      host.errors = [];
      host.lastState = null;
      nonce = makeNonce();
      iframe = document.createElement("iframe");
      iframe.setAttribute("sandbox", "allow-scripts");
      iframe.name = nonce;                 // before insertion: the page reads it as window.name
      iframe.style.width = `${width}px`;
      iframe.style.height = `${height}px`;
      iframe.srcdoc = html;
      const ready = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the target did not post ready in time")), TIMEOUT_MS);
        onReady = () => { clearTimeout(timer); resolve(nonce); };
      });
      document.getElementById("slot").appendChild(iframe);
      return ready;
    },

    /** Post one request; resolves with the replied state, rejects on an error reply or timeout. */
    request(type, payload) {
      const id = `h${++counter}-${Math.random().toString(36).slice(2, 8)}`;
      const message = { source: "splitbrain-parent", nonce, type, id };
      if (payload !== undefined) message.payload = payload;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no reply to ${type} ${id} within ${TIMEOUT_MS} ms`));
        }, TIMEOUT_MS);
        pending.set(id, {
          resolve: (state) => { clearTimeout(timer); resolve(state); },
          reject: (err) => { clearTimeout(timer); reject(err); },
        });
        iframe.contentWindow.postMessage(message, "*");
      });
    },
    apply(values) { return host.request("apply", values); },
    reset(defaults) { return host.request("reset", defaults); },
    state() { return host.request("state"); },
    /** Unsolicited state messages (no id) received since `since` (performance.now()). */
    reportsSince(since) { return host.states.filter((s) => s.id === undefined && s.at >= since).length; },
  };

  window.addEventListener("message", (event) => {
    if (!iframe || event.source !== iframe.contentWindow) { host.ignored += 1; return; }
    const data = event.data;
    if (!data || typeof data !== "object" || data.source !== "splitbrain-target" || data.nonce !== nonce) {
      host.ignored += 1;
      return;
    }
    const waiting = typeof data.id === "string" ? pending.get(data.id) : undefined;
    if (waiting) pending.delete(data.id);
    if (data.type === "ready") {
      host.ready = true;
      host.readyAt = performance.now();
      if (onReady) onReady();
    } else if (data.type === "state") {
      host.lastState = data.payload;
      host.states.push({ at: performance.now(), id: data.id, payload: data.payload });
      if (host.states.length > MAX_KEPT) host.states.splice(0, host.states.length - MAX_KEPT);
      if (waiting) waiting.resolve(data.payload);
    } else if (data.type === "error") {
      host.errors.push({ at: performance.now(), id: data.id, error: data.error });
      if (waiting) waiting.reject(new Error(`${data.error.code}: ${data.error.message}`));
    }
  });
  window.host = host;
})();
</script>
</body>
</html>
""".replace("__TIMEOUT_MS__", str(REQUEST_TIMEOUT_MS))


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.split("?")[0] not in ("/", "/host.html"):
            self.send_response(204)  # nothing else lives here (not even a favicon): no console noise
            self.end_headers()
            return
        body = HOST_HTML.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _serving(handler: Any, name: str) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 (a free port) in a thread; yields the origin."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def host_server() -> Iterator[str]:
    """Serve the host page on 127.0.0.1 (a free port) in a thread; yields its URL."""
    with _serving(_Handler, "target-host") as origin:
        yield f"{origin}/host.html"


MCP_CLIENTS = Path(__file__).resolve().parents[1] / "mcp_clients"


@contextmanager
def apps_host_site(folder: Path) -> Iterator[str]:
    """A chat host that renders MCP Apps (``tests/mcp_clients/apps_host.mjs``: ext-apps' AppBridge with
    the official client), bundled by esbuild into ``folder`` and served from a loopback origin of its
    own; yields the origin (the page is ``<origin>/index.html``, its API ``window.appsHost``)."""
    esbuild = MCP_CLIENTS / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise RuntimeError(f"{esbuild} is missing: run `make mcp-clients` (npm ci in tests/mcp_clients)")
    subprocess.run(
        [
            str(esbuild),
            str(MCP_CLIENTS / "apps_host.mjs"),
            "--bundle",
            "--format=esm",
            f"--outfile={folder / 'host.js'}",
        ],
        check=True,
        capture_output=True,
    )
    (folder / "index.html").write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>apps host</title></head>'
        '<body><script type="module" src="host.js"></script></body></html>',
        encoding="utf-8",
    )
    with folder_server(folder) as origin:
        yield origin


@contextmanager
def folder_server(folder: Path) -> Iterator[str]:
    """Serve the files of ``folder`` on 127.0.0.1 (a free port) in a thread; yields the origin."""
    with _serving(functools.partial(_QuietFiles, directory=str(folder)), "folder-server") as origin:
        yield origin


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright (never a downloaded browser).

    Playwright's sync API runs one driver per thread: when this process already runs one (the
    session fixture of tests/browser, in ``pytest -m browser tests``), a second
    ``sync_playwright()`` refuses to start. Then this launches its own Chromium through that
    running instance instead.
    """
    from playwright.sync_api import Error, sync_playwright

    playwright = None
    try:
        playwright = sync_playwright().start()
        owner = playwright
    except Error as exc:
        if "inside the asyncio loop" not in str(exc):
            raise
        owner = None
    candidates = [playwright] if playwright is not None else _running_playwrights()
    browser = None
    problems = []
    for candidate in candidates:
        try:
            browser = candidate.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
            break
        except Exception as exc:  # a stopped instance: try the next one
            problems.append(str(exc).splitlines()[0])
    if browser is None:
        if owner is not None:
            owner.stop()
        raise RuntimeError(
            f"could not launch Chromium through Playwright: {problems or 'no running Playwright instance'}"
        )
    try:
        yield browser
    finally:
        browser.close()
        if owner is not None:
            owner.stop()


def _running_playwrights() -> list[Any]:
    """The sync Playwright instances alive in this process, newest first."""
    import gc

    from playwright.sync_api import Playwright

    return [obj for obj in gc.get_objects() if isinstance(obj, Playwright)][::-1]


class TargetHost:
    """Drives the host page of one Playwright page: load a target, send requests, read its frame."""

    def __init__(self, page: Any, url: str) -> None:
        self.page = page
        self.url = url
        self.nonce = ""
        self.target_id = ""
        self.console: list[str] = []
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda err: self.console.append(f"pageerror: {err}"))
        page.goto(url)
        page.wait_for_function("() => window.host !== undefined")

    def load(self, target_id: str, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT) -> dict[str, Any]:
        """Load a built-in target through the registry, wait for ready; returns its first state."""
        import splitbrain_widget as sb

        html = sb.load_target(target_id).html
        self.console.clear()
        try:
            self.nonce = self.page.evaluate("([h, w, ht]) => host.load(h, w, ht)", [html, width, height])
        except Exception as exc:
            raise AssertionError(f"{target_id} did not load: {exc}; console: {self.console}") from None
        self.target_id = target_id
        return self.state()

    def apply(self, values: dict[str, Any]) -> dict[str, Any]:
        """Post ``apply`` with these values; the replied state."""
        return dict(self.page.evaluate("(v) => host.apply(v)", values))

    def reset(self, defaults: dict[str, Any]) -> dict[str, Any]:
        """Post ``reset`` with these defaults; the replied state."""
        return dict(self.page.evaluate("(v) => host.reset(v)", defaults))

    def state(self) -> dict[str, Any]:
        """Post ``state``; the replied (fresh) state."""
        return dict(self.page.evaluate("() => host.state()"))

    def errors(self) -> list[Any]:
        """Every error message the target posted since it was loaded."""
        return list(self.page.evaluate("() => host.errors"))

    @property
    def frame(self) -> Any:
        """The target's frame (its iframe's content: the page takes its window.name, the nonce, as it loads)."""
        handle = self.iframe.element_handle(timeout=10_000)
        frame = handle.content_frame() if handle is not None else None
        if frame is None:
            raise AssertionError(f"no frame named {self.nonce} (target {self.target_id})")
        return frame

    @property
    def iframe(self) -> Any:
        return self.page.locator("#slot iframe")

    def dom_state(self) -> dict[str, Any]:
        """The state the page last reported, from ``document.body.dataset.state``."""
        import json

        return dict(json.loads(self.frame.evaluate("() => document.body.dataset.state")))

    def wait_state(
        self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float, what: str, poll_s: float = 0.1
    ) -> dict[str, Any]:
        """Ask for a fresh state until ``predicate(state)`` holds; fail with the last state at the deadline."""
        deadline = time.monotonic() + timeout_s
        state = self.state()
        while not predicate(state):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.target_id}: timed out after {timeout_s} s waiting for {what}; last state {state}"
                )
            self.page.wait_for_timeout(poll_s * 1000)
            state = self.state()
        return state

    def measure_fps(self, min_span_ms: float = 1900, timeout_s: float = 15) -> float:
        """The target's own frame rate: requestAnimationFrame callbacks counted over its last ~2 s."""
        self.frame.wait_for_function(f"() => window.__fpsSpan >= {min_span_ms}", timeout=timeout_s * 1000)
        return float(self.frame.evaluate("() => window.__fps"))

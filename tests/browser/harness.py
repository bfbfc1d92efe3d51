"""Real-browser harness: a Jupyter server (JupyterLab or Notebook 7) and a headless Chromium page.

Facts this relies on were measured on the project's reference machine and are written down in
BROWSER-TESTING.md / docs: Debian's ``/usr/bin/chromium`` driven by the Python ``playwright``
package (never ``playwright install``), one isolated Jupyter server per app, notebooks opened
with ``?reset``, and every wait a condition wait with a generous deadline.

The notebook is driven through the application object the server exposes in the page
(``window.jupyterapp``: ``--LabApp.expose_app_in_browser`` in JupyterLab,
``--JupyterNotebookApp.expose_app_in_browser`` in Notebook 7). Both apps use the same notebook
plugins, so one set of helpers works for both: cells are run with the ``notebook:run-cell``
command (its promise settles when the kernel's execute reply and idle status arrived) and outputs
are read from the cell models, not scraped from the DOM.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ..browser_env import CHROMIUM_ARGS, chromium_path, stop_process_group

# A test that runs in JupyterLab only (the ``server`` fixture's other app is Notebook 7).
LAB_ONLY = pytest.mark.parametrize("server", ["lab"], indirect=True)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SERVER_START_TIMEOUT_S = 60
OPEN_TIMEOUT_S = 60
CELL_TIMEOUT_S = 60
VIEW_READY_TIMEOUT_S = 45
APPS = ("lab", "notebook")
KERNEL_NAME = "splitbrain-test-python"
KERNEL_DISPLAY_NAME = "Python 3 (splitbrain test venv)"
APP_TITLES = {"lab": "JupyterLab", "notebook": "Notebook 7"}

T = TypeVar("T")

# (app, what, seconds): printed in the "browser timings" section of the pytest summary.
TIMINGS: list[tuple[str, str, float]] = []


def record_timing(app: str, what: str, seconds: float) -> None:
    TIMINGS.append((app, what, seconds))


# -- availability ----------------------------------------------------------------------------------


# -- waiting ---------------------------------------------------------------------------------------


class WaitTimeout(AssertionError):
    pass


def wait_for(
    condition: Callable[[], T],
    *,
    timeout: float,
    what: str,
    interval: float = 0.05,
    describe: Callable[[], str] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy; raise with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except WaitTimeout:
            raise
        except Exception as exc:  # transient: a page navigating, a frame being replaced
            last_error = exc
        if time.monotonic() > deadline:
            detail = ""
            if describe is not None:
                try:
                    detail = f"; last seen: {describe()}"
                except Exception as exc:
                    detail = f"; (describe failed: {exc})"
            if last_error is not None:
                detail += f"; last error: {last_error!r}"
            raise WaitTimeout(f"timed out after {timeout:g} s waiting for {what}{detail}")
        time.sleep(interval)


# -- the Jupyter server ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class JupyterServer:
    """One ``jupyter lab`` or ``jupyter notebook`` process, fully isolated under ``base``."""

    app: str
    base: Path
    port: int = 0
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    # the interpreter its kernels run: this venv's, or a venv of make kernel-matrix (an older ipykernel)
    kernel_python: str = sys.executable
    proc: subprocess.Popen[bytes] | None = None
    started_in_s: float = 0.0

    @property
    def root_dir(self) -> Path:
        return self.base / "root"

    @property
    def log_path(self) -> Path:
        return self.base / "server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def notebook_url(self, name: str) -> str:
        if self.app == "lab":
            return f"{self.url}/lab/tree/{name}?reset&token={self.token}"
        return f"{self.url}/notebooks/{name}?token={self.token}"

    def _prepare(self) -> dict[str, str]:
        for sub in ("root", "config", "data", "runtime", "ipython", "settings", "workspaces"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        # The kernel must import this checkout: a kernelspec of its own, pinned to this interpreter
        # (the venv that has splitbrain-widget installed editable). Overriding "python3" in the
        # isolated data dir does not work: in a venv, jupyter_core puts the env's share/jupyter
        # (with its own "python3" spec, argv "python") ahead of the user data dir.
        spec = self.base / "data" / "kernels" / KERNEL_NAME
        spec.mkdir(parents=True, exist_ok=True)
        kernel: dict[str, Any] = {
            "argv": [self.kernel_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNEL_DISPLAY_NAME,
            "language": "python",
            "metadata": {"debugger": False},
        }
        if self.kernel_python != sys.executable:  # another venv: it imports this checkout too
            kernel["env"] = {"PYTHONPATH": str(ROOT)}
        (spec / "kernel.json").write_text(json.dumps(kernel))
        if self.app == "lab":
            # No news / update prompts, no first-run notifications that steal focus.
            settings = self.base / "settings" / "@jupyterlab" / "apputils-extension"
            settings.mkdir(parents=True, exist_ok=True)
            (settings / "notification.jupyterlab-settings").write_text(
                json.dumps({"fetchNews": "false", "checkForUpdates": False})
            )
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.base / "config"),
            JUPYTER_DATA_DIR=str(self.base / "data"),
            JUPYTER_RUNTIME_DIR=str(self.base / "runtime"),
            IPYTHONDIR=str(self.base / "ipython"),
            PYTHONUNBUFFERED="1",
            JUPYTER_PLATFORM_DIRS="1",
        )
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_PREFER_ENV_PATH", None)
        env.pop("SPLITBRAIN_LESSON", None)  # a lesson of this machine's binds no test's kernel
        return env

    def _command(self) -> list[str]:
        app_class = "LabApp" if self.app == "lab" else "JupyterNotebookApp"
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            self.app,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--allow-root",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--{app_class}.expose_app_in_browser=True",
            f"--{app_class}.user_settings_dir={self.base / 'settings'}",
            f"--{app_class}.workspaces_dir={self.base / 'workspaces'}",
        ]
        if self.app == "lab":
            cmd += [
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
            ]
        return cmd

    def start(self) -> None:
        env = self._prepare()
        started = time.monotonic()
        for attempt in range(3):
            self.port = _free_port()
            log = self.log_path.open("ab")
            log.write(f"\n=== start attempt {attempt + 1}: {' '.join(self._command())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self._command(),
                cwd=self.root_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
            try:
                wait_for(self._up, timeout=SERVER_START_TIMEOUT_S, what=f"{self.app} server on port {self.port}")
                self.started_in_s = time.monotonic() - started
                return
            except AssertionError:
                self.stop()
                if attempt == 2:
                    raise AssertionError(
                        f"the {self.app} server did not start; log {self.log_path}:\n{self.log_tail()}"
                    ) from None

    def _up(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            raise WaitTimeout(f"the {self.app} server exited with {self.proc and self.proc.returncode}")
        try:
            self.api("GET", "/api/status", timeout=2)
            return True
        except (urllib.error.URLError, OSError):
            return False

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read()
        return json.loads(text) if text else None

    def shutdown_sessions(self, path: str | None = None) -> None:
        """Shut down the kernel sessions (of one notebook ``path``, or all) through the REST API."""
        try:
            sessions = self.api("GET", "/api/sessions")
        except Exception:
            return
        for session in sessions:
            if path is None or session.get("path") == path:
                with contextlib.suppress(Exception):
                    self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            self.shutdown_sessions()
            try:
                kernels = self.api("GET", "/api/kernels", timeout=3)
                for kernel in kernels:
                    self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=10)
            except Exception:
                pass
        stop_process_group(proc, 15)

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def log_offset(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, offset: int) -> str:
        try:
            with self.log_path.open("rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def write_notebook(self, name: str, cells: list[str]) -> str:
        """Write ``cells`` (code sources) as ``name`` in the server's root; return its path."""
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"cell-{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": source,
                }
                for i, source in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": KERNEL_DISPLAY_NAME, "language": "python", "name": KERNEL_NAME},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.root_dir / name).write_text(json.dumps(nb, indent=1))
        return name


# -- the page ----------------------------------------------------------------------------------------

# Functions evaluated in the top page. `P()` is the notebook panel of the current document.
_PRELUDE = """
const P = () => {
  const app = window.jupyterapp;
  if (!app) return null;
  const w = app.shell.currentWidget;
  return w && w.content && w.sessionContext && w.context ? w : null;
};
"""

_JS_KERNEL_STATUS = (
    "() => {"
    + _PRELUDE
    + """
  if (!window.jupyterapp) return "no jupyterapp";
  const p = P();
  if (!p) return "no notebook panel";
  if (!p.context.isReady) return "document not loaded";
  const sc = p.sessionContext;
  const dialog = document.querySelector(".jp-Dialog");
  if (dialog) return "dialog: " + dialog.textContent.slice(0, 120);
  if (!sc.isReady) return "session not ready";
  const k = sc.session && sc.session.kernel;
  if (!k) return "no kernel";
  if (k.connectionStatus !== "connected") return "kernel " + k.connectionStatus;
  if (k.status !== "idle") return "kernel " + k.status;
  if (sc.pendingInput) return "pending input";
  return "idle:" + k.name + ":" + k.id + ":" + p.content.widgets.length;
}"""
)

_JS_RUN_CELL = (
    "([index, key]) => {"
    + _PRELUDE
    + """
  const p = P();
  const nb = p.content;
  if (index >= nb.widgets.length) throw new Error("no cell " + index);
  nb.deselectAll();
  nb.activeCellIndex = index;
  window.__sbRuns = window.__sbRuns || {};
  window.__sbRuns[key] = { done: false };
  window.jupyterapp.commands.execute("notebook:run-cell").then(
    (value) => { window.__sbRuns[key] = { done: true, value: value === undefined ? null : value }; },
    (err) => { window.__sbRuns[key] = { done: true, error: String(err && err.stack || err) }; },
  );
  return key;
}"""
)

_JS_OUTPUTS = (
    "(index) => {"
    + _PRELUDE
    + """
  const cell = P().content.widgets[index];
  return { outputs: cell.model.outputs.toJSON(), execution_count: cell.model.executionCount };
}"""
)

# A per-message timeline of the page's kernel websockets, for diagnosing a hang: each message in or
# out is logged as "[ws +<ms>] <dir> <channel> <msg_type> <comm target/method> id=<msg_id> parent=<id>",
# and each console.error of the page on the same clock.
# Decodes the v1.kernel.websocket.jupyter.org binary framing and the plain JSON one.
WS_TRACE_SCRIPT = """
(() => {
  const t0 = performance.now();
  const dec = new TextDecoder();
  function parse(data) {
    try {
      if (typeof data === 'string') { const m = JSON.parse(data); return [m.channel, m]; }
      const buf = data instanceof ArrayBuffer ? data : data.buffer;
      const view = new DataView(buf);
      const n = Number(view.getBigUint64(0, true));
      const offsets = [];
      for (let i = 1; i <= n; i++) offsets.push(Number(view.getBigUint64(8 * i, true)));
      const part = (i) => dec.decode(new Uint8Array(buf, offsets[i], (offsets[i + 1] ?? buf.byteLength) - offsets[i]));
      const channel = part(0);
      return [channel, { header: JSON.parse(part(1)), parent_header: JSON.parse(part(2)), content: JSON.parse(part(4)) }];
    } catch (e) { return [null, null]; }
  }
  function line(dir, data) {
    const [channel, m] = parse(data);
    if (!m) return `${dir} (undecoded ${data && (data.byteLength ?? data.length)} bytes)`;
    const c = m.content || {};
    const extra = [c.target_name, c.data && c.data.method, c.execution_state, c.comm_id && c.comm_id.slice(0, 8)]
      .filter(Boolean).join(' ');
    return `${dir} ${channel} ${m.header.msg_type} ${extra} id=${(m.header.msg_id || '').slice(0, 8)} ` +
      `parent=${((m.parent_header || {}).msg_id || '').slice(0, 8)}`;
  }
  const log = (text) => console.debug(`[ws +${Math.round(performance.now() - t0)}] ${text}`);
  const nativeError = console.error;
  console.error = (...args) => { log(`console.error ${String(args[0]).slice(0, 120)}`); nativeError.apply(console, args); };
  // main-thread tasks over 50 ms, with the frame whose script ran (a target iframe's name is its nonce)
  if (window.top === window && typeof PerformanceObserver === 'function') {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          const a = (e.attribution || [])[0] || {};
          log(`long task ${Math.round(e.duration)} ms from +${Math.round(e.startTime - t0)} ` +
            `(${e.name}; ${a.containerType || ''} ${(a.containerName || '').slice(0, 8)} ${a.containerSrc || ''})`);
        }
      }).observe({ type: 'longtask', buffered: true });
    } catch (e) { /* no longtask support */ }
  }
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      if (!String(url).includes('/channels')) return;
      log(`open ${String(url).split('?')[0].split('/api/')[1]}`);
      this.addEventListener('message', (ev) => log(line('<-', ev.data)));
      this.addEventListener('close', () => log('closed'));
    }
    send(data) {
      if (String(this.url).includes('/channels')) log(line('->', data));
      return super.send(data);
    }
  };
})();
"""

_JS_OUTPUT_AREA = (
    "(index) => {"
    + _PRELUDE
    + """
  const cell = P().content.widgets[index];
  const area = cell.node.querySelector('.jp-OutputArea');
  const kinds = cell.model.outputs.toJSON().map((o) => o.output_type + ':' + Object.keys(o.data || {}).join('+'));
  return { kinds, text: area ? area.textContent.trim().slice(0, 200) : null };
}"""
)

_JS_MARK_CELLS = (
    "() => {"
    + _PRELUDE
    + """
  const p = P();
  if (!p) return 0;
  p.content.widgets.forEach((cell, i) => { cell.node.dataset.sbCell = String(i); });
  return p.content.widgets.length;
}"""
)


def output_text(outputs: list[dict[str, Any]]) -> str:
    """Stream text and error lines of a cell's outputs (not the widget's text/plain repr)."""
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = out.get("text", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
    return "".join(parts)


class NotebookPage:
    """One notebook open in one Playwright page, driven through ``window.jupyterapp``."""

    def __init__(self, page: Any, server: JupyterServer, name: str, cells: list[str]) -> None:
        self.page = page
        self.server = server
        self.name = name
        self.cells = cells
        self._runs = 0
        self.timings: dict[str, float] = {}

    # -- opening and the kernel -------------------------------------------------------------

    def open(self) -> NotebookPage:
        started = time.monotonic()
        self.page.goto(
            self.server.notebook_url(self.name), wait_until="domcontentloaded", timeout=OPEN_TIMEOUT_S * 1000
        )
        self.wait_kernel_idle()
        self.timings["open_to_kernel_idle_s"] = time.monotonic() - started
        return self

    def reload(self) -> NotebookPage:
        started = time.monotonic()
        self.page.reload(wait_until="domcontentloaded", timeout=OPEN_TIMEOUT_S * 1000)
        self.wait_kernel_idle()
        self.timings["reload_to_kernel_idle_s"] = time.monotonic() - started
        return self

    def kernel_status(self) -> str:
        return str(self.page.evaluate(_JS_KERNEL_STATUS))

    def wait_kernel_idle(self, timeout: float = OPEN_TIMEOUT_S) -> str:
        """Wait for a real kernel (a name and an id) that stays idle, accepting a "Select Kernel" dialog.

        The status can read idle before any kernel exists; running a cell then opens the dialog
        and the run never starts. So: a kernel object, connected, idle on several polls in a row.
        """
        stable: list[str] = []

        def idle() -> bool:
            status = self.kernel_status()
            if status.startswith("dialog"):
                stable.clear()
                accept = self.page.locator(".jp-Dialog .jp-mod-accept")
                if accept.count():
                    accept.first.click()
                return False
            if not status.startswith("idle:"):
                stable.clear()
                return False
            _, name, _, cells = status.split(":")
            if name != KERNEL_NAME:
                raise WaitTimeout(f"the notebook started kernel {name!r}, not {KERNEL_NAME!r} (this venv's)")
            if cells != str(len(self.cells)):
                stable.clear()
                return False
            stable.append(status)
            return len(stable) >= 4 and len(set(stable[-4:])) == 1

        wait_for(idle, timeout=timeout, interval=0.15, what="an idle kernel", describe=self.kernel_status)
        return stable[-1]

    # -- cells --------------------------------------------------------------------------------

    def start_cell(self, index: int) -> str:
        """Start running cell ``index`` (queued behind any running cell); return a key for :meth:`wait_cell`."""
        self._runs += 1
        key = f"run-{self._runs}"
        self.page.evaluate(_JS_RUN_CELL, [index, key])
        return key

    def wait_cell(self, key: str, index: int, timeout: float = CELL_TIMEOUT_S) -> str:
        """Wait until the run ``key`` finished; return the cell's stream/error text."""

        def done() -> dict[str, Any] | None:
            run = self.page.evaluate("(key) => (window.__sbRuns || {})[key] || null", key)
            return run if run and run.get("done") else None

        run = wait_for(
            done,
            timeout=timeout,
            interval=0.05,
            what=f"cell {index} to finish running",
            describe=lambda: f"kernel {self.kernel_status()}; output so far: {self.output(index)!r}",
        )
        if run.get("error"):
            raise AssertionError(f"running cell {index} failed in the page: {run['error']}")
        return self.output(index)

    def run_cell(self, index: int, timeout: float = CELL_TIMEOUT_S) -> str:
        return self.wait_cell(self.start_cell(index), index, timeout)

    def run_all(self, timeout: float = CELL_TIMEOUT_S) -> list[str]:
        keys = [self.start_cell(i) for i in range(len(self.cells))]
        return [self.wait_cell(key, i, timeout) for i, key in enumerate(keys)]

    def outputs(self, index: int) -> list[dict[str, Any]]:
        return list(self.page.evaluate(_JS_OUTPUTS, index)["outputs"])

    def output(self, index: int) -> str:
        return output_text(self.outputs(index))

    def output_area(self, index: int) -> str:
        """What cell ``index``'s outputs are (type and mime types) and what its output area shows."""
        found = self.page.evaluate(_JS_OUTPUT_AREA, index)
        return f"outputs {found['kinds']}, output area text {found['text']!r}"

    def expect_output(self, index: int, text: str, key: str | None = None) -> str:
        """Assert that cell ``index`` printed ``text`` and raised nothing."""
        out = self.output(index) if key is None else self.wait_cell(key, index)
        errors = [o for o in self.outputs(index) if o.get("output_type") == "error"]
        assert not errors, f"cell {index} raised:\n{out}\n" + "\n".join(
            "\n".join(e.get("traceback", [])) for e in errors
        )
        assert text in out, f"cell {index}: expected {text!r} in its output, got:\n{out}"
        return out

    def save(self) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        wait_for(
            lambda: self.page.evaluate(
                "() => { const w = window.jupyterapp.shell.currentWidget; return w && w.context && !w.context.model.dirty; }"
            ),
            timeout=30,
            what="the notebook to be saved",
        )

    # -- widget views -------------------------------------------------------------------------

    def mark_cells(self) -> int:
        return int(self.page.evaluate(_JS_MARK_CELLS))

    def views(self, cell: int) -> Any:
        """The ``.splitbrain-view`` roots rendered in cell ``cell``'s outputs."""
        self.mark_cells()
        return self.page.locator(
            f'.jp-NotebookPanel:not(.lm-mod-hidden) [data-sb-cell="{cell}"] .jp-OutputArea .splitbrain-view'
        )

    def view_status(self, cell: int, nth: int = 0) -> str | None:
        views = self.views(cell)
        if views.count() <= nth:
            return None
        return views.nth(nth).get_attribute("data-status")

    def wait_view(
        self, cell: int, nth: int = 0, status: str | tuple[str, ...] = "ready", timeout: float = VIEW_READY_TIMEOUT_S
    ) -> Any:
        """Wait until view ``nth`` of cell ``cell`` has ``data-status`` in ``status``; return its locator.

        The view (js/view/widget.js) sets ``data-status`` on its ``.splitbrain-view`` root: "loading",
        then "ready" when its target called ``SplitBrain.ready()``, or "error".
        """
        wanted = (status,) if isinstance(status, str) else status
        wait_for(
            lambda: self.view_status(cell, nth) in wanted,
            timeout=timeout,
            interval=0.05,
            what=f"view {nth} of cell {cell} to be {status}",
            describe=lambda: (
                f"status {self.view_status(cell, nth)!r}, {self.views(cell).count()} view(s); "
                f"cell output {self.output(cell)!r}; {self.output_area(cell)}"
            ),
        )
        return self.views(cell).nth(nth)

    def iframe(self, cell: int, nth: int = 0) -> Any:
        """The view's own iframe: its sandbox frame (js/host/sandbox.js), which holds the target's iframe."""
        return self.views(cell).nth(nth).locator("iframe")

    def target_iframe(self, cell: int, nth: int = 0) -> Any:
        """The target's iframe inside the view's sandbox frame (a Playwright Locator)."""
        return self.iframe(cell, nth).content_frame.locator(TARGET_IFRAME)

    def frame(self, cell: int, nth: int = 0) -> Any:
        """The target page of view ``nth`` in cell ``cell`` (a Playwright Frame)."""

        def content_frame() -> Any:
            handle = self.target_iframe(cell, nth).element_handle(timeout=5000)
            return handle.content_frame() if handle else None

        return wait_for(content_frame, timeout=30, what=f"the target iframe of view {nth} in cell {cell}")

    def frame_dataset(self, cell: int, nth: int = 0) -> dict[str, str]:
        """``document.body.dataset`` inside the sandboxed target page, read through ``frame_locator``."""
        selector = (
            f'.jp-NotebookPanel:not(.lm-mod-hidden) [data-sb-cell="{cell}"] .jp-OutputArea '
            f".splitbrain-view >> nth={nth} >> iframe"
        )
        self.mark_cells()
        body = self.page.frame_locator(selector).frame_locator(TARGET_IFRAME).locator("body")
        return dict(body.evaluate("(b) => ({ ...b.dataset })", timeout=5000))

    def wait_frame_value(self, cell: int, key: str, value: str, nth: int = 0, timeout: float = 30) -> dict[str, str]:
        """Wait until the target page's ``body.dataset[key] == value``."""
        seen: dict[str, Any] = {}

        def check() -> dict[str, str] | None:
            data = self.frame_dataset(cell, nth)
            seen["last"] = data
            return data if data.get(key) == value else None

        return wait_for(
            check,
            timeout=timeout,
            what=f"body.dataset.{key} == {value!r} in the target of view {nth}, cell {cell}",
            describe=lambda: repr(seen.get("last")),
        )

    def nonce(self, cell: int, nth: int = 0) -> str:
        """The target's nonce: the view's sandbox frame hands it to the page as its iframe's ``name``."""
        name = self.target_iframe(cell, nth).get_attribute("name", timeout=5000)
        assert name, "the target's iframe has no name (nonce)"
        return str(name)


@contextlib.contextmanager
def notebook_session(
    cells: list[str], app: str = "lab", name: str = "session.ipynb", viewport: dict[str, int] | None = None
) -> Iterator[NotebookPage]:
    """An isolated Jupyter server, headless Chromium, and a notebook of ``cells`` opened in it
    (for the benchmarks; the tests use the fixtures of conftest.py). ``viewport`` (``{"width": ...,
    "height": ...}``, default Playwright's 1280x720): a page tall enough to show every view, where
    a view's frame rate counts (Chromium draws no frames in an iframe scrolled out of sight)."""
    import tempfile

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="sb-session-") as base:
        server = JupyterServer(app, Path(base))
        server.start()
        try:
            server.write_notebook(name, cells)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                try:
                    yield NotebookPage(browser.new_page(viewport=viewport), server, name, cells).open()
                finally:
                    browser.close()
        finally:
            server.shutdown_sessions()
            server.stop()


TARGET_IFRAME = "iframe[data-splitbrain-target]"  # js/host/frame.js marks the target's iframe


@dataclass
class ConsoleLog:
    """Console messages and page errors of a page and all its frames."""

    lines: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        page.on("console", lambda msg: self.lines.append(f"[{msg.type}] {msg.text} ({_where(msg)})"))
        page.on("pageerror", lambda err: self.lines.append(f"[pageerror] {err}\n{getattr(err, 'stack', '')}"))
        page.on("crash", lambda _p: self.lines.append("[crash] the page crashed"))

    def csp_violations(self) -> list[str]:
        return [line for line in self.lines if "Content Security Policy" in line or "Content-Security-Policy" in line]


def _where(msg: Any) -> str:
    try:
        loc = msg.location
        return f"{loc.get('url', '')[:80]}:{loc.get('lineNumber', '')}"
    except Exception:
        return "?"


def save_artifacts(name: str, page: Any, console: ConsoleLog, server: JupyterServer | None, log_from: int) -> Path:
    """Screenshot, console log and server log of a failed test under ``test-artifacts/<name>/``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:150]
    folder = ARTIFACTS / safe
    folder.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(folder / "screenshot.png"), full_page=True, timeout=15000)
    except Exception as exc:
        (folder / "screenshot-failed.txt").write_text(repr(exc))
    (folder / "console.log").write_text("\n".join(console.lines) + "\n")
    if server is not None:
        (folder / "server.log").write_text(server.log_since(log_from))
        with contextlib.suppress(OSError):
            shutil.copy(server.log_path, folder / "server-full.log")
    return folder

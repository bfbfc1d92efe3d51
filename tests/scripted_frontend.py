"""A scripted frontend: a real ipykernel driven through jupyter_client, with fake views.

The test plays the notebook page. It executes cells, watches IOPub for widget comms and requests,
and answers on the shell channel exactly as ``js/view/widget.js`` would (docs/protocol.md). Everything
runs on the test's thread: jupyter_client's sockets are not thread-safe.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parent.parent
IOPUB_GRACE_S = 5.0  # after a cell's execute_reply, how long its idle status may take on IOPub


@dataclass
class FakeView:
    """What one rendered view would do: relay requests to a (simulated) target and reply."""

    view_id: str
    comm_id: str
    ready: bool = False
    values: dict[str, Any] = field(default_factory=dict)
    applied_ids: list[str] = field(default_factory=list)
    queued: list[dict[str, Any]] = field(default_factory=list)
    # How the simulated target behaves: "ok", "silent" (never answers), "throw".
    behaviour: str = "ok"
    delay_s: float = 0.0

    def state(self) -> dict[str, Any]:
        return {**self.values, "view": self.view_id}


@dataclass
class CellResult:
    stdout: str
    outputs: list[dict[str, Any]]
    error: dict[str, Any] | None
    requests_seen: list[dict[str, Any]]
    status_parents: list[str]
    updates: list[dict[str, Any]] = field(default_factory=list)  # update_display_data contents


class ScriptedFrontend:
    """Start a kernel with ``python`` and act as its only frontend."""

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="sb-kernel-")
        spec_dir = Path(self._tmp.name) / "kernels" / "sbtest"
        spec_dir.mkdir(parents=True)
        spec = {
            "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "splitbrain test",
            "language": "python",
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        ksm = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)])
        # IPC sockets in this frontend's own folder, not TCP ports: jupyter_client picks a "free" TCP
        # port by binding and closing it, and the kernel binds it later, so two test processes
        # starting kernels at once (make kernel-matrix runs its releases side by side) can pick the
        # same port ("Address already in use", seen in CI). A path of our own cannot be taken.
        self.km = KernelManager(
            kernel_name="sbtest", kernel_spec_manager=ksm, transport="ipc", ip=str(Path(self._tmp.name) / "k")
        )
        kernel_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.km.start_kernel(env=kernel_env, cwd=str(ROOT))
        self.kc = self.km.client()
        # The test reads IOPub only while a cell runs; jupyter_server reads it all the time. An
        # unbounded receive queue (ZeroMQ's default high-water mark is 1000, past which a PUB socket
        # drops) keeps messages published between cells, so this frontend misses nothing a server would not.
        self.kc.context.setsockopt(zmq.RCVHWM, 0)
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.comms: dict[str, dict[str, Any]] = {}  # comm_id -> last known model state
        self.views: dict[str, FakeView] = {}
        self.timers: list[tuple[float, Callable[[], None]]] = []
        self.sent_reply_ids: list[str] = []
        self.updates: collections.Counter[str] = collections.Counter()  # trait name -> update messages seen
        self.missed_idle: list[str] = []  # cells whose execute_reply came but whose IOPub idle never did
        # How each cell is rewritten before it runs (tests/kernel_python.awaiting_where_needed, say); None: as given.
        self.rewrite: Callable[[str], str] | None = None

    # -- cells --------------------------------------------------------------------------------

    def run(
        self, code: str, timeout: float = 60, interrupt_after: float | None = None, *, allow_stdin: bool = True
    ) -> CellResult:
        """Execute a cell, serving the widget views while it runs; return its output. ``allow_stdin``
        as a notebook sends it (JupyterLab: true); false as a runner (nbclient, nbval) does.

        As nbclient does, the cell ends when both its idle status (IOPub) and its execute_reply
        (shell) have come, so the next request never races the kernel's sending of this reply.
        """
        if self.rewrite is not None:
            code = self.rewrite(code)
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=allow_stdin)
        stdout: list[str] = []
        outputs: list[dict[str, Any]] = []
        error: dict[str, Any] | None = None
        requests: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        status_parents: list[str] = []
        started = time.monotonic()
        deadline = started + timeout
        interrupted = False
        replied_at: float | None = None
        idle = False
        while True:
            self._fire_timers()
            if interrupt_after is not None and not interrupted and time.monotonic() > started + interrupt_after:
                self.km.interrupt_kernel()
                interrupted = True
            if replied_at is None and self._execute_replied(msg_id):
                replied_at = time.monotonic()
            if idle and replied_at is not None:
                break
            if replied_at is not None and time.monotonic() > replied_at + IOPUB_GRACE_S:
                # As nbclient does (iopub_timeout): the cell ended (its execute_reply came), but its idle
                # status never arrived on IOPub. Say so; the test's own checks judge what did arrive.
                self.missed_idle.append(code)
                warnings.warn(
                    f"no IOPub idle status within {IOPUB_GRACE_S} s of the execute_reply for: {code[:80]!r}",
                    stacklevel=2,
                )
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    "(the kernel's execute_reply did not arrive on the shell channel either) "
                    f"cell did not finish within {timeout} s:\n{code}\nstdout so far: {''.join(stdout)}\n"
                    f"requests seen: {len(requests)}, replies sent: {len(self.sent_reply_ids)}\n"
                    f"{self.stranded_probe(msg_id)}\n{self.thread_dump()}"
                )
            try:
                msg = self.kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            kind = msg["header"]["msg_type"]
            parent_id = msg["parent_header"].get("msg_id")
            content = msg["content"]
            if kind == "status":
                status_parents.append(f"{content['execution_state']}:{msg['parent_header'].get('msg_type', '')}")
                if parent_id == msg_id and content["execution_state"] == "idle":
                    idle = True
                    if replied_at is None and self._execute_replied(msg_id, max(0.0, deadline - time.monotonic())):
                        replied_at = time.monotonic()
                continue
            if kind == "comm_open":
                self.comms[content["comm_id"]] = dict(content["data"].get("state", {}))
            elif kind == "comm_msg":
                request = self._on_comm_msg(content)
                if request is not None:
                    requests.append(request)
            if parent_id != msg_id:
                continue
            if kind == "stream":
                stdout.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                outputs.append(content)
            elif kind == "update_display_data":
                updates.append(content)
            elif kind == "error":
                error = content
        return CellResult("".join(stdout), outputs, error, requests, status_parents, updates)

    def _execute_replied(self, msg_id: str, wait_s: float = 0.0) -> bool:
        """Whether the kernel's execute_reply to ``msg_id`` came back on the shell channel within
        ``wait_s`` (drains the channel)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False
            if reply["parent_header"].get("msg_id") == msg_id:
                return True

    def stranded_probe(self, msg_id: str, wait_s: float = 10.0) -> str:
        """Whether a request of ours sits unread in the kernel's shell socket (for a cell that hangs).

        ipykernel 7.0-7.3 wrote shell replies raw on the ROUTER that a ZMQStream reads, which can
        consume the stream's edge-triggered wake-up: a request that arrived then stays unread until
        something else wakes the socket, such as a new connection (ipython/ipykernel#1554, fixed in
        7.4 by #1529). Connect a second client, ask it for kernel_info, and see whether the cell's
        execute_reply then comes.
        """
        from jupyter_client.session import Session

        probe = self.km.client(
            session=Session(key=self.km.session.key, signature_scheme=self.km.session.signature_scheme)
        )
        probe.start_channels()
        try:
            probe.kernel_info()
            if self._execute_replied(msg_id, wait_s):
                return (
                    "stranded request: the execute_reply came only after a second client connected, so the"
                    " execute_request had sat unread in the kernel's shell socket (ipython/ipykernel#1554)"
                )
            return f"not a stranded request: no execute_reply within {wait_s} s of a second client connecting"
        finally:
            probe.stop_channels()

    def thread_dump(self) -> str:
        """Every thread of the kernel, as py-spy sees it (for a cell that hangs), or why there is none."""
        import shutil
        import subprocess

        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None) or getattr(
            getattr(self.km.provisioner, "process", None), "pid", None
        )
        if not Path(spy).exists() or pid is None:
            return "(no thread dump: py-spy is not installed)"
        try:
            dump = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"(no thread dump: {exc})"
        return "kernel threads (py-spy dump):\n" + dump.stdout + dump.stderr

    def check(self, code: str, timeout: float = 60) -> str:
        """Run a cell that must not fail; return its stdout."""
        result = self.run(code, timeout)
        if result.error is not None:
            raise AssertionError(
                f"cell failed: {result.error['ename']}: {result.error['evalue']}\n"
                + "\n".join(result.error["traceback"])
            )
        return result.stdout

    def widget_comm(self) -> str:
        """The comm id of the most recently opened TargetWidget."""
        for comm_id, state in reversed(list(self.comms.items())):
            if "target_id" in state:
                return comm_id
        raise AssertionError("no TargetWidget comm was opened")

    # -- views --------------------------------------------------------------------------------

    def attach(self, comm_id: str, view_id: str, *, ready: bool = True, protocol: int = 1) -> FakeView:
        """Render a view: announce it, and (optionally) its target's ready."""
        view = FakeView(view_id, comm_id, values=dict(self.comms[comm_id].get("values", {})))
        self.views[view_id] = view
        self.send_custom(
            comm_id, {"kind": "event", "view_id": view_id, "type": "attached", "payload": {"protocol": protocol}}
        )
        if ready:
            self.make_ready(view)
        return view

    def make_ready(self, view: FakeView) -> None:
        view.ready = True
        self.send_custom(view.comm_id, {"kind": "event", "view_id": view.view_id, "type": "ready"})
        for request in view.queued:
            self._serve(view, request)
        view.queued.clear()

    def detach(self, view: FakeView) -> None:
        self.views.pop(view.view_id, None)
        self.send_custom(view.comm_id, {"kind": "event", "view_id": view.view_id, "type": "detached"})

    def request_state(self, comm_id: str) -> None:
        """Ask the kernel for the widget's whole state, as a reloaded page's widget manager does."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "request_state"}})
        self.kc.shell_channel.send(msg)
        self.run("pass")  # the kernel answers on its main loop, before this cell

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> str:
        """Send one anywidget custom message to the kernel; returns its msg_id."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def reply(self, view: FakeView, request_id: str, state: dict[str, Any] | None = None) -> None:
        self.sent_reply_ids.append(request_id)
        self.send_custom(
            view.comm_id,
            {"kind": "reply", "id": request_id, "view_id": view.view_id, "ok": True, "state": state or view.state()},
        )

    def after(self, seconds: float, fn: Callable[[], None]) -> None:
        self.timers.append((time.monotonic() + seconds, fn))

    def _fire_timers(self) -> None:
        now = time.monotonic()
        due = [t for t in self.timers if t[0] <= now]
        self.timers = [t for t in self.timers if t[0] > now]
        for _, fn in due:
            fn()

    def _on_comm_msg(self, content: dict[str, Any]) -> dict[str, Any] | None:
        data = content.get("data", {})
        comm_id = content["comm_id"]
        if data.get("method") == "update":
            self.comms.setdefault(comm_id, {}).update(data.get("state", {}))
            self.updates.update(data.get("state", {}).keys())
            return None
        if data.get("method") != "custom":
            return None
        request = data.get("content", {})
        if request.get("kind") != "request":
            return None
        for view in list(self.views.values()):
            if view.comm_id != comm_id:
                continue
            if not view.ready:
                view.queued.append(request)
            else:
                self._serve(view, request)
        return request

    def _serve(self, view: FakeView, request: dict[str, Any]) -> None:
        if request["id"] in view.applied_ids:
            return
        view.applied_ids.append(request["id"])
        if request["op"] in ("apply", "reset"):
            if request["op"] == "reset":
                view.values = {}
            view.values.update(request["payload"].get("values", {}))
        if view.behaviour == "silent":
            return
        if view.behaviour == "throw":
            content = {
                "kind": "reply",
                "id": request["id"],
                "view_id": view.view_id,
                "ok": False,
                "error": {"code": "target_error", "message": "TypeError: boom in onApply"},
            }
            self.send_custom(view.comm_id, content)
            return
        if view.delay_s:
            self.after(view.delay_s, lambda: self.reply(view, request["id"]))
        else:
            self.reply(view, request["id"])

    def close(self) -> None:
        try:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
        finally:
            self._tmp.cleanup()

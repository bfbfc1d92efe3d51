"""The chat panel's kernel side: runs the agent for typed messages, streams its events, keeps the transcript.

Messages from the panel arrive on whatever thread handles comm messages (often the shell-channel
thread, while another cell runs), so every entry point here only starts or signals a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

from ..agent._tools import call_label
from ..core import _kernel_tap
from ..core._audit import INSPECTOR, call_source
from ..core._lesson import LessonError, current_lesson
from ..core._platform import start_background
from ..core._secrets import redact
from ..protocol import ProtocolError, approval_closed, approval_request, chat_event, code_message

if TYPE_CHECKING:
    from ..agent import Agent
    from ..widget import TargetWidget

log = logging.getLogger("splitbrain_widget.chat")

MAX_TRANSCRIPT = 200  # entries kept in the synced trait
APPROVAL_TIMEOUT_S = 300.0


class ChatController:
    """Owns the agent a widget's chat panel talks to."""

    def __init__(self, sim: TargetWidget, agent: Agent | None = None) -> None:
        self.sim = sim
        self.agent = agent
        self._worker: threading.Thread | None = None
        self._task: asyncio.Future[None] | None = None  # the answer being written, in the browser
        self._lock = threading.Lock()
        self._approvals: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[bool]]] = {}
        self._approval_counter = 0

    # -- entry points (any thread) --------------------------------------------------------------

    def on_chat(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        with self._lock:
            if self.busy():
                self._send_event({"kind": "busy", "text": "still answering the previous message; press Stop first"})
                return
            started = start_background("splitbrain-chat", lambda: self._answer(text), lambda: self._aanswer(text))
            if isinstance(started, threading.Thread):
                self._worker = started
            else:  # in the browser: a task on Pyodide's loop
                self._task = started

    def on_cancel(self) -> None:
        if self.agent is not None:
            self.agent.cancel()
        for loop, future in list(self._approvals.values()):
            loop.call_soon_threadsafe(_resolve, future, False)

    def on_skip_wait(self) -> None:
        if self.agent is not None:
            self.agent.skip_wait()

    def on_approval(self, approval_id: str, approved: bool) -> None:
        entry = self._approvals.get(approval_id)
        if entry is not None:
            loop, future = entry
            loop.call_soon_threadsafe(_resolve, future, approved)

    def on_set(self, values: dict[str, Any]) -> None:
        """A control in the panel moved: apply it like any other call (validated, audited)."""
        self._start_control("set", values)

    def on_act(self, name: str) -> None:
        """An action's button in the panel: run it like any other call (validated, audited)."""
        self._start_control("act", name)

    def _start_control(self, what: str, argument: Any) -> None:
        start_background(
            "splitbrain-control", lambda: self._control(what, argument), lambda: self._acontrol(what, argument)
        )

    def on_copy_code(self) -> None:
        """The panel's "Copy as code": send it ``sim.audit.to_code()`` (bounded) to put on the clipboard."""
        try:
            message = code_message(self.sim.audit.to_code())
        except Exception:  # the panel must get an answer; a bug here must not reach the comm thread
            log.exception("could not write the audit as code")
            message = code_message("# could not write the calls as code; see the kernel's log")
        try:
            self.sim.send(message)
        except Exception:
            log.debug("could not send the code", exc_info=True)

    def busy(self) -> bool:
        if self._task is not None and not self._task.done():
            return True
        return self._worker is not None and self._worker.is_alive()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return not self.busy()

    # -- approval (called from the agent's tool, on its event loop) ------------------------------

    async def approve(self, tool: str, arguments: dict[str, Any], asking: list[str]) -> tuple[bool, str]:
        """Ask the panel to approve a change; (approved, why). The widget's ``ask_approval`` calls
        this only where a notebook view shows the panel."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        with self._lock:
            self._approval_counter += 1
            approval_id = f"a{self._approval_counter}"
            self._approvals[approval_id] = (loop, future)
        self.sim.send(approval_request(approval_id, tool, arguments, asking, call_label(tool, arguments)))
        try:
            approved = await asyncio.wait_for(future, APPROVAL_TIMEOUT_S)
        except TimeoutError:
            return False, f"nobody approved within {APPROVAL_TIMEOUT_S:g} s"
        finally:
            self._approvals.pop(approval_id, None)
            self.sim.send(approval_closed(approval_id))
        return approved, "approved by the user" if approved else "the user denied this change"

    # -- work ------------------------------------------------------------------------------------

    def show_lesson(self) -> None:
        """Tell the panel which lesson policy is in force and what it allows (or that it cannot be read)."""
        try:
            lesson = current_lesson()
        except LessonError as exc:
            self.sim.chat_lesson = f"Lesson policy cannot be read: {exc}"
            return
        self.sim.chat_lesson = "" if lesson is None else f"Lesson policy ({lesson.source}): {lesson.summary()}"

    def _answer(self, text: str) -> None:
        """The chat's worker thread: the answer on an event loop of its own."""
        _kernel_tap.prepare_thread()  # ipykernel 7.0: this thread's first trait send needs the parent set
        asyncio.run(self._aanswer(text))

    async def _aanswer(self, text: str) -> None:
        from ..agent import Agent

        self.show_lesson()  # a policy put in place or edited since the panel opened

        if self.agent is None:
            try:
                self.agent = Agent(self.sim)
            except Exception as exc:
                self._append({"role": "error", "text": f"could not start the agent: {exc}"})
                return
        self.sim.chat_model = self.agent.model
        self._append({"role": "user", "text": text})
        self.sim.chat_busy = True
        try:
            with call_source(f"chat: {text}"):  # Agent.aask carries it to its run's tool calls
                result = await self.agent.aask(text, on_event=self._on_event)
            entry: dict[str, Any] = {"role": "assistant", "text": result.text, "model": result.model}
            if result.stopped:
                entry["stopped"] = result.stopped
            if result.no_change:  # shown beside the chips: what the page applied, not what the model said
                entry["no_change"] = True
            self._append(entry)
        except Exception as exc:  # the panel must always get an answer
            log.exception("chat run failed")
            self._append({"role": "error", "text": f"the agent failed: {type(exc).__name__}: {exc}"})
        finally:
            self.sim.chat_busy = False
            self.sim.chat_model = self.agent.model if self.agent else ""

    def _control(self, what: str, argument: Any) -> None:
        """A panel control's worker thread: the call on an event loop of its own."""
        _kernel_tap.prepare_thread()
        asyncio.run(self._acontrol(what, argument))

    async def _acontrol(self, what: str, argument: Any) -> None:
        """Run a panel control's call as the inspector's; a failure goes back to the panel as a ``control_error``."""
        with call_source(INSPECTOR):
            result = await (self.sim.aset_parameters(argument) if what == "set" else self.sim.aact(argument))
        if not result.ok and result.error is not None:
            self._send_event({"kind": "control_error", "text": str(result)})

    def _on_event(self, event: Any) -> None:
        payload = asdict(event) if is_dataclass(event) and not isinstance(event, type) else {"kind": str(event)}
        if payload.get("kind") == "done":
            return  # the assistant entry in the transcript says it
        if payload.get("kind") == "tool_finished":
            self._append(
                {
                    "role": "tool",
                    "id": payload["call_id"],
                    "name": payload["name"],
                    "arguments": payload["arguments"],
                    "result": payload["result"],
                    "ok": payload["ok"],
                    "label": payload.get("label", ""),
                }
            )
        self._send_event(payload)

    def _send_event(self, payload: dict[str, Any]) -> None:
        try:
            message = chat_event(redact(payload))
        except ProtocolError:  # an event the protocol does not know: drift between us and the panel
            log.warning("not sending a chat event the protocol does not define: %r", payload.get("kind"), exc_info=True)
            return
        try:
            self.sim.send(message)
        except Exception:
            log.debug("could not send a chat event", exc_info=True)

    def notice(self, text: str) -> None:
        """A line of news in the panel's log (role ``notice``): a bound page kept its own value."""
        self._append({"role": "notice", "text": text})

    def _append(self, entry: dict[str, Any]) -> None:
        entry = redact({**entry, "time": round(time.time(), 3)})
        with self._lock:
            transcript = [*self.sim.transcript, entry][-MAX_TRANSCRIPT:]
            self.sim.transcript = transcript


def _resolve(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)

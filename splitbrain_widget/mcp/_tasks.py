"""Long calls as tasks: the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``).

A client that declares the extension in its request's ``clientCapabilities.extensions`` gets a task
for the calls that may run long (:data:`TASK_TOOLS`: ``seek``, ``advance``, ``record``, ``sweep``):
``tools/call`` answers at once with ``resultType: "task"``; ``tasks/get`` says how it goes (its
``statusMessage`` is the call's latest progress: a seek's last try), asks for input where the
approval policy asks (``input_required`` with ``inputRequests``, answered by ``tasks/update``), and
holds the tool's result once ``completed`` (a refused call is completed with ``isError``; ``failed``
is for a fault of ours); ``tasks/cancel`` cancels the call as a cancelled request does (a seek ends
after the try on the page, an advance or a record where the page is, a sweep after the point it is measuring).
Every other client, and the handshake era, gets the call answered in the request, as before.

The SDK (2.3.0) declares the extension's wire types but serves none of it: this module is the least
that serves it beside the SDK's low-level ``Server`` (its ``add_request_handler`` and middleware).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.context import CallNext, ServerRequestContext

EXTENSION_ID = "io.modelcontextprotocol/tasks"
TASK_TOOLS = frozenset({"seek", "advance", "record", "sweep"})
TTL_MS = 600_000  # how long a task is kept after it was made
POLL_MS = 250  # how often a client should ask
MAX_TASKS = 64  # tasks kept (the oldest ended ones go first)
TERMINAL = frozenset({"completed", "failed", "cancelled"})
METHODS = ("tasks/get", "tasks/update", "tasks/cancel")

Ask = Callable[[str, dict[str, Any], list[str]], Awaitable[tuple[bool, str]]]
Work = Callable[[Callable[[str], None], Ask], Awaitable[dict[str, Any]]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def client_has_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the request's client declared the extension (2026-07-28 only)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(capabilities is not None and capabilities.extensions and EXTENSION_ID in capabilities.extensions)


def approval_request(tool: str, arguments: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """The approval policy's question as an elicitation's form: approve, a boolean."""
    import json

    return {
        "mode": "form",
        "message": f"Allow {tool} to change {', '.join(paths) or 'the simulation'}? {json.dumps(arguments)}",
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Approve", "default": False}},
            "required": ["approve"],
        },
    }


def approved(answer: Any, paths: list[str]) -> tuple[bool, str]:
    """An elicitation's answer (an ``ElicitResult`` or its wire dict) as the approval's verdict."""
    if not isinstance(answer, dict):
        answer = answer.model_dump(by_alias=True) if hasattr(answer, "model_dump") else {}
    action, content = answer.get("action"), answer.get("content") or {}
    if action == "accept" and isinstance(content, dict) and content.get("approve") is True:
        return True, ""
    return False, f"the MCP client's user did not approve changing {', '.join(paths)} ({action})"


@dataclass
class Task:
    """One task: where it is, its latest word, its result or error, its questions."""

    id: str
    status: str = "working"
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    made: float = field(default_factory=time.monotonic)
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {method, params}
    answers: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    running: asyncio.Task[Any] | None = None

    def moved(self, status: str | None = None, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        if status is not None:
            self.status = status
        if message is not None:
            self.message = message[:500]
        self.updated = _now()

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_MS,
        }
        if self.message:
            out["statusMessage"] = self.message
        if self.status == "input_required":
            out["inputRequests"] = dict(self.questions)
        if self.status == "completed":
            out["result"] = self.result
        if self.status == "failed":
            out["error"] = self.error
        return out

    async def ask(self, tool: str, arguments: dict[str, Any], paths: list[str]) -> tuple[bool, str]:
        """The approval's question as the task's input request, until ``tasks/update`` answers it."""
        key = f"approve-{secrets.token_hex(4)}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.answers[key] = answer
        self.questions[key] = {"method": "elicitation/create", "params": approval_request(tool, arguments, paths)}
        self.moved("input_required")
        try:
            return approved(await answer, paths)
        finally:
            self.questions.pop(key, None)
            self.answers.pop(key, None)
            if not self.questions:
                self.moved("working")


class Tasks:
    """The server's tasks: started on its loop, read, answered and cancelled by any request."""

    def __init__(self) -> None:
        self._tasks: OrderedDict[str, Task] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, work: Work, result: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """Run ``work(progress, ask)`` as a new task on this loop; its ``CreateTaskResult``."""
        task = Task(secrets.token_urlsafe(16))
        with self._lock:
            self._tasks[task.id] = task  # known before the client hears of it
            self._trim()
        task.running = asyncio.ensure_future(self._run(task, work, result))
        return {"resultType": "task", **task.wire()}

    async def _run(self, task: Task, work: Work, result: Callable[[dict[str, Any]], Any]) -> None:
        try:
            payload = await work(lambda label: task.moved(message=label), task.ask)
        except asyncio.CancelledError:
            task.moved("cancelled")
            return
        except Exception as exc:  # a fault of ours: the task failed (a refused call completes with isError)
            task.error = {"code": -32603, "message": f"the call failed inside splitbrain_widget: {exc!r}"}
            task.moved("failed")
            return
        task.result = result(payload).model_dump(by_alias=True, mode="json", exclude_none=True)
        task.moved("completed")

    def _trim(self) -> None:
        now = time.monotonic()
        for key in [k for k, t in self._tasks.items() if t.status in TERMINAL and now - t.made > TTL_MS / 1000]:
            del self._tasks[key]
        ended = [k for k, t in self._tasks.items() if t.status in TERMINAL]
        while len(self._tasks) > MAX_TASKS and ended:
            del self._tasks[ended.pop(0)]

    def find(self, task_id: str) -> Task:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS

        with self._lock:
            task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Task not found: {task_id!r}", data={"taskId": task_id})
        return task

    def cancel_all(self) -> None:
        with self._lock:
            running = [t.running for t in self._tasks.values() if t.running is not None]
        for future in running:
            future.cancel()

    # -- the requests --------------------------------------------------------------------------

    def install(self, server: Any) -> None:
        """Serve ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` on ``server`` and advertise the
        extension; ``tasks/result`` and ``tasks/list`` (the 2025-11-25 draft's) stay unknown methods."""
        from mcp_types import RequestParams
        from pydantic import ConfigDict, Field

        class TaskParams(RequestParams):
            model_config = ConfigDict(extra="allow", populate_by_name=True)
            task_id: str = Field(alias="taskId", max_length=200)

        class UpdateParams(TaskParams):
            input_responses: dict[str, Any] = Field(alias="inputResponses", default_factory=dict)

        async def get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
            return {"resultType": "complete", **self._checked(ctx, params.task_id).wire()}

        async def update(ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> dict[str, Any]:
            task = self._checked(ctx, params.task_id)
            for key, value in params.input_responses.items():
                answer = task.answers.get(key)  # unknown or answered keys are ignored, as the spec says
                if answer is not None and not answer.done():
                    answer.set_result(value)
            return {"resultType": "complete"}

        async def cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
            task = self._checked(ctx, params.task_id)
            if task.status not in TERMINAL and task.running is not None:
                task.running.cancel()
                task.moved("cancelled")
            return {"resultType": "complete"}  # the same for an ended task: idempotent

        server.add_request_handler("tasks/get", TaskParams, get)
        server.add_request_handler("tasks/update", UpdateParams, update)
        server.add_request_handler("tasks/cancel", TaskParams, cancel)
        server.middleware.append(_name_is_the_task)
        server.extensions[EXTENSION_ID] = {}

    def _checked(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Task:
        from mcp.shared.exceptions import MCPError
        from mcp_types import METHOD_NOT_FOUND
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found: tasks are a 2026-07-28 extension")
        if not client_has_tasks(ctx):
            raise missing_capability()
        return self.find(task_id)


def missing_capability() -> Any:
    from mcp.shared.exceptions import MCPError
    from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"tasks/* need the client capability {EXTENSION_ID}",
        data={"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
    )


async def _name_is_the_task(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Over HTTP, ``Mcp-Name`` names the task a ``tasks/*`` request is about (the SDK checks it for the
    core methods only)."""
    if ctx.method in METHODS and ctx.request is not None and client_has_tasks(ctx):
        from mcp.shared.exceptions import MCPError
        from mcp_types import HEADER_MISMATCH

        task_id = (ctx.params or {}).get("taskId")
        if isinstance(task_id, str) and ctx.request.headers.get("mcp-name") != task_id:
            raise MCPError(code=HEADER_MISMATCH, message="the Mcp-Name header does not name the request's taskId")
    return await call_next(ctx)

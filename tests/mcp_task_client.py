"""A client side of the 2026-07-28 tasks extension for tests, on the SDK client's own extension seam.

The SDK (2.3.0) serves no tasks, but its ``Client`` takes extensions that claim a result shape:
:class:`TasksExtension` declares ``io.modelcontextprotocol/tasks``, claims ``resultType: "task"`` on
``tools/call`` and resolves a task by polling ``tasks/get`` until it ends, keeping every answer in
``seen``. :func:`task_request` sends ``tasks/get`` / ``tasks/cancel`` by hand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict, Field, TypeAdapter

EXTENSION_ID = "io.modelcontextprotocol/tasks"
POLL_S = 0.05


class TaskCreated(types.Result):
    """The ``CreateTaskResult`` a ``tools/call`` answers with when it runs as a task."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str


async def task_request(session: Any, method: str, task_id: str) -> dict[str, Any]:
    """``tasks/get`` or ``tasks/cancel`` for ``task_id``; the raw result."""
    request: Any
    if method == "tasks/get":
        request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    else:
        request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    return dict(await session.send_request(request, TypeAdapter(dict[str, Any])))


class TasksExtension(ClientExtension):
    """Declares the tasks extension; a task's ``call_tool`` returns the task's result when it ends."""

    identifier = EXTENSION_ID

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=self.resolve)]

    async def resolve(self, created: TaskCreated, ctx: ClaimContext) -> types.CallToolResult:
        self.seen.append({"status": created.status, "taskId": created.task_id})
        while True:
            got = await task_request(ctx.session, "tasks/get", created.task_id)
            self.seen.append(got)
            if got["status"] == "completed":
                return types.CallToolResult.model_validate(got["result"])
            if got["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"the task {created.task_id} ended {got['status']}: {got}")
            await asyncio.sleep(POLL_S)

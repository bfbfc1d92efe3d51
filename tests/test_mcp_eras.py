"""The MCP server in both protocol eras, driven by the SDK's high-level client over HTTP.

The 2026-07-28 era (no handshake: the version and the client's capabilities ride in each request's
``_meta``; ``server/discover``; ``resultType``; cache hints; ``subscriptions/listen``) and the
handshake era (``initialize``, a session) on the one server. The widgets answer through the
in-process fake view. Over stdio, against a headless page: ``tests/test_mcp_clients.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import splitbrain_widget as sb
from splitbrain_widget.mcp import McpServer

from .fake_view import FakeView, wait_for
from .test_seek import textbook

MODERN = "2026-07-28"
ERAS = {"modern": MODERN, "handshake": "legacy"}


@pytest.fixture
def server(served_textbook: McpServer) -> McpServer:
    return served_textbook


@asynccontextmanager
async def connect(server: McpServer, mode: str = "auto", **options: Any) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=httpx2.Timeout(30, read=60))
    async with http, Client(streamable_http_client(server.url, http_client=http), mode=mode, **options) as client:  # type: ignore[arg-type]
        yield client


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


TASKS = "io.modelcontextprotocol/tasks"


def post(
    server: McpServer,
    method: str,
    params: dict[str, Any],
    version: str = MODERN,
    capabilities: dict[str, Any] | None = None,
    **headers: str,
) -> httpx2.Response:
    """One raw 2026-07-28 request: the envelope in ``_meta``, the routing headers unless given."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    sent = {
        "Authorization": f"Bearer {server.token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
        **({"Mcp-Name": params.get("name") or params.get("uri") or params.get("taskId")} if params else {}),
        **headers,
    }
    with httpx2.Client(timeout=30) as http:
        return http.post(server.url, json=body, headers=sent)


def reply(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response (JSON, or the last ``data:`` line of an SSE stream)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads([d for d in data if d][-1]))
    return dict(response.json())


def test_a_new_client_discovers_the_server_and_its_extensions(server: McpServer) -> None:
    async def go() -> tuple[str, types.ServerCapabilities]:
        async with connect(server) as client:
            return client.protocol_version, client.server_capabilities

    version, capabilities = run(go())
    assert version == MODERN  # the SDK's auto mode probed server/discover, no handshake
    extensions = capabilities.extensions or {}
    assert "io.modelcontextprotocol/ui" in extensions and "io.modelcontextprotocol/tasks" in extensions
    assert capabilities.tools is not None and capabilities.tools.list_changed
    assert capabilities.resources is not None and capabilities.resources.subscribe

    found = reply(post(server, "server/discover", {}))["result"]
    assert found["resultType"] == "complete" and MODERN in found["supportedVersions"]
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "splitbrain-widget"
    assert found["cacheScope"] == "private" and found["ttlMs"] > 0


@pytest.mark.parametrize("era", ERAS)
def test_lists_carry_cache_hints_and_every_tool_an_output_schema(server: McpServer, era: str) -> None:
    async def go() -> tuple[types.ListToolsResult, types.ListResourcesResult]:
        async with connect(server, ERAS[era]) as client:
            return await client.list_tools(), await client.list_resources()

    tools, resources = run(go())
    for tool in tools.tools:
        assert tool.output_schema is not None, tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    if era == "modern":
        assert (tools.ttl_ms, tools.cache_scope) == (5000, "private")
        assert (resources.ttl_ms, resources.cache_scope) == (5000, "private")
    raw = reply(post(server, "tools/list", {}))["result"]
    assert raw["resultType"] == "complete" and raw["ttlMs"] == 5000


@pytest.mark.parametrize("era", ERAS)
def test_a_program_reads_the_page_state_as_an_object_and_the_model_reads_it_marked(
    server: McpServer, textbook_projectile: sb.TargetWidget, era: str
) -> None:
    async def go() -> types.CallToolResult:
        async with connect(server, ERAS[era]) as client:
            assert not (await client.call_tool("projectile__set_parameters", {"values": {"launch.angle": 30}})).is_error
            return await client.call_tool("projectile__fetch_state", {})  # the client validates it

    result = run(go())
    structured = result.structured_content
    assert structured is not None and not result.is_error
    assert structured["state"]["range"] == pytest.approx(20**2 * 0.8660254 / 9.81, abs=0.01)  # v^2 sin(2a) / g
    assert structured["page_data"] == {"note": sb.agent.PAGE_DATA_NOTE, "fields": ["state"]}
    model = json.loads(result.content[-1].text)  # type: ignore[union-attr]
    assert model["page_data"]["note"] == sb.agent.PAGE_DATA_NOTE and isinstance(model["page_data"]["state"], str)
    assert json.loads(model["page_data"]["state"]) == structured["state"]
    tools = run(_tools(server))
    jsonschema.validate(structured, tools["projectile__fetch_state"].output_schema)
    jsonschema.validate(model, tools["projectile__fetch_state"].output_schema)


async def _tools(server: McpServer) -> dict[str, types.Tool]:
    async with connect(server, MODERN) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize(("era", "code"), [("modern", -32602), ("handshake", -32002)])
def test_a_missing_resource_is_the_eras_error(server: McpServer, era: str, code: int) -> None:
    async def go() -> MCPError:
        async with connect(server, ERAS[era], cache=None) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("splitbrain://nobody/state")
            return caught.value

    error = run(go())
    assert error.error.code == code and "splitbrain://nobody/state" in error.error.message


def test_a_listener_hears_of_the_state_and_of_a_widget_coming(
    server: McpServer, textbook_projectile: sb.TargetWidget
) -> None:
    async def go() -> list[Any]:
        heard: list[Any] = []
        async with (
            connect(server, MODERN) as client,
            client.listen(tools_list_changed=True, resource_subscriptions=["splitbrain://projectile/state"]) as sub,
        ):
            assert sub.honored.resource_subscriptions == ["splitbrain://projectile/state"]
            await client.call_tool("projectile__set_parameters", {"values": {"launch.angle": 40}})
            heard.append(await asyncio.wait_for(sub.__anext__(), 10))
            other = sb.TargetWidget("pendulum")
            FakeView(other)
            try:
                server_again = sb.serve_mcp(other)
                assert server_again is server
                heard.append(await asyncio.wait_for(sub.__anext__(), 10))
                names = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
                heard.append(any(name.startswith("pendulum__") for name in names))
            finally:
                other.close()
        return heard

    from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

    updated, changed, listed = run(go())
    assert updated == ResourceUpdated(uri="splitbrain://projectile/state")
    assert changed == ToolsListChanged() and listed


def test_http_routing_headers_must_match_the_body(server: McpServer) -> None:
    good = post(server, "tools/call", {"name": "projectile__get_parameters", "arguments": {}})
    assert good.status_code == 200 and reply(good)["result"]["resultType"] == "complete"
    wrong = post(server, "tools/call", {"name": "projectile__get_parameters", "arguments": {}}, **{"Mcp-Name": "x"})
    assert wrong.status_code == 400 and reply(wrong)["error"]["code"] == types.HEADER_MISMATCH, wrong.text
    missing = post(server, "tools/list", {}, **{"Mcp-Method": "tools/call"})
    assert missing.status_code == 400, missing.text
    wrong_version = post(server, "tools/list", {}, version="2099-01-01")
    assert reply(wrong_version)["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION, wrong_version.text


def test_the_handshake_era_still_initializes_and_notifies(
    server: McpServer, textbook_projectile: sb.TargetWidget
) -> None:
    async def go() -> tuple[str, list[str]]:
        got: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                got.append(str(message.params.uri))

        async with connect(server, "legacy", message_handler=on_message) as client:
            await client.session.subscribe_resource("splitbrain://projectile/state")
            await client.call_tool("projectile__set_parameters", {"values": {"launch.angle": 35}})
            await asyncio.to_thread(wait_for, lambda: bool(got), "resources/updated", 10)
            return client.protocol_version, got

    version, got = run(go())
    assert version == "2025-11-25" and got[0] == "splitbrain://projectile/state"


# -- tasks (the io.modelcontextprotocol/tasks extension) -------------------------------------------

WITH_TASKS = {"extensions": {TASKS: {}}, "elicitation": {"form": {}}}
SEEK = {"name": "projectile__seek", "arguments": {"observable": "range", "goal": 30, "vary": "launch.speed"}}


def task_rpc(server: McpServer, method: str, task_id: str, **extra: Any) -> dict[str, Any]:
    return reply(post(server, method, {"taskId": task_id, **extra}, capabilities=WITH_TASKS))


def acked(message: dict[str, Any]) -> bool:
    """An empty result (the server's identity stamp in ``_meta`` aside)."""
    return {k: v for k, v in message["result"].items() if k != "_meta"} == {"resultType": "complete"}


def until(server: McpServer, task_id: str, done: Any, what: str) -> dict[str, Any]:
    """Poll ``tasks/get`` until ``done(task)``; every answer kept in ``seen``."""
    seen: list[dict[str, Any]] = []

    def ready() -> bool:
        seen.append(task_rpc(server, "tasks/get", task_id)["result"])
        return bool(done(seen[-1]))

    wait_for(ready, what, 30)
    return {"last": seen[-1], "seen": seen}


def test_a_long_call_runs_as_a_task_with_progress_and_a_result(server: McpServer, projectile: sb.TargetWidget) -> None:
    projectile.host.behaviour, projectile.host.delay_s = "delay", 0.05  # each try takes a while: progress shows
    started = reply(post(server, "tools/call", SEEK, capabilities=WITH_TASKS))["result"]
    assert started["resultType"] == "task" and started["status"] == "working", started
    assert started["ttlMs"] > 0 and started["pollIntervalMs"] > 0 and "result" not in started
    polled = until(server, started["taskId"], lambda t: t["status"] == "completed", "the seek task to complete")
    assert any("try" in (t.get("statusMessage") or "") for t in polled["seen"]), polled["seen"]
    result = polled["last"]["result"]
    assert result["isError"] is False and result["structuredContent"]["ok"] is True
    assert len(result["structuredContent"]["evaluations"]) >= 2
    assert abs(textbook(dict(projectile.values))["range"] - 30) <= 0.31
    assert projectile.audit.entries()[-1].source == "mcp: raw"


def test_a_cancelled_task_ends_the_call_on_the_page_and_the_widget_keeps_working(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    before = projectile.values["launch.speed"]
    projectile.host.behaviour, projectile.host.delay_s = "delay", 0.3  # each try on the page takes 0.3 s
    started = reply(post(server, "tools/call", SEEK, capabilities=WITH_TASKS))["result"]
    wait_for(lambda: len(projectile.host.requests) > 0, "the seek's first try to reach the page", 10)
    assert acked(task_rpc(server, "tasks/cancel", started["taskId"]))
    assert task_rpc(server, "tasks/get", started["taskId"])["result"]["status"] == "cancelled"
    # the seek stops before its next try on the page and puts its parameter back
    wait_for(lambda: any(e.code == "cancelled" for e in projectile.audit.entries()), "the call's cancelled entry", 10)
    tries = len(projectile.host.requests)
    assert projectile.values["launch.speed"] == before and tries < 6, tries
    assert acked(task_rpc(server, "tasks/cancel", started["taskId"]))  # idempotent
    projectile.host.behaviour = "ok"
    after = reply(post(server, "tools/call", {"name": "projectile__fetch_state", "arguments": {}}))["result"]
    assert after["structuredContent"]["ok"] is True


def test_a_task_asks_the_approval_policy_s_question_and_goes_on_with_the_answer(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    projectile.approval = {"launch.speed": "ask"}
    started = reply(post(server, "tools/call", SEEK, capabilities=WITH_TASKS))["result"]
    asked = until(server, started["taskId"], lambda t: t["status"] == "input_required", "the task to ask")["last"]
    ((key, question),) = asked["inputRequests"].items()
    assert question["method"] == "elicitation/create" and "launch.speed" in question["params"]["message"]
    answer = {key: {"action": "accept", "content": {"approve": True}}, "stray": {"ignored": True}}
    assert acked(task_rpc(server, "tasks/update", started["taskId"], inputResponses=answer))
    done = until(server, started["taskId"], lambda t: t["status"] == "completed", "the task to complete")["last"]
    assert done["result"]["structuredContent"]["ok"] is True


def test_without_the_extension_a_long_call_answers_in_the_request(server: McpServer) -> None:
    result = reply(post(server, "tools/call", SEEK))["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["ok"] is True


def test_task_requests_are_checked(server: McpServer) -> None:
    started = reply(post(server, "tools/call", SEEK, capabilities=WITH_TASKS))["result"]
    unknown = task_rpc(server, "tasks/get", "no-such-task")
    assert unknown["error"]["code"] == types.INVALID_PARAMS and "no-such-task" in unknown["error"]["message"]
    undeclared = reply(post(server, "tasks/get", {"taskId": started["taskId"]}))
    assert undeclared["error"]["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert TASKS in undeclared["error"]["data"]["requiredCapabilities"]["extensions"]
    other = post(server, "tasks/get", {"taskId": started["taskId"]}, capabilities=WITH_TASKS, **{"Mcp-Name": "x"})
    assert reply(other)["error"]["code"] == types.HEADER_MISMATCH
    for removed in ("tasks/result", "tasks/list"):
        assert task_rpc(server, removed, started["taskId"])["error"]["code"] == types.METHOD_NOT_FOUND


# -- input required: the approval policy's question in the 2026-07-28 era ---------------------------


def test_an_ask_is_an_input_required_result_the_client_answers_and_retries(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    projectile.approval = {"launch.angle": "ask"}
    asked: list[str] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": "45" in params.message})

    async def go() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with connect(server, MODERN, elicitation_callback=elicit) as client:
            yes = await client.call_tool("projectile__set_parameters", {"values": {"launch.angle": 45}})
            no = await client.call_tool("projectile__set_parameters", {"values": {"launch.angle": 50}})
            return yes, no

    yes, no = run(go())
    assert len(asked) == 2 and all("launch.angle" in q for q in asked)
    assert not yes.is_error and projectile.values["launch.angle"] == 45
    assert no.is_error and no.structured_content is not None and no.structured_content["error"]["code"] == "denied"


def test_an_input_required_round_cannot_be_forged_or_moved_to_other_arguments(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    projectile.approval = {"launch.angle": "ask"}
    caps = {"elicitation": {"form": {}}}
    call = {"name": "projectile__set_parameters", "arguments": {"values": {"launch.angle": 40}}}
    first = reply(post(server, "tools/call", call, capabilities=caps))["result"]
    assert first["resultType"] == "input_required" and set(first["inputRequests"]) == {"approve"}
    yes = {"approve": {"action": "accept", "content": {"approve": True}}}

    def answered(called: dict[str, Any], state: str | None) -> dict[str, Any]:
        retry = {**called, "inputResponses": yes, **({"requestState": state} if state is not None else {})}
        return reply(post(server, "tools/call", retry, capabilities=caps))

    assert answered(call, "approve")["error"]["code"] == types.INVALID_PARAMS  # a state this server did not seal
    moved = {"name": call["name"], "arguments": {"values": {"launch.angle": 80}}}
    assert answered(moved, first["requestState"])["error"]["code"] == types.INVALID_PARAMS  # sealed for 40
    skipped = answered(call, None)["result"]
    assert skipped["resultType"] == "input_required"  # an answer without this server's state asks again
    assert projectile.values["launch.angle"] == 45  # the default: nothing was set
    done = answered(call, first["requestState"])["result"]
    assert done["resultType"] == "complete" and done["structuredContent"]["ok"] is True
    assert projectile.values["launch.angle"] == 40

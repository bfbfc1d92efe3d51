"""The MCP server from the kernel (``sb.serve_mcp``), driven by the ``mcp`` SDK's own client over HTTP.

The widgets here answer through the in-process fake view (no browser): the tools, schemas, results,
errors, progress, cancellation, subscriptions, approval and the transport's security. The same
server against a real page is in ``tests/browser/test_mcp_browser.py`` and headless over stdio in
``tests/test_mcp_stdio.py``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2  # the SDK's HTTP client
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import splitbrain_widget as sb
from splitbrain_widget.agent import specs_for
from splitbrain_widget.mcp import McpServer

from .fake_view import FakeView, wait_for
from .test_seek import textbook


@pytest.fixture
def server(served_textbook: McpServer) -> McpServer:
    return served_textbook


@asynccontextmanager
async def client(
    server: McpServer, *, name: str = "pytest-client", elicit: Any = None, on_message: Any = None
) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=httpx2.Timeout(30, read=300))
    async with (
        http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            client_info=types.Implementation(name=name, version="1"),
            elicitation_callback=elicit,
            message_handler=on_message,
        ) as session,
    ):
        await session.initialize()
        yield session


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def every_tool(session: ClientSession) -> list[types.Tool]:
    """Every page of ``tools/list`` (a process with many widgets has several)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools


def test_the_tools_are_the_agents_with_the_same_schemas(server: McpServer, projectile: sb.TargetWidget) -> None:
    async def go() -> list[types.Tool]:
        async with client(server) as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run(go())}
    specs = specs_for(projectile)
    assert {f"projectile__{s.name}" for s in specs} | {"list_widgets"} == set(tools)
    for spec in specs:
        tool = tools[f"projectile__{spec.name}"]
        assert tool.input_schema == spec.schema
        assert spec.description in (tool.description or "")
        assert tool.annotations is not None and tool.annotations.read_only_hint == spec.read_only


def test_a_tool_added_to_the_table_reaches_mcp_with_no_other_edit(
    server: McpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from splitbrain_widget.agent import _tools

    async def run_echo(_ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "echo": args.get("text")}

    extra = _tools.Tool(
        "echo_text",
        "Echo a text.",
        run_echo,
        read_only=True,
        parameters=lambda _s: {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    monkeypatch.setattr(_tools, "TOOLS", (*_tools.TOOLS, extra))
    monkeypatch.setitem(_tools.BY_NAME, "echo_text", extra)

    async def go() -> tuple[list[str], types.CallToolResult]:
        async with client(server) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            return names, await session.call_tool("projectile__echo_text", {"text": "hi"})

    names, result = run(go())
    assert "projectile__echo_text" in names
    assert result.structured_content == {"ok": True, "echo": "hi"}


def test_setting_a_parameter_changes_the_page_and_is_audited_with_the_client(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    async def go() -> types.CallToolResult:
        async with client(server, name="claude-code") as session:
            return await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 30}})

    result = run(go())
    assert not result.is_error
    payload = result.structured_content
    assert payload is not None and payload["ok"] and payload["applied"]
    assert payload["changed"] == {"launch.angle": {"value": 30, "unit": "deg"}}
    # a program reads the page's state as an object; the model reads it as marked text
    assert payload["state"]["launch.angle"] == 30 and payload["state"]["range"] > 0
    assert payload["page_data"] == {"note": sb.agent.PAGE_DATA_NOTE, "fields": ["state"]}
    text = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert text["page_data"]["note"] == sb.agent.PAGE_DATA_NOTE
    assert json.loads(text["page_data"]["state"]) == payload["state"]
    assert {k: v for k, v in text.items() if k != "page_data"} == {
        k: v for k, v in payload.items() if k not in ("page_data", "state")
    }
    assert projectile.values["launch.angle"] == 30
    entry = projectile.audit.entries()[-1]
    assert (entry.op, entry.source) == ("set_parameters", "mcp: claude-code")
    assert "# mcp: claude-code" in projectile.audit.to_code()


def test_a_bad_value_is_a_tool_error_with_our_code(server: McpServer, projectile: sb.TargetWidget) -> None:
    async def go() -> types.CallToolResult:
        async with client(server) as session:
            return await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 300}})

    result = run(go())
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["error"]["code"] == "invalid_value"
    assert "90" in result.structured_content["error"]["message"]
    assert projectile.values["launch.angle"] != 300


def test_an_unknown_tool_is_a_protocol_error_naming_the_widgets(server: McpServer) -> None:
    from mcp.shared.exceptions import MCPError

    async def go() -> None:
        async with client(server) as session:
            with pytest.raises(MCPError, match="widgets: projectile"):
                await session.call_tool("pendulum__reset", {})

    run(go())


def test_a_seek_reports_each_try_as_progress(server: McpServer, projectile: sb.TargetWidget) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, _total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async def go() -> types.CallToolResult:
        async with client(server) as session:
            return await session.call_tool(
                "projectile__seek",
                {"observable": "range", "goal": 30, "vary": "launch.speed"},
                progress_callback=on_progress,
            )

    result = run(go())
    assert not result.is_error, result.structured_content
    payload = result.structured_content
    assert payload is not None and abs(textbook(dict(projectile.values))["range"] - 30) <= 0.31
    tries = len(payload["evaluations"])
    assert [p for p, _ in seen] == [float(n) for n in range(1, tries + 1)]
    assert all(message and "try" in message for _, message in seen)


def test_a_cancelled_call_ends_cancelled_and_the_widget_keeps_working(projectile: sb.TargetWidget) -> None:
    view = FakeView(projectile, behaviour="silent")  # never answers: the call waits for its deadline
    server = sb.serve_mcp(projectile)
    try:

        async def go() -> types.CallToolResult:
            async with client(server) as session:
                from mcp.shared.exceptions import MCPError

                with pytest.raises(MCPError, match="timed out"):
                    await session.call_tool("projectile__fetch_state", {}, read_timeout_seconds=0.5)
                view.behaviour = "ok"
                return await session.call_tool("projectile__get_parameters", {})

        after = run(go())
        wait_for(lambda: any(e.code == "cancelled" for e in projectile.audit.entries()), "the cancelled entry")
        assert not after.is_error
    finally:
        server.stop()


def test_state_subscribers_hear_of_a_change(server: McpServer, projectile: sb.TargetWidget) -> None:
    updated: list[str] = []
    heard = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            heard.set()

    async def go() -> str:
        async with client(server, on_message=on_message) as session:
            uris = [str(r.uri) for r in (await session.list_resources()).resources]
            assert uris == ["splitbrain://projectile/manifest", "splitbrain://projectile/state"]
            manifest = json.loads((await session.read_resource("splitbrain://projectile/manifest")).contents[0].text)  # type: ignore[union-attr]
            assert manifest["id"] == "projectile"
            with pytest.warns(UserWarning):  # the SDK marks resources/subscribe as of the 2025 protocol
                await session.subscribe_resource("splitbrain://projectile/state")
            await asyncio.to_thread(projectile.set_parameter, "launch.speed", 15)  # plain Python, not MCP
            await asyncio.wait_for(heard.wait(), 30)
            return (await session.read_resource("splitbrain://projectile/state")).contents[0].text  # type: ignore[union-attr,return-value]

    state = json.loads(run(go()))
    assert updated[0] == "splitbrain://projectile/state"
    assert state["values"]["launch.speed"] == 15
    assert "note" in state["page_data"]


def test_skills_are_prompts(server: McpServer) -> None:
    async def go() -> tuple[list[str], str]:
        async with client(server) as session:
            names = [p.name for p in (await session.list_prompts()).prompts]
            got = await session.get_prompt(names[0])
            return names, got.messages[0].content.text  # type: ignore[union-attr]

    names, text = run(go())
    assert names == ["projectile__projectile-physics"]
    assert "projectile__<tool>" in text


def test_an_ask_of_the_approval_policy_is_an_elicitation(server: McpServer, projectile: sb.TargetWidget) -> None:
    projectile.approval = {"launch.angle": "ask"}
    asked: list[str] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        approve = "launch.angle" in params.message and "45" in params.message
        return types.ElicitResult(action="accept", content={"approve": approve})

    async def go() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with client(server, elicit=elicit) as session:
            yes = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 45}})
            no = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 50}})
            return yes, no

    yes, no = run(go())
    assert len(asked) == 2
    assert not yes.is_error and projectile.values["launch.angle"] == 45
    assert no.is_error and no.structured_content is not None
    assert no.structured_content["error"]["code"] == "denied"


def test_without_elicitation_an_ask_shows_approve_deny_in_the_chat_panel(
    server: McpServer, projectile: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that cannot answer an elicitation: the panel's Approve / Deny decide while the call waits."""
    projectile.approval = {"launch.angle": "ask"}
    sent: list[dict[str, Any]] = []
    send = projectile.send

    def panel(content: dict[str, Any], buffers: Any = None) -> None:  # the panel: the user clicks
        sent.append(content)
        if content.get("kind") == "approval_request":
            approved = content["arguments"]["values"]["launch.angle"] == 45
            answer = {"kind": "approval", "id": content["id"], "approved": approved}
            threading.Thread(target=projectile.receive_view_message, args=(answer,)).start()
        send(content, buffers)

    monkeypatch.setattr(projectile, "send", panel)

    async def go() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with client(server) as session:  # no elicitation callback: the capability is not declared
            yes = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 45}})
            no = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 50}})
            return yes, no

    yes, no = run(go())
    requests = [m for m in sent if m.get("kind") == "approval_request"]
    assert [r["asking"] for r in requests] == [["launch.angle"], ["launch.angle"]]
    assert not yes.is_error and projectile.values["launch.angle"] == 45
    assert no.is_error and no.structured_content is not None
    assert no.structured_content["error"]["code"] == "denied"
    assert "the user denied this change" in no.structured_content["error"]["message"]


def test_widgets_made_later_appear_and_closed_ones_go() -> None:
    first = sb.TargetWidget("bouncer")
    FakeView(first)
    server = sb.serve_mcp()  # every live widget
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def go() -> tuple[set[str], set[str], set[str], set[str]]:
        async with client(server, on_message=on_message) as session:
            before = {t.name.split("__")[0] for t in await every_tool(session)}
            second = await asyncio.to_thread(sb.TargetWidget, "bouncer")
            hidden = {t.name.split("__")[0] for t in await every_tool(session)}
            await asyncio.to_thread(FakeView, second)  # displayed: now it can answer
            await asyncio.wait_for(changed.wait(), 30)
            during = {t.name.split("__")[0] for t in await every_tool(session)}
            changed.clear()
            await asyncio.to_thread(second.close)
            await asyncio.wait_for(changed.wait(), 30)
            after = {t.name.split("__")[0] for t in await every_tool(session)}
            return before, hidden, during, after

    try:
        # widgets other tests of this process left open are served too: the new one is what appears
        before, hidden, during, after = run(go())
        new = during - before
        assert len(new) == 1 and next(iter(new)).startswith("bouncer"), (before, during)
        assert hidden == before  # made but not displayed: nothing could answer its calls
        assert after == before  # closed: gone, the first one (and the others) still there
    finally:
        server.stop()
        first.close()


def test_serving_again_returns_the_same_server(server: McpServer, projectile: sb.TargetWidget) -> None:
    assert sb.serve_mcp() is server
    assert projectile.serve_mcp() is server
    with pytest.raises(ValueError, match="port"):
        sb.serve_mcp(port=server.port + 1 if server.port < 65535 else 1)


def test_the_token_is_in_no_trait_audit_or_repr(server: McpServer, projectile: sb.TargetWidget) -> None:
    async def go() -> None:
        async with client(server) as session:
            await session.call_tool("projectile__get_parameters", {})

    run(go())
    traits = json.dumps(projectile.get_state(), default=str)
    assert server.token not in traits
    assert server.token not in repr(server)
    assert server.token not in json.dumps([e.__dict__ for e in projectile.audit.entries()], default=str)
    assert server.token in server.config("claude-code")


@pytest.mark.parametrize("client_name", ["claude-code", "cursor", "vscode", "jupyter-ai", "marimo", "claude-desktop"])
def test_each_client_gets_a_snippet_with_the_url_and_token(server: McpServer, client_name: str) -> None:
    snippet = server.config(client_name)
    assert server.url in snippet and server.token in snippet


def test_an_unknown_client_is_a_clear_error(server: McpServer) -> None:
    with pytest.raises(ValueError, match="claude-code, cursor"):
        server.config("emacs")


# -- the transport's security -----------------------------------------------------------------------

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _post(server: McpServer, path: str = "/mcp", **headers: str) -> int:
    merged = {**JSON_HEADERS, **headers}
    with httpx2.Client(timeout=10) as http:
        return http.post(f"http://127.0.0.1:{server.port}{path}", json=INIT, headers=merged).status_code


def test_no_token_is_401_on_every_route(server: McpServer) -> None:
    assert _post(server) == 401
    assert _post(server, Authorization="Bearer wrong") == 401
    assert _post(server, "/anything-else") == 401
    assert _post(server, Authorization=f"Bearer {server.token}") == 200


def test_a_foreign_origin_is_403_even_the_notebook_pages_own(server: McpServer) -> None:
    auth = f"Bearer {server.token}"
    assert _post(server, Authorization=auth, Origin="http://evil.example") == 403
    assert _post(server, Authorization=auth, Origin="http://localhost:8888") == 403  # JupyterLab's origin
    assert _post(server, Authorization=auth, Origin=f"http://localhost:{server.port + 1}") == 403
    # the server's own origin is no page's (it serves none): a same-origin request is not cross-site
    assert _post(server, Authorization=auth, Origin=f"http://127.0.0.1:{server.port}") == 200


def test_a_listed_origin_is_admitted(projectile: sb.TargetWidget) -> None:
    server = sb.serve_mcp(projectile, origins=["http://localhost:3000"])
    try:
        assert _post(server, Authorization=f"Bearer {server.token}", Origin="http://localhost:3000") == 200
    finally:
        server.stop()


def test_a_wrong_host_is_421(server: McpServer) -> None:
    auth = f"Bearer {server.token}"
    assert _post(server, Authorization=auth, Host="attacker.example") == 421
    assert _post(server, Authorization=auth, Host=f"127.0.0.1:{server.port + 1}") == 421


def test_it_listens_on_loopback_only_with_nodelay(server: McpServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as conn:
        assert conn.getpeername()[0] == "127.0.0.1"
    with pytest.raises(OSError), socket.create_connection((_lan_address(), server.port), timeout=1):
        pass


def _lan_address() -> str:
    """An address of this machine that is not loopback (the test skips where there is none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: it only picks a route
            address = str(probe.getsockname()[0])
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        pytest.skip("this machine has no non-loopback address")
    return address


def test_stop_frees_the_port_at_once(projectile: sb.TargetWidget) -> None:
    server = sb.serve_mcp(projectile)
    port = server.port
    server.stop()
    assert not server.running
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_a_call_is_answered_while_the_main_thread_is_busy(server: McpServer, projectile: sb.TargetWidget) -> None:
    """The reply path needs no main thread: here it is blocked on a lock the whole time."""
    busy = threading.Event()
    answered: list[bool] = []

    def from_another_thread() -> None:
        async def go() -> None:
            async with client(server) as session:
                answered.append(not (await session.call_tool("projectile__fetch_state", {})).is_error)

        asyncio.run(go())
        busy.set()

    worker = threading.Thread(target=from_another_thread)
    worker.start()
    assert busy.wait(60)  # the main thread only waits
    worker.join()
    assert answered == [True]


def test_a_long_tool_list_comes_in_pages_a_client_can_take(monkeypatch: pytest.MonkeyPatch) -> None:
    from splitbrain_widget.mcp import _hub

    monkeypatch.setattr(_hub, "PAGE_BYTES", 20_000)  # a process with many widgets, in small
    sims = [sb.TargetWidget("projectile") for _ in range(3)]
    for n, sim in enumerate(sims):
        FakeView(sim, view_id=f"fake-{n}")
    server = sb.serve_mcp(*sims)

    async def go() -> tuple[list[types.ListToolsResult], list[types.Tool]]:
        async with client(server) as session:
            pages = [await session.list_tools()]
            while pages[-1].next_cursor is not None:
                cursor = types.PaginatedRequestParams(cursor=pages[-1].next_cursor)
                pages.append(await session.list_tools(params=cursor))
            from mcp.shared.exceptions import MCPError

            with pytest.raises(MCPError, match="not one this server handed out"):
                await session.list_tools(params=types.PaginatedRequestParams(cursor="x"))
            return pages, await every_tool(session)

    try:
        pages, tools = run(go())
    finally:
        server.stop()
        for sim in sims:
            sim.close()
    assert len(pages) >= 2
    for page in pages:
        assert (
            len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]))
            < 20_000 + 5_000
        )
    names = [t.name for page in pages for t in page.tools]
    assert len(names) == len(set(names)) == len(tools)
    assert {"projectile__set_parameters", "projectile_2__set_parameters", "projectile_3__seek"} <= set(names)

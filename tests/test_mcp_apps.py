"""MCP Apps on the server side, without a browser: the ``ui://`` resources, the tools' ``_meta.ui``, and
App views behind the seam (``hosts._app_views.AppViews``) played by this test through the two tools only
views call, over the ``mcp`` SDK's own client. The views' browser side against a real MCP Apps host
(ext-apps' AppBridge) is ``tests/browser/test_mcp_apps_browser.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import splitbrain_widget as sb
from splitbrain_widget.agent import specs_for
from splitbrain_widget.hosts import _app_views
from splitbrain_widget.manifest.registry import APP_DATA_ID
from splitbrain_widget.mcp import McpServer, app_target
from splitbrain_widget.mcp._apps import APP_MIME_TYPE, ATTACH_TOOL, SYNC_TOOL
from splitbrain_widget.protocol import PROTOCOL_VERSION

from .test_mcp import every_tool

APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME_TYPE]}}
ORIGIN = "http://127.0.0.1:1"  # a browser-based client's page (nothing listens there)


@pytest.fixture
def projectile() -> Iterator[sb.TargetWidget]:
    widget = app_target("projectile", timeout=10)
    yield widget
    widget.close()


@pytest.fixture
def server(projectile: sb.TargetWidget) -> Iterator[McpServer]:
    running = sb.serve_mcp(projectile, origins=[ORIGIN])
    yield running
    running.stop()


@asynccontextmanager
async def client(server: McpServer, *, apps: bool = True) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=httpx2.Timeout(30, read=60))
    async with (
        http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write, extensions=APPS if apps else None) as session,
    ):
        await session.initialize()
        yield session


def run(coroutine: Any) -> Any:
    """On a thread of its own: in a run with the browser layer, Playwright holds this thread's loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def structured(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return dict((await session.call_tool(name, arguments)).structured_content or {})


class AppView:
    """An App view as js/app/app_view.js is one, played through the two tools: its page applies what
    it is sent and reports the values it holds (``silent``: it attaches and never answers)."""

    def __init__(self, session: ClientSession, *, silent: bool = False) -> None:
        self.session = session
        self.silent = silent
        self.view_id = ""
        self.values: dict[str, Any] = {}
        self.requests: list[dict[str, Any]] = []
        self.outbox: list[dict[str, Any]] = []

    async def attach(self, widget: str = "projectile") -> None:
        answer = await structured(self.session, ATTACH_TOOL, {"widget": widget})
        assert answer["ok"], answer
        self.view_id = answer["view_id"]
        self.values = dict(answer["values"])  # the catch-up apply of a fresh page
        self.outbox = [self._event("attached", {"protocol": PROTOCOL_VERSION, "user_agent": "test"})]
        self.outbox.append(self._event("ready", {}))

    def _event(self, kind: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"kind": "event", "view_id": self.view_id, "type": kind, **({"payload": payload} if payload else {})}

    async def sync(self, wait_s: float = 0) -> dict[str, Any]:
        messages, self.outbox = self.outbox, []
        answer = await structured(
            self.session, SYNC_TOOL, {"view_id": self.view_id, "messages": messages, "wait_s": wait_s}
        )
        for request in answer.get("requests", []):
            self.requests.append(request)
            if self.silent:
                continue
            self.values.update(request["payload"].get("values", {}))
            reply = {"kind": "reply", "id": request["id"], "view_id": self.view_id, "ok": True}
            self.outbox.append({**reply, "state": {"held": dict(self.values)}})
        return answer

    async def serve(self, rounds: int = 4, wait_s: float = 5) -> None:
        for _ in range(rounds):
            await self.sync(wait_s if not self.outbox else 0)

    async def leave(self) -> None:
        self.outbox.append(self._event("detached"))
        await self.sync()


# -- what a client sees ---------------------------------------------------------------------------


def test_tools_that_change_the_page_name_its_ui_resource_and_the_views_tools_are_for_apps_clients(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    async def go() -> tuple[list[types.Tool], list[str]]:
        async with client(server) as apps, client(server, apps=False) as plain:
            return (await apps.list_tools()).tools, [t.name for t in (await plain.list_tools()).tools]

    tools, plain = run(go())
    by_name = {t.name: t for t in tools}
    for spec in specs_for(projectile):
        meta = by_name[f"projectile__{spec.name}"].meta
        if spec.read_only:
            assert meta is None, spec.name
        else:
            assert meta == {
                "ui": {"resourceUri": "ui://splitbrain/projectile"},
                "ui/resourceUri": "ui://splitbrain/projectile",
            }
    for name in (ATTACH_TOOL, SYNC_TOOL):
        assert by_name[name].meta == {"ui": {"visibility": ["app"]}}
        assert name not in plain  # a client that renders no App would show them to its model
    assert "projectile__set_parameters" in plain


def test_a_2026_client_that_renders_apps_gets_both_forms_of_the_link_and_the_views_tools(server: McpServer) -> None:
    from .test_mcp_eras import post, reply

    listed = reply(post(server, "tools/list", {}, capabilities={"extensions": APPS}))["result"]
    by_name = {t["name"]: t for t in listed["tools"]}
    assert by_name["projectile__set_parameters"]["_meta"] == {
        "ui": {"resourceUri": "ui://splitbrain/projectile"},
        "ui/resourceUri": "ui://splitbrain/projectile",
    }
    assert by_name[ATTACH_TOOL]["_meta"] == {"ui": {"visibility": ["app"]}}
    found = reply(post(server, "server/discover", {}, capabilities={"extensions": APPS}))["result"]
    assert "io.modelcontextprotocol/ui" in found["capabilities"]["extensions"]
    plain = reply(post(server, "tools/list", {}))["result"]
    assert ATTACH_TOOL not in {t["name"] for t in plain["tools"]}


def test_a_notebook_widgets_tools_render_nothing(textbook_projectile: sb.TargetWidget) -> None:
    running = sb.serve_mcp(textbook_projectile)
    try:

        async def go() -> tuple[list[types.Tool], list[types.Resource]]:
            async with client(running) as session:
                return (await session.list_tools()).tools, (await session.list_resources()).resources

        tools, resources = run(go())
    finally:
        running.stop()
    assert all(t.meta is None for t in tools)
    assert not [r for r in resources if str(r.uri).startswith("ui://")]


def test_the_resource_is_the_registrys_page_in_a_document_of_ours(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    async def go() -> tuple[list[types.Resource], types.ReadResourceResult]:
        async with client(server) as session:
            return (await session.list_resources()).resources, await session.read_resource("ui://splitbrain/projectile")

    resources, read = run(go())
    listed = next(r for r in resources if str(r.uri) == "ui://splitbrain/projectile")
    assert listed.mime_type == APP_MIME_TYPE and listed.meta == {"ui": {"csp": {}, "prefersBorder": True}}
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents) and content.mime_type == APP_MIME_TYPE
    assert content.meta == {"ui": {"csp": {}, "prefersBorder": True}}  # no domain: the host's restrictive default
    document = content.text
    head = document[: document.index(f'<script type="application/json" id="{APP_DATA_ID}">')]
    assert "Content-Security-Policy" in head and "default-src 'none'" in head and "connect-src 'none'" in head
    block = re.search(rf'<script type="application/json" id="{APP_DATA_ID}">(.*?)</script>', document, re.S)
    assert block is not None and "<" not in block.group(1)  # nothing in it the HTML parser reads
    data = json.loads(block.group(1))
    assert data["html"] == projectile.target.html  # exactly as the registry assembles it
    assert data["widget"] == "projectile" and data["values"] == dict(projectile.values)
    assert [t["name"] for t in data["tools"]] == [s.name for s in specs_for(projectile)]


def test_a_policy_that_allows_a_network_declares_it_to_the_host(tmp_path: Path) -> None:
    (tmp_path / "net.html").write_text("<script>SplitBrain.onApply(() => ({})); SplitBrain.ready()</script>")
    manifest = {
        "id": "net",
        "type": "apply",
        "csp": "default-src 'none'; script-src 'unsafe-inline'; connect-src https://tiles.example.org",
        "data": {"s": {"x": {"type": "number", "value": 1}}},
    }
    (tmp_path / "net.json").write_text(json.dumps(manifest))
    widget = app_target("net", targets_dir=tmp_path)
    running = sb.serve_mcp(widget)
    try:

        async def go() -> types.ReadResourceResult:
            async with client(running) as session:
                return await session.read_resource("ui://splitbrain/net")

        read = run(go())
    finally:
        running.stop()
        widget.close()
    domains = ["https://tiles.example.org"]
    assert read.contents[0].meta == {
        "ui": {"csp": {"connectDomains": domains, "resourceDomains": domains}, "prefersBorder": True}
    }


# -- the views behind the seam --------------------------------------------------------------------


def test_a_call_waits_for_the_view_its_host_renders_and_answers_what_the_view_reported(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    async def go() -> tuple[dict[str, Any], AppView]:
        async with client(server) as session:
            view = AppView(session)
            called = asyncio.ensure_future(
                structured(session, "projectile__set_parameters", {"values": {"launch.angle": 30}})
            )
            await asyncio.sleep(0.3)  # the host is still rendering the view
            assert not called.done()
            await view.attach()
            await view.serve()
            return await called, view

    result, view = run(go())
    assert result["ok"] and result["views_applied"] == 1, result
    assert result["state"]["held"]["launch.angle"] == 30  # what the view's page held
    assert [r["op"] for r in view.requests] == ["apply"]
    assert projectile.values["launch.angle"] == 30


def test_a_client_that_renders_no_app_hears_no_view_at_once_and_the_change_is_kept(
    server: McpServer, projectile: sb.TargetWidget
) -> None:
    async def go() -> dict[str, Any]:
        async with client(server, apps=False) as session:
            return await structured(session, "projectile__set_parameters", {"values": {"launch.speed": 12}})

    result = run(go())
    assert result["ok"] is False and result["error"]["code"] == "no_view", result
    assert "no MCP App view" in result["error"]["message"] and result["kept"] is True
    assert projectile.values["launch.speed"] == 12  # a view that renders later applies it once ready


def test_every_view_gets_each_request_and_the_first_reply_wins(server: McpServer, projectile: sb.TargetWidget) -> None:
    async def go() -> tuple[dict[str, Any], AppView, AppView]:
        async with client(server) as session:
            answering, silent = AppView(session), AppView(session, silent=True)
            await answering.attach()
            await silent.attach()
            await answering.sync()
            await silent.sync()
            called = asyncio.ensure_future(
                structured(session, "projectile__set_parameters", {"values": {"launch.angle": 20}})
            )
            await asyncio.gather(silent.serve(rounds=1), answering.serve(rounds=2))
            return await called, answering, silent

    result, answering, silent = run(go())
    assert result["ok"] and result["views_applied"] == 1
    assert [r["id"] for r in silent.requests] == [r["id"] for r in answering.requests]  # both were sent it
    assert projectile.views == 2


def test_a_view_that_attaches_while_a_call_waits_gets_it(server: McpServer, projectile: sb.TargetWidget) -> None:
    """The first view never answers (a chat closed it without a teardown); the call is still answered by
    the view the host renders next."""

    async def go() -> tuple[dict[str, Any], AppView]:
        async with client(server) as session:
            gone = AppView(session, silent=True)
            await gone.attach()
            await gone.sync()
            called = asyncio.ensure_future(
                structured(session, "projectile__set_parameters", {"values": {"launch.height": 5}})
            )
            await gone.sync(wait_s=2)
            late = AppView(session)
            await late.attach()
            await late.serve(rounds=2)
            return await called, late

    result, late = run(go())
    assert result["ok"], result
    assert late.values["launch.height"] == 5 and [r["op"] for r in late.requests] == ["apply"]


def test_a_view_that_leaves_or_falls_silent_is_detached(
    server: McpServer, projectile: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> list[int]:
        async with client(server) as session:
            first, second = AppView(session), AppView(session)
            await first.attach()
            await second.attach()
            await first.sync()
            await second.sync()
            seen = [projectile.views]
            await first.leave()
            seen.append(projectile.views)
            monkeypatch.setattr(_app_views, "STALE_S", 0.0)
            await asyncio.sleep(0.05)
            answer = await structured(session, SYNC_TOOL, {"view_id": second.view_id, "messages": []})
            seen.append(projectile.views)
            assert answer["ok"] is False and answer["error"]["code"] == "no_view", answer
            return seen

    assert run(go()) == [2, 1, 0]


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ("not a list", "messages: expected a list"),
        ([{"kind": "event", "type": "ready"}] * (_app_views.MAX_MESSAGES + 1), "at most 256"),
        ([{"kind": "chat", "text": "hello"}], "messages[0]: expected a reply or an event"),
        ([{"kind": "event", "view_id": "app-someone-else", "type": "ready"}], "messages[0]: view_id is not"),
        ([{"kind": "event", "view_id": "SELF", "type": "state", "payload": {"x": "y" * (1 << 20)}}], "bytes of JSON"),
    ],
)
def test_what_a_view_sends_is_checked_before_anything_is_taken(
    server: McpServer, projectile: sb.TargetWidget, messages: Any, says: str
) -> None:
    async def go() -> dict[str, Any]:
        async with client(server) as session:
            view = AppView(session)
            await view.attach()
            sent = (
                [{**m, "view_id": view.view_id} if m.get("view_id") == "SELF" else m for m in messages]
                if isinstance(messages, list)
                else messages
            )
            return await structured(session, SYNC_TOOL, {"view_id": view.view_id, "messages": sent})

    answer = run(go())
    assert (
        answer["ok"] is False and answer["error"]["code"] == "invalid_value" and says in answer["error"]["message"]
    ), answer
    assert projectile.views == 0  # not even the well-formed messages of a refused exchange were taken


def test_an_unknown_view_or_widget_and_a_long_wait_are_refused(server: McpServer) -> None:
    async def go() -> list[dict[str, Any]]:
        async with client(server) as session:
            return [
                await structured(session, SYNC_TOOL, {"view_id": "app-0-none"}),
                await structured(session, ATTACH_TOOL, {"widget": "nothing"}),
                await structured(
                    session,
                    SYNC_TOOL,
                    {
                        "view_id": (await structured(session, ATTACH_TOOL, {"widget": "projectile"}))["view_id"],
                        "wait_s": 600,
                    },
                ),
            ]

    unknown, widget, wait = run(go())
    assert unknown["error"]["code"] == "no_view" and "attach again" in unknown["error"]["message"]
    assert widget["error"]["code"] == "unknown_target" and "projectile" in widget["error"]["message"]
    assert wait["error"]["code"] == "invalid_value" and "wait_s" in wait["error"]["message"]


# -- HTTP: a browser-based client ------------------------------------------------------------------


def test_an_admitted_origin_gets_cors_answers_and_no_other_does(server: McpServer) -> None:
    headers = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    admitted = httpx2.options(server.url, headers={"Origin": ORIGIN, **headers})
    other = httpx2.options(server.url, headers={"Origin": "http://127.0.0.1:2", **headers})
    no_token = httpx2.post(server.url, headers={"Origin": ORIGIN}, json={})
    assert admitted.status_code == 200 and admitted.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in admitted.headers["access-control-allow-headers"].lower()
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
    assert no_token.status_code == 401  # a preflight is answered; a request still needs the token


def test_the_cli_serves_app_targets_over_stdio_without_a_browser() -> None:
    import anyio
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> tuple[list[types.Tool], list[str]]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "splitbrain_widget", "mcp", "--apps", "projectile"]
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write, extensions=APPS) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            resources = [str(r.uri) for r in (await session.list_resources()).resources]
            return tools, resources

    with ThreadPoolExecutor(1) as pool:
        tools, resources = pool.submit(anyio.run, go).result()
    by_name = {t.name: t for t in tools}
    assert by_name["projectile__set_parameters"].meta["ui"]["resourceUri"] == "ui://splitbrain/projectile"  # type: ignore[index]
    assert ATTACH_TOOL in by_name and "projectile__advance" not in by_name  # a chat's page runs in real time
    assert "ui://splitbrain/projectile" in resources


def test_a_server_of_every_live_widget_serves_an_app_widget_before_any_view(projectile: sb.TargetWidget) -> None:
    """Its views come with the calls, so it cannot wait for one to be listed (a notebook widget waits
    for its view to attach)."""
    running = sb.serve_mcp()
    try:

        async def go() -> list[str]:
            async with client(running) as session:
                return [t.name for t in await every_tool(session)]

        names = run(go())
    finally:
        running.stop()
    assert projectile.views == 0 and "projectile__set_parameters" in names and ATTACH_TOOL in names

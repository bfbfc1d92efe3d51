"""The kernel's one MCP server: :func:`serve_mcp` starts it (or returns it), :class:`McpServer` is its handle."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._catalog import Catalog

if TYPE_CHECKING:
    from ..agent import Skill
    from ..widget import TargetWidget
    from ._http import HttpServer
    from ._hub import Hub

SERVER_KEY = "splitbrain"
CLIENTS = ("claude-code", "cursor", "vscode", "jupyter-ai", "marimo", "claude-desktop")


class McpServer:
    """A running MCP server: where it is (``url``), its ``token``, client snippets and :meth:`stop`.

    The token is held here only: never in a trait, the transcript, the audit log or a saved
    notebook (its ``repr`` hides it)."""

    def __init__(self, hub: Hub, http: HttpServer, token: str) -> None:
        self._hub = hub
        self._http = http
        self._token = token

    @property
    def url(self) -> str:
        return self._http.url

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def token(self) -> str:
        return self._token

    @property
    def running(self) -> bool:
        return self._http.running

    def widgets(self) -> list[dict[str, Any]]:
        """The widgets served now: id, target, title, views, tool names, resources."""
        return self._hub.widgets()

    def config(self, client: str = "claude-code") -> str:
        """A paste-ready snippet that points ``client`` (one of :data:`CLIENTS`) at this server."""
        headers = {"Authorization": f"Bearer {self._token}"}
        entry = {"url": self.url, "headers": headers}
        if client == "claude-code":
            header = f'--header "Authorization: Bearer {self._token}"'
            return f"claude mcp add --transport http {SERVER_KEY} {self.url} {header}"
        if client == "cursor":  # ~/.cursor/mcp.json or .cursor/mcp.json in the project
            return json.dumps({"mcpServers": {SERVER_KEY: entry}}, indent=2)
        if client == "vscode":  # .vscode/mcp.json
            return json.dumps({"servers": {SERVER_KEY: {"type": "http", **entry}}}, indent=2)
        if client == "jupyter-ai":  # its agents (Claude Code, Codex, ...) read a project's .mcp.json
            return json.dumps({"mcpServers": {SERVER_KEY: {"type": "http", **entry}}}, indent=2)
        if client == "marimo":  # marimo.toml (or pyproject's [tool.marimo])
            return (
                f"[mcp.mcpServers.{SERVER_KEY}]\n"
                f'url = "{self.url}"\n'
                f'headers = {{ Authorization = "Bearer {self._token}" }}'
            )
        if client == "claude-desktop":  # speaks stdio: a bridge to this URL, or the headless server
            return json.dumps(
                {
                    "mcpServers": {
                        SERVER_KEY: {
                            "command": "npx",
                            "args": ["-y", "mcp-remote", self.url, "--header", f"Authorization: Bearer {self._token}"],
                        }
                    }
                },
                indent=2,
            )
        raise ValueError(f"config(client={client!r}): expected one of {', '.join(CLIENTS)}")

    def stop(self) -> None:
        """Stop serving and free the port (a later :func:`serve_mcp` starts a new server)."""
        global _SERVER
        with _LOCK:
            self._http.stop()
            self._hub.close()
            if _SERVER is self:
                _SERVER = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<McpServer {self.url} {state}, {len(self.widgets())} widget(s), token hidden>"


_LOCK = threading.RLock()
_SERVER: McpServer | None = None


def serve_mcp(
    *widgets: TargetWidget,
    port: int = 0,
    token: str | None = None,
    origins: Iterable[str] = (),
    skills: Iterable[Skill] = (),
) -> McpServer:
    """Serve widgets' tools over MCP (streamable HTTP on 127.0.0.1) and return the running server.

    Args:
        widgets: the widgets to serve; none serves every live widget of the process, the ones made
            later too (a closed widget leaves).
        port: the port to listen on; 0 picks a free one (``server.url`` says which).
        token: the bearer token clients must send; a random one unless given.
        origins: the ``Origin`` values admitted (a browser-based client's); requests with any other
            ``Origin`` header are refused (403). None is admitted by default.
        skills: skills served as prompts (beside the ones each target ships).

    Returns the server already running when there is one (serving these widgets too); ``port``,
    ``token`` and ``origins`` must then match it or be left out.

    Raises:
        ImportError: the ``mcp`` package is missing (``pip install 'splitbrain-widget[mcp]'``).
        OSError: the port cannot be listened on.
    """
    global _SERVER
    from ..core._lesson import require
    from ..core._platform import desktop_only

    desktop_only("the MCP server", "serve the notebook's widgets from a Jupyter on a computer")
    require(lambda policy: policy.mcp.enabled, "does not let the MCP server start")
    with _LOCK:
        if _SERVER is not None and _SERVER.running:
            _check_same(_SERVER, port, token, tuple(origins))
            _SERVER._hub.catalog.add(widgets)
            _SERVER._hub.widgets_changed()
            return _SERVER
        _require_sdk()
        from ._http import HttpServer
        from ._hub import Hub

        catalog = Catalog(widgets if widgets else None, tuple(skills))
        hub = Hub(catalog)
        secret = token if token is not None else secrets.token_urlsafe(32)
        if not secret or any(c.isspace() for c in secret):
            raise ValueError("serve_mcp(token=...): expected a non-empty token without spaces")
        http = HttpServer(hub.server(), port=port, token=secret, origins=tuple(origins))
        try:
            http.start()
        except BaseException:
            hub.close()
            raise
        _SERVER = McpServer(hub, http, secret)
        return _SERVER


def _check_same(server: McpServer, port: int, token: str | None, origins: tuple[str, ...]) -> None:
    if port not in (0, server.port):
        raise ValueError(f"serve_mcp(port={port}): the kernel's MCP server runs on port {server.port}; stop() it first")
    if token is not None and token != server.token:
        raise ValueError("serve_mcp(token=...): the kernel's MCP server runs with another token; stop() it first")
    if origins:
        raise ValueError("serve_mcp(origins=...): the kernel's MCP server is running; stop() it to change origins")


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "serve_mcp needs the MCP SDK: pip install 'splitbrain-widget[mcp]' (or pip install mcp)"
        ) from exc

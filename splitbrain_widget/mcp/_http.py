"""Streamable HTTP on 127.0.0.1: the SDK's app behind a bearer token, in uvicorn on a daemon thread.

Both protocol eras on the one path: a handshake-era session (``Mcp-Session-Id``) and the 2026-07-28
era's single-exchange POSTs, whose ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` headers the SDK
checks against the body (a mismatch is a 400 with the spec's code).

Every route needs the token (401 without it, compared in constant time); the SDK's transport
security then admits the exact ``Host`` of this server only (421 otherwise) and no ``Origin`` but this
server's own and the ones listed (403: the SDK's default admits ``http://localhost:*``, the notebook
page's own origin, which a page of that origin could use; this server serves no page, so its own
origin is no page's). An admitted origin gets CORS answers too (a browser-based client, such as a
web chat that renders MCP Apps, sends a preflight without the token first). The listening socket
has ``TCP_NODELAY``, which accepted connections inherit (without it each reply on a reused
connection waits ~45 ms for the peer's delayed ACK).
"""

from __future__ import annotations

import asyncio
import hmac
import socket
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

HOST = "127.0.0.1"
PATH = "/mcp"
START_TIMEOUT_S = 30.0
# What a browser-based client sends besides simple headers (the SDK's own client, with the token).
CORS_HEADERS = [
    "authorization",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
]
GRACE_S = 1  # how long a stop waits for open streams (an idle client's event stream) before closing them


def _listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"serve_mcp(port={port}): cannot listen on {HOST}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class _RequireToken:
    """401 for any HTTP request without ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "unauthorized: this server needs Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class HttpServer:
    """An SDK server (the hub's; the benchmark's bare one) served over streamable HTTP until :meth:`stop`."""

    def __init__(self, server: Server[Any], *, port: int, token: str, origins: tuple[str, ...] = ()) -> None:
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        self._sock = _listening_socket(port)
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}{PATH}"
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{HOST}:{self.port}", f"localhost:{self.port}"],
            allowed_origins=[f"http://{HOST}:{self.port}", f"http://localhost:{self.port}", *origins],
        )
        app = server.streamable_http_app(streamable_http_path=PATH, transport_security=security, host=HOST)
        served: Any = _RequireToken(app, token)
        if origins:
            from starlette.middleware.cors import CORSMiddleware

            served = CORSMiddleware(
                served,
                allow_origins=list(origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=CORS_HEADERS,
                expose_headers=["mcp-session-id"],
            )
        config = uvicorn.Config(
            served,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=GRACE_S,
            access_log=False,
        )
        self._uvicorn = uvicorn.Server(config)
        self._failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="splitbrain-mcp-http", daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._uvicorn.serve(sockets=[self._sock]))
        except BaseException as exc:  # handed to start() or logged by stop()
            self._failed.append(exc)

    def start(self) -> None:
        import time

        started = threading.Event()
        original = self._uvicorn.startup

        async def startup(sockets: Any = None) -> None:
            await original(sockets=sockets)
            started.set()

        self._uvicorn.startup = startup  # type: ignore[method-assign]
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not started.wait(0.1):  # woken early when the thread dies
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the MCP server on port {self.port} did not start: {self._failed!r}")
        if self._uvicorn.should_exit:
            raise RuntimeError(f"the MCP server on port {self.port} did not start: {self._failed!r}")

    def stop(self) -> None:
        """Stop serving and free the port (open streams get :data:`GRACE_S`, then close)."""
        self._uvicorn.should_exit = True
        self._thread.join(GRACE_S + 5)
        if self._thread.is_alive():
            self._uvicorn.force_exit = True
            self._thread.join(5)
        self._sock.close()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._uvicorn.should_exit

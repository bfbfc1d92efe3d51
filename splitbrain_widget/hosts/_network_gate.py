"""The headless browser's only way to the network: a loopback proxy that refuses what no manifest allows.

Defence in depth for headless pages (docs/protocol.md, *Bounds*): whatever a target page's policy
says, its browser sends every request through this proxy (Chromium's ``--proxy-server``, loopback
included), and the proxy lets through only what the page's manifest ``csp`` names
(:func:`~splitbrain_widget.registry.network_sources`), refusing and counting the rest. So a policy
mistake can never become network access from the user's machine. Playwright's request routing
would be the natural tool, but it does not see requests of sandboxed srcdoc frames (measured on
Chromium 156, Playwright 1.65: a fetch from ``<iframe sandbox="allow-scripts" srcdoc>`` reached a
loopback server with ``context.route("**/*")`` installed).

Each browser context has a proxy listener of its own (its own port), which says what it may reach:
nothing for the engine's shared context, a manifest's sources for a page that declares some. The
listeners run on the headless engine's asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..manifest import registry

log = logging.getLogger("splitbrain_widget.headless")

MAX_HEAD_BYTES = 16 << 10  # a request's head (request line and headers) the proxy reads
HEAD_TIMEOUT_S = 10.0
MAX_KEPT = 200  # the URLs of the last refused requests kept


class NetworkGate:
    """One proxy listener: what it lets through (``sources``), what it refused. :func:`open_gate` starts one."""

    def __init__(self, sources: tuple[str, ...]) -> None:
        self.sources = sources
        self.refused: list[str] = []  # the last MAX_KEPT requests refused
        self.refused_count = 0
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def server(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def playwright_proxy(self) -> dict[str, str]:
        """The ``proxy`` option of a Playwright browser or context: every request here, loopback too."""
        return {"server": self.server, "bypass": "<-loopback>"}

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        method, target = (parts[0], parts[1]) if len(parts) >= 2 else ("", "")
        url = f"https://{target}" if method == "CONNECT" else target
        if not registry.network_allowed(url, self.sources):
            await self._refuse(writer, f"{method} {url}")
            return
        await _forward(method, target, lines, reader, writer)

    async def _refuse(self, writer: asyncio.StreamWriter, what: str) -> None:
        self.refused_count += 1
        self.refused.append(what[:300])
        del self.refused[:-MAX_KEPT]
        log.info("headless browser: refused %.200s (no manifest allows it)", what)
        with contextlib.suppress(Exception):
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        writer.close()


async def open_gate(sources: tuple[str, ...] = ()) -> NetworkGate:
    """A running proxy on 127.0.0.1 (a free port) that lets through ``sources`` and refuses the rest."""
    gate = NetworkGate(sources)
    gate._server = await asyncio.start_server(gate._serve, "127.0.0.1", 0, limit=MAX_HEAD_BYTES)
    gate.port = gate._server.sockets[0].getsockname()[1]
    return gate


async def _forward(
    method: str, target: str, lines: list[str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A request a manifest allows: a CONNECT tunnel, or a plain HTTP request sent on (one per connection)."""
    from urllib.parse import urlsplit

    head = b""
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
    else:
        parts = urlsplit(target)
        host, port = parts.hostname or "", str(parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [line for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection:"))]
        version = lines[0].rsplit(" ", 1)[-1]
        head = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")
    try:
        up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), int(port)), 10)
    except (OSError, ValueError, TimeoutError):
        with contextlib.suppress(Exception):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        writer.close()
        return
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    else:
        up_writer.write(head)
    await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()

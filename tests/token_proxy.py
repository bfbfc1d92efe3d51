"""A loopback proxy that adds a bearer token to every HTTP/1.1 request it forwards, for clients that
cannot send one (the MCP conformance suite takes a URL only).

It changes nothing else but its own address: a ``Host`` or ``Origin`` naming the proxy becomes the
server's, so the server sees what a client talking to it directly sends; any other ``Host`` or
``Origin`` (the suite's DNS-rebinding probes) passes unchanged and meets the server's own checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any


class TokenProxy:
    """``with TokenProxy(server_port, token) as proxy:`` serves on ``proxy.port`` until the block ends."""

    def __init__(self, server_port: int, token: str) -> None:
        self.server_port = server_port
        self.token = token
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="token-proxy", daemon=True)
        self._server: asyncio.Server | None = None

    def __enter__(self) -> TokenProxy:
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("the token proxy did not start")
        return self

    def __exit__(self, *_exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        """Stop listening and end every connection's tasks before the loop stops."""
        assert self._server is not None
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    def _rewrites(self) -> dict[bytes, bytes]:
        own: dict[bytes, bytes] = {}
        for host in ("127.0.0.1", "localhost"):
            own[f"host: {host}:{self.port}".encode()] = f"Host: {host}:{self.server_port}".encode()
            own[f"origin: http://{host}:{self.port}".encode()] = f"Origin: http://{host}:{self.server_port}".encode()
        return own

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.server_port)
        await asyncio.gather(self._requests(reader, up_writer), _pipe(up_reader, writer))

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = f"Authorization: Bearer {self.token}".encode()
        own = self._rewrites()
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                length = 0
                for line in lines[1:]:
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                rest = [own.get(line.lower(), line) for line in lines[1:]]
                writer.write(lines[0] + b"\r\n" + header + b"\r\n" + b"\r\n".join(rest))
                if length:
                    writer.write(await reader.readexactly(length))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()

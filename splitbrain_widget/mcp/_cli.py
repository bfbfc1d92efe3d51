"""``python -m splitbrain_widget mcp [TARGET...] [--targets-dir D] [--apps] [--http] [--port P] [--token T]``.

Headless pages of the targets (every target found when none is named), served over stdio (the
default: what Claude Desktop, Cursor or a CI job starts) or streamable HTTP (``--http``, with a
token printed on stderr unless given). The pages run on a virtual clock, so ``advance``, ``record``
and ``sweep`` are among their tools. With ``--apps`` the targets are MCP Apps instead: their pages run
in the views a chat host renders (no browser here), and the tools that change them say so.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..widget import TargetWidget


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m splitbrain_widget mcp", description=__doc__.split("\n\n")[1])
    p.add_argument("targets", nargs="*", help="target ids or paths (default: every target found)")
    p.add_argument("--targets-dir", action="append", default=[], help="a folder of targets (repeatable)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    p.add_argument("--port", type=int, default=0, help="the HTTP port (default: a free one)")
    p.add_argument("--token", default=os.environ.get("SPLITBRAIN_MCP_TOKEN"), help="the HTTP bearer token")
    p.add_argument("--seed", type=int, default=0, help="the pages' Math.random seed")
    p.add_argument(
        "--apps", action="store_true", help="serve the targets as MCP Apps: their pages run in the chat host's views"
    )
    p.add_argument(
        "--origin",
        action="append",
        default=[],
        help="an Origin admitted over HTTP, CORS included (a browser-based client's; repeatable)",
    )
    return p


def _wire() -> tuple[Any, Any]:
    """The protocol's own stdin / stdout, with fd 0 and 1 pointed elsewhere before any page starts:
    Chromium and every other child inherits fd 1, and a stray byte there would break the wire."""
    wire_in = os.fdopen(os.dup(0), "r", encoding="utf-8", errors="replace")
    wire_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def open_pages(names: list[str], dirs: list[str], seed: int, *, apps: bool = False) -> list[TargetWidget]:
    """A widget per target: a headless page, or (``apps``) one whose home is the chat's App views."""
    from ..headless import HeadlessTarget
    from ..manifest.registry import list_targets
    from ._apps import app_target

    chosen = names or [t.id for t in list_targets(*dirs)]
    pages: list[TargetWidget] = []
    try:
        for name in chosen:
            if apps:
                pages.append(app_target(name, targets_dir=list(dirs)))
            else:
                pages.append(HeadlessTarget(name, targets_dir=list(dirs), seed=seed))
    except BaseException:
        for page in pages:
            page.close()
        raise
    return pages


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from ..core._lesson import LessonError, LessonRefused, require
    from ..manifest import ManifestError
    from ..manifest.registry import TargetError

    try:  # before anything starts: a lesson that keeps MCP off keeps it off here too
        require(lambda policy: policy.mcp.enabled, "does not let the MCP server start")
    except (LessonError, LessonRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wire = None if args.http else _wire()
    try:
        pages = open_pages(args.targets, args.targets_dir, args.seed, apps=args.apps)
    except (TargetError, ManifestError, ValueError, LessonRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.http:
            return _serve_http(pages, args.port, args.token, tuple(args.origin))
        assert wire is not None
        return _serve_stdio(pages, *wire)
    finally:
        for page in pages:
            page.close()


def _serve_stdio(pages: list[TargetWidget], wire_in: Any, wire_out: Any) -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    from ._catalog import Catalog
    from ._hub import Hub

    hub = Hub(Catalog(pages))
    server = hub.server()

    async def run() -> None:
        async with stdio_server(anyio.wrap_file(wire_in), anyio.wrap_file(wire_out)) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        hub.close()
    return 0


def _serve_http(pages: list[TargetWidget], port: int, token: str | None, origins: tuple[str, ...] = ()) -> int:
    import threading

    from ._server import serve_mcp

    server = serve_mcp(*pages, port=port, token=token, origins=origins)
    print(f"serving {len(pages)} page(s) at {server.url}", file=sys.stderr)
    if token is None:
        print(f"token: {server.token}", file=sys.stderr)
    print(server.config("claude-code"), file=sys.stderr)
    try:
        threading.Event().wait()  # until Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0

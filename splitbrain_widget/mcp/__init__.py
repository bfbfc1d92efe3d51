"""The widgets' tools as a Model Context Protocol server, for the agents people already use.

.. code-block:: python

    import splitbrain_widget as sb

    sim = sb.TargetWidget("projectile")
    server = sb.serve_mcp()          # every live widget of this kernel; or sb.serve_mcp(sim), sim.serve_mcp()
    print(server.config("claude-code"))

One server per kernel (``serve_mcp`` again returns it, serving the widgets given too), streamable
HTTP on 127.0.0.1 behind a bearer token, on a daemon thread of its own, so a call is answered while
a cell runs. Headless, without a notebook: ``python -m splitbrain_widget mcp [TARGET...]`` (stdio, or
``--http``). The tools are the built-in agent's (``agent._tools.TOOLS``), named
``<widget>__<tool>``; see ``docs/mcp.md``. As MCP Apps (a chat renders the page beside a call):
``python -m splitbrain_widget mcp --apps``, or ``sb.serve_mcp(app_target("projectile"))``.

Layer 9, above the faces: imports every layer's public names, and nothing imports it but the
package's lazy ``serve_mcp``. The ``mcp`` SDK is imported when a server starts.
"""

from __future__ import annotations

from ._apps import app_target
from ._cli import main as cli_main
from ._server import CLIENTS, McpServer, serve_mcp

__all__ = ["CLIENTS", "McpServer", "app_target", "cli_main", "serve_mcp"]

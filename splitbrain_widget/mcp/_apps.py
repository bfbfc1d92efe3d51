"""MCP Apps: a served widget whose home is the chat's own views (``hosts._app_views.AppViews``).

- **The resource.** ``ui://splitbrain/<id>`` (``text/html;profile=mcp-app``): the App view's document
  (``js/app/app_view.js``) holding the target's page exactly as the registry assembles it (target API,
  kit, bindings, its policy), the widget's tools as data, and ``_meta.ui.csp`` saying which network
  the policy lets the page reach (none by default: the host's restrictive default).
- **The tools.** Every tool of such a widget that changes the page carries ``_meta.ui.resourceUri``,
  so the host renders the page beside the call; the call waits (within its deadline) for that view
  to attach, is validated, approved and audited as any call, applied on every view the host keeps,
  and answered with what a view reported, or ``no_view``. Two tools only the views call
  (``_meta.ui.visibility: ["app"]``, listed to clients that negotiated MCP Apps):
  :data:`ATTACH_TOOL` and :data:`SYNC_TOOL`, the views' one channel to the server.

Widgets of this kind come from :func:`app_target` (``python -m splitbrain_widget mcp --apps``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent import PAGE_DATA_NOTE, TOOLS, readable_observables, specs_for
from ..core._lesson import LessonError, require
from ..hosts._app_views import POLL_S, AppViewError, AppViews
from ..manifest.registry import network_sources
from ..widget import TargetWidget
from ._results import OUTPUT_SCHEMA

if TYPE_CHECKING:
    from ._catalog import Catalog, McpTool, Served

EXTENSION_ID = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
UI_PREFIX = "ui://splitbrain/"
ATTACH_TOOL = "splitbrain_app_attach"
SYNC_TOOL = "splitbrain_app_sync"
APP_TOOLS = (ATTACH_TOOL, SYNC_TOOL)
VIEW_WAIT_S = 20.0  # how long a call from an Apps client waits for the view its host renders for it


def app_target(
    target: str | Path,
    *,
    targets_dir: str | Path | list[str | Path] | None = None,
    timeout: float = 30.0,
) -> TargetWidget:
    """A widget whose only home is the MCP App views a chat host renders (no browser of ours).

    ``timeout``: a call's deadline, which covers the host rendering the view and the page getting ready.
    A lesson policy that turns MCP Apps off refuses it (:class:`~splitbrain_widget.LessonRefused`).
    """
    require(lambda policy: policy.mcp.enabled and policy.mcp.apps, "does not let targets be served as MCP Apps")
    widget = TargetWidget(target, targets_dir=targets_dir, timeout=timeout, headless=False)
    widget.host = AppViews(widget)
    return widget


def views_of(widget: TargetWidget) -> AppViews | None:
    host = widget.host
    return host if isinstance(host, AppViews) else None


def client_renders_apps(ctx: Any) -> bool:
    """Whether the client negotiated MCP Apps (the extension, with the App MIME type)."""
    from mcp.server.apps import client_supports_apps

    return bool(client_supports_apps(ctx))


def resource_uri(served: Served) -> str:
    return f"{UI_PREFIX}{served.id}"


def ui_csp(served: Served) -> dict[str, list[str]]:
    """``_meta.ui.csp``: the network the target's policy lets it reach (nothing, for the default policy)."""
    sources = [s for s in network_sources(served.widget.target.manifest.csp) if s != "*"]
    return {"connectDomains": sources, "resourceDomains": sources} if sources else {}


def tool_meta(tool: McpTool) -> dict[str, Any] | None:
    """``_meta`` of a served tool: the page beside a call that changes it, where the page is an App's."""
    if not renders_page(tool.served, tool.spec.name):
        return None
    uri = resource_uri(tool.served)
    return {"ui": {"resourceUri": uri}, "ui/resourceUri": uri}  # the flat key: hosts of the first drafts


def renders_page(served: Served, tool: str) -> bool:
    """Whether a call of ``served``'s tool ``tool`` has the page rendered beside it (:func:`tool_meta`)."""
    if views_of(served.widget) is None:
        return False
    return any(t.name == tool and not t.read_only for t in TOOLS)


def app_tools() -> list[Any]:
    """The tools only App views call."""
    import mcp_types as types

    app_only = {"ui": {"visibility": ["app"]}}
    return [
        types.Tool(
            name=ATTACH_TOOL,
            description="For the MCP App view of a simulation: attach it to its widget (not for the model).",
            input_schema={
                "type": "object",
                "properties": {"widget": {"type": "string", "maxLength": 64}},
                "required": ["widget"],
                "additionalProperties": False,
            },
            output_schema=OUTPUT_SCHEMA,
            _meta=app_only,
        ),
        types.Tool(
            name=SYNC_TOOL,
            description="For the MCP App view of a simulation: its messages up, its page's requests down.",
            input_schema={
                "type": "object",
                "properties": {
                    "view_id": {"type": "string", "maxLength": 64},
                    "messages": {"type": "array", "items": {"type": "object"}},
                    "wait_s": {"type": "number", "minimum": 0, "maximum": POLL_S},
                },
                "required": ["view_id"],
                "additionalProperties": False,
            },
            output_schema=OUTPUT_SCHEMA,
            _meta=app_only,
        ),
    ]


def resources(catalog: Catalog) -> list[Any]:
    import mcp_types as types

    return [
        types.Resource(
            name=f"{served.id} app",
            title=served.title,
            uri=resource_uri(served),
            description=f"{served.title} as an MCP App: the page, steered by this server's tools.",
            mime_type=APP_MIME_TYPE,
            _meta={"ui": {"csp": ui_csp(served), "prefersBorder": True}},
        )
        for served in catalog.served()
        if views_of(served.widget) is not None
    ]


def find(catalog: Catalog, uri: str) -> Served | None:
    if not uri.startswith(UI_PREFIX):
        return None
    served = catalog.find(uri[len(UI_PREFIX) :])
    return served if served is not None and views_of(served.widget) is not None else None


def document(catalog: Catalog, served: Served) -> Any:
    """The ``resources/read`` answer: the App view's document for ``served``."""
    import mcp_types as types

    widget = served.widget
    data = {
        "widget": served.id,
        "target": widget.target_id,
        "uri": resource_uri(served),
        "title": served.title,
        "height": int(widget.height),
        "values": dict(widget.values),
        "poll_s": POLL_S,
        "page_data_note": PAGE_DATA_NOTE,
        "observables": _readable(widget),
        "tools": [
            {"name": spec.name, "description": spec.description, "inputSchema": spec.schema}
            for spec in specs_for(widget, catalog.skills)
        ],
    }
    html = widget.target.app_html(data)
    meta = {"ui": {"csp": ui_csp(served), "prefersBorder": True}}
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=resource_uri(served), mime_type=APP_MIME_TYPE, text=html, _meta=meta)]
    )


async def call(catalog: Catalog, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An App view's call of :data:`ATTACH_TOOL` or :data:`SYNC_TOOL`, answered as a tool result's payload."""
    try:
        if name == ATTACH_TOOL:
            widget, views = _views(catalog, arguments.get("widget"))
            return {
                "ok": True,
                "view_id": views.attach(),
                "values": views.values(),
                "target": views.target_id(),
                "observables": _readable(widget),
                "poll_s": POLL_S,
            }
        view_id = arguments.get("view_id")
        apps = ((s.widget, views_of(s.widget)) for s in catalog.served())
        found = next(((w, v) for w, v in apps if v is not None and v.knows(view_id)), None)
        if found is None:
            raise AppViewError("no_view", f"view_id {view_id!r}: no such App view here (attach again)")
        widget, owner = found
        wait_s = arguments.get("wait_s", 0)
        if isinstance(wait_s, bool) or not isinstance(wait_s, int | float) or not 0 <= wait_s <= POLL_S:
            raise AppViewError("invalid_value", f"wait_s: expected seconds from 0 to {POLL_S}, got {wait_s!r}")
        requests = await owner.exchange(str(view_id), arguments.get("messages", []), float(wait_s))
        return {
            "ok": True,
            "requests": requests,
            "values": owner.values(),
            "target": owner.target_id(),
            "observables": _readable(widget),
        }
    except AppViewError as exc:
        return {"ok": False, "error": {"code": exc.code, "message": str(exc)}}


def _views(catalog: Catalog, widget_id: Any) -> tuple[TargetWidget, AppViews]:
    served = catalog.find(widget_id) if isinstance(widget_id, str) else None
    views = views_of(served.widget) if served is not None else None
    if served is None or views is None:
        apps = [s.id for s in catalog.served() if views_of(s.widget) is not None]
        raise AppViewError("unknown_target", f"widget {widget_id!r}: no App widget of that id ({', '.join(apps)})")
    return served.widget, views


def _readable(widget: TargetWidget) -> list[str] | None:
    """The observables the view may put in the model's context (the lesson's; None: every one, []
    where the lesson cannot be read: nothing then)."""
    try:
        return readable_observables(widget)
    except LessonError:
        return []

"""Where requests go: the seam between the tool surface and the views that answer it.

The widget sends each request through its ``host`` and hears back through
``TargetWidget.receive_view_message`` (replies and events, from any thread). The comm host sends
over the widget's anywidget comm to the notebook views; a headless page or a test's fake view
implement the same one-method interface.
"""

from __future__ import annotations

from typing import Any, Protocol

from .protocol import RequestMessage


class ViewHost(Protocol):
    """Delivers kernel -> view requests; must not block on the page's answer."""

    def send_request(self, message: RequestMessage) -> None: ...


class CommHost:
    """The notebook's views, over the widget's comm (anywidget custom messages)."""

    def __init__(self, widget: Any) -> None:
        self._widget = widget

    def send_request(self, message: RequestMessage) -> None:
        self._widget.send(message)

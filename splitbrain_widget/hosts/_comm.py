"""The notebook's views: requests over the widget's anywidget comm.

Their answers come back through the kernel (``TargetWidget.receive_view_message``, from the shell
channel's tap or the kernel's loop: ``core._kernel_tap``).
"""

from __future__ import annotations

from typing import Any

from ..core._seam import Host
from ..protocol import RequestMessage


class CommHost(Host):
    """The notebook's views, over the widget's comm (anywidget custom messages)."""

    answers_through_kernel = True

    def __init__(self, widget: Any) -> None:
        self._widget = widget

    def send_request(self, message: RequestMessage) -> None:
        self._widget.send(message)

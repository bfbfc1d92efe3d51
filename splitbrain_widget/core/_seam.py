"""Where requests go: the seam between the tool surface and the views that answer it.

The widget sends each request through its ``host`` and hears back through
``TargetWidget.receive_view_message`` (replies and events, from any thread). The comm host sends
over the widget's anywidget comm to the notebook views; a headless page or a test's fake view
implement the same one-method interface.

It is also the one place that decides whether a call may wait for the page's answer where it
runs (:func:`answers_reach_caller`): a headless page or a fake view answers from its own thread, so
always; the comm's views answer through the kernel, which on some hosts reads them only after the
running cell. There a call from the cell does not wait: the drivers send it, keep its change, and
return ``deferred`` (docs/protocol.md section 3), and the call finishes once the cell has ended.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..protocol import RequestMessage
from . import _kernel_tap


class ViewHost(Protocol):
    """Delivers kernel -> view requests; must not block on the page's answer."""

    def send_request(self, message: RequestMessage) -> None: ...


class CommHost:
    """The notebook's views, over the widget's comm (anywidget custom messages)."""

    def __init__(self, widget: Any) -> None:
        self._widget = widget

    def send_request(self, message: RequestMessage) -> None:
        self._widget.send(message)


def answers_reach_caller(host: ViewHost, *, headless_page: bool = False, awaiting: bool = False) -> bool:
    """Whether a call that waits on this thread can hear its answer from ``host`` before its cell ends.

    ``headless_page``: the call goes to a headless page (the widget's fallback), which answers from
    its own thread. ``awaiting``: the call is awaited (an ``await`` in a cell runs on the kernel's
    loop, which reads the shell stream between awaits where the kernel has no shell-channel thread).
    The kernel's side of the answer is :func:`_kernel_tap.replies_reach_this_thread`: it judges the
    kernel by what it has (a shell-channel thread or not), never by its version alone.
    """
    if headless_page or not isinstance(host, CommHost):
        return True
    return _kernel_tap.replies_reach_this_thread(awaiting=awaiting)


def blocking_wait_hears(sim: Any) -> bool:
    """Whether a call that blocks this thread until ``sim``'s page answers (``record``, ``agent.ask``)
    can hear the page before the running cell ends: a headless page always, a notebook view where
    the kernel reads its answers on another thread (ipykernel 7, or a thread of ours)."""
    return answers_reach_caller(sim.host, headless_page=sim.can_advance)


def cannot_hear_in_cell(what: str, instead: str) -> str:
    """Why ``what`` cannot run in this cell, and what to use: ``instead`` (an awaited twin, where the
    host's loop reads the page while a cell awaits) or, in marimo, the chat panel or a headless page."""
    where = _kernel_tap.describe()
    if _kernel_tap.in_marimo_cell():
        return (
            f"{what} in a cell cannot hear the page on {where}, so it would see no answer: use the "
            "chat panel, or a HeadlessTarget / a widget made with headless=True (simulated time)"
        )
    return (
        f"{what} in a cell cannot hear the page on {where} before the cell ends, so it would see no "
        f"answer: use {instead} in the cell instead (the kernel reads the page while a cell awaits), or a "
        "HeadlessTarget / a widget made with headless=True"
    )

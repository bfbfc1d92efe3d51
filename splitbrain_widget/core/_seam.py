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

from ..protocol import ErrorCode, RequestMessage
from . import _kernel_tap
from ._bridge import Bridge


class ViewHost(Protocol):
    """Delivers kernel -> view requests; must not block on the page's answer."""

    def send_request(self, message: RequestMessage) -> None: ...


class Hosted(Protocol):
    """What a host needs of the widget it serves (``TargetWidget`` is one; hosts never import it)."""

    bridge: Bridge
    values: Any  # the synced ``values`` trait: dotted path -> value
    target: Any  # the active ``manifest.registry.Target``

    def receive_view_message(self, content: Any) -> None: ...
    def expect_view(self, timeout: float) -> None: ...
    def values_echo_waits(self) -> bool:
        """Whether ``values`` is being assigned by a call's commit, whose request (sent next) carries them."""
        ...

    def observe(self, handler: Any, names: Any = ...) -> None: ...
    def unobserve(self, handler: Any, names: Any = ...) -> None: ...


class Host:
    """A home of the widget's calls behind the seam, with its part in a call's life.

    The drivers call each hook at its moment, whatever the host: the comm's views
    (``hosts._comm.CommHost``), a headless page, the headless page a widget falls back on while no
    view is displayed (``hosts._headless.FallbackHost``), a test's fake view. A plain
    :class:`ViewHost` gets the defaults here (:func:`as_host`).
    """

    # Its views answer through the kernel (the comm), which on some hosts reads them only after the
    # running cell; a page of our own (headless, a fake view) answers from its own thread.
    answers_through_kernel = False

    def send_request(self, message: RequestMessage) -> None:
        raise NotImplementedError

    def before_call(self, *, views: bool, view_expected: bool) -> None:
        """A call is about to look for a view (``views``: one is attached; ``view_expected``: one is on its way)."""

    def lost(self) -> bool:
        """Whether the view a call waits for went away on its own (a waiting call ends then)."""
        return False

    def call_settled(self, request_id: str) -> None:
        """A call's request was answered, or given up on."""

    def not_delivered(self, change: bool) -> tuple[ErrorCode, str, str] | None:
        """Why a call found no view, as (code, message, hint), where this host knows better than ``no_view``."""
        return None

    def answers_here(self) -> bool:
        """Whether a call sent now is answered from a thread of its own, whatever the kernel."""
        return not self.answers_through_kernel


class _PlainHost(Host):
    def __init__(self, host: ViewHost) -> None:
        self.host = host

    def send_request(self, message: RequestMessage) -> None:
        self.host.send_request(message)


def as_host(host: ViewHost | Host) -> Host:
    """``host`` with the seam's hooks: itself, or a plain :class:`ViewHost` with the defaults."""
    return host if isinstance(host, Host) else _PlainHost(host)


def answers_reach_caller(host: Host, *, awaiting: bool = False) -> bool:
    """Whether a call that waits on this thread can hear its answer from ``host`` before its cell ends.

    ``awaiting``: the call is awaited (an ``await`` in a cell runs on the kernel's loop, which reads
    the shell stream between awaits where the kernel has no shell-channel thread). The kernel's side
    of the answer is :func:`_kernel_tap.replies_reach_this_thread`: it judges the kernel by what it
    has (a shell-channel thread or not), never by its version alone.
    """
    if host.answers_here():
        return True
    return _kernel_tap.replies_reach_this_thread(awaiting=awaiting)


def blocking_wait_hears(sim: Any) -> bool:
    """Whether a call that blocks this thread until ``sim``'s page answers (``record``, ``agent.ask``)
    can hear the page before the running cell ends: a headless page always, a notebook view where
    the kernel reads its answers on another thread (ipykernel 7, or a thread of ours)."""
    return answers_reach_caller(as_host(sim.host))


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

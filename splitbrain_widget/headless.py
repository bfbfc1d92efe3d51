"""HeadlessTarget: a target's second home, a page in headless Chromium with the same tool surface.

A :class:`HeadlessTarget` *is* a :class:`~splitbrain_widget.TargetWidget` (its traits, both API
twins, the audit, the agent's toolset) whose host is a headless page instead of the notebook's
views: the tool surface is one implementation, and only the kernel <-> view hop differs
(``_headless_engine``: the view's own relay in a host page, the same sandboxed iframe, nonce
checks, CSP and message budget). Pages run on a virtual clock: :meth:`HeadlessTarget.advance`
moves simulated time forward faster than real time, and the same calls give the same observables.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .protocol import RequestMessage
from .widget import TargetWidget


class HeadlessHost:
    """The host seam's headless implementation: requests go to a :class:`HeadlessPage`."""

    def __init__(self, widget: TargetWidget, *, seed: int = 0, fps: float | None = None) -> None:
        from ._headless_engine import HeadlessPage

        self._widget = widget
        self._seed = seed
        self._fps = fps
        self.page = HeadlessPage(
            widget.target.headless_html(seed, fps),
            on_message=widget.receive_view_message,
            values=dict(widget.values),
            seed=seed,
            fps=fps,
        )
        # The page's relay reads the kernel's values as a view reads the synced trait.
        widget.observe(self._values_changed, names="values")
        widget.observe(self._page_changed, names="_html")

    def send_request(self, message: RequestMessage) -> None:
        self.page.send(dict(message))

    def _values_changed(self, change: dict[str, Any]) -> None:
        self.page.set_values(dict(change["new"]))

    def _page_changed(self, _change: dict[str, Any]) -> None:  # select_target: the new page replaces the old
        self.page.set_values(dict(self._widget.values))
        self.page.reload(self._widget.target.headless_html(self._seed, self._fps))

    def close(self) -> None:
        if self.page.closed:
            return
        self._widget.unobserve(self._values_changed, names="values")
        self._widget.unobserve(self._page_changed, names="_html")
        self.page.close()


class HeadlessTarget(TargetWidget):
    """A target page in headless Chromium, steered with the same tools as a :class:`TargetWidget`.

    Args:
        target: a target id or a path to its page, manifest or folder.
        targets_dir: extra folder(s) searched for targets.
        timeout: default deadline of one call, in seconds.
        seed: the seed of the page's ``Math.random`` (the same calls give the same observables).
        fps: animation frames per simulated second (60 by default).

    Raises:
        HeadlessUnavailable: at once, when Chromium or the playwright package is missing (the
            message says how to install them).

    Use it as a context manager, or call :meth:`close` to free the page.
    """

    def __init__(
        self,
        target: str | Path = "bouncer",
        *,
        targets_dir: str | Path | list[str | Path] | None = None,
        timeout: float = 10.0,
        seed: int = 0,
        fps: float | None = None,
        **kwargs: Any,
    ) -> None:
        from ._headless_engine import chromium_executable

        chromium_executable()  # no browser: a clear error now, never a hang later
        super().__init__(target, targets_dir=targets_dir, timeout=timeout, attach_timeout=timeout, **kwargs)
        self._headless = HeadlessHost(self, seed=seed, fps=fps)
        self.host = self._headless
        self._displayed_at = time.monotonic()  # the page is on its way: calls wait for it to attach
        self._displayed_by_frontend = True

    def advance(self, seconds: float, *, timeout: float | None = None) -> dict[str, Any]:
        """Run the page's clock ``seconds`` of simulated time forward; return the state it reports then."""
        return self._headless.page.advance(seconds, timeout)

    async def aadvance(self, seconds: float, *, timeout: float | None = None) -> dict[str, Any]:
        return await self._headless.page.aadvance(seconds, timeout)

    def close(self) -> None:
        """Free the page (and the widget's comm, if any)."""
        self._headless.close()
        super().close()

    def __enter__(self) -> HeadlessTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<HeadlessTarget {self.target_id!r}: values={self.values}>"

"""HeadlessTarget: a target's second home, a page in headless Chromium with the same tool surface.

A :class:`HeadlessTarget` *is* a :class:`~splitbrain_widget.TargetWidget` (its traits, both API
twins, the audit, the agent's toolset) whose host is a headless page instead of the notebook's
views: the tool surface is one implementation, and only the kernel <-> view hop differs
(``_headless_engine``: the view's own relay in a host page, the same sandboxed iframe, nonce
checks, CSP and message budget). Pages run on a virtual clock: :meth:`HeadlessTarget.advance`
moves simulated time forward faster than real time, and the same calls give the same observables.

A plain :class:`~splitbrain_widget.TargetWidget` gets the same page as a fallback
(:class:`HeadlessFallback`) with ``headless=True`` or ``SPLITBRAIN_HEADLESS=1``: while no notebook
view is displayed, its calls run on a headless page.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hosts._headless import HeadlessFallback, HeadlessHost, require_headless
from .hosts._headless_engine import HeadlessError
from .widget import TargetWidget

if TYPE_CHECKING:
    from .hosts._headless_page import HeadlessPage

log = logging.getLogger("splitbrain_widget.headless")


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
        require_headless()  # no browser: a clear error now, never a hang later
        kwargs["headless"] = False  # the page is its only home: no fallback beside it
        super().__init__(target, targets_dir=targets_dir, timeout=timeout, attach_timeout=timeout, **kwargs)
        self._headless = HeadlessHost(self, seed=seed, fps=fps)
        self.host = self._headless
        self.expect_view(timeout)  # the page is on its way: calls wait for it to attach

    def _headless_view_ids(self) -> set[str]:
        host: HeadlessHost | None = getattr(self, "_headless", None)  # None while TargetWidget.__init__ runs
        return {host.page.view_id} if host is not None else set()

    @property
    def can_advance(self) -> bool:
        """Always: the page is headless, on a virtual clock."""
        return True

    def _headless_page(self) -> HeadlessPage:
        """The page itself: ``advance`` / ``aadvance`` (TargetWidget's) run its clock."""
        return self._headless.page

    def close(self) -> None:
        """Free the page (and the widget's comm, if any)."""
        host: HeadlessHost | None = getattr(self, "_headless", None)  # None if __init__ failed (a bad manifest)
        if host is not None:
            host.close()
        super().close()

    def __enter__(self) -> HeadlessTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<HeadlessTarget {self.target_id!r}: values={self.values}>"


__all__ = ["HeadlessError", "HeadlessFallback", "HeadlessHost", "HeadlessTarget", "require_headless"]

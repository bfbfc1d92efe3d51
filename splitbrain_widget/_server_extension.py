"""A Jupyter server extension that sets TCP_NODELAY on kernel websockets, and saves widgets' pictures.

The second is ``features/_save_pictures.py``: a pre-save hook that puts each widget's last picture into its
outputs when a notebook is saved (``SPLITBRAIN_SNAPSHOTS=0`` turns it off). A third hook,
``core/_lesson_notebook.py``, adds the lesson log's records of the notebook's widgets to its metadata
where the lesson policy says so (``[log] notebook = true``).

jupyter_server never sets TCP_NODELAY on the kernel websocket, so after the first small frame of
a burst the next ones wait for the browser's delayed ACK (~40 ms): a widget round trip measured
~50 ms median instead of ~13 ms (shared/DESIGN.md). This extension wraps
``KernelWebsocketHandler.open`` to call ``set_nodelay(True)`` on every new kernel connection.

The package enables it through ``etc/jupyter/jupyter_server_config.d/splitbrain_widget.json``.
Turn it off with ``jupyter server extension disable splitbrain_widget`` or by setting
``SPLITBRAIN_NODELAY=0`` in the server's environment. Applying it twice is harmless.
"""

from __future__ import annotations

import functools
import os
from typing import Any

_MARK = "_splitbrain_nodelay"


def patch_kernel_websocket(handler: Any = None) -> bool:
    """Wrap ``handler.open`` (default: jupyter_server's ``KernelWebsocketHandler``) once."""
    if handler is None:
        from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

        handler = KernelWebsocketHandler
    if getattr(handler.open, _MARK, False):
        return True
    original = handler.open

    @functools.wraps(original)
    async def open_with_nodelay(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.set_nodelay(True)
        return await original(self, *args, **kwargs)

    setattr(open_with_nodelay, _MARK, True)
    handler.open = open_with_nodelay
    return True


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .features._pictures import snapshots_default

    if snapshots_default():
        from .features._save_pictures import register

        if register(serverapp):
            serverapp.log.info("splitbrain_widget: widgets' pictures saved in their outputs")
    from .core._lesson_notebook import register as register_lesson_log

    if register_lesson_log(serverapp):
        serverapp.log.info("splitbrain_widget: a lesson log that says so is saved in its notebook's metadata")
    if os.environ.get("SPLITBRAIN_NODELAY", "1").strip().lower() in ("0", "false", "no", "off"):
        serverapp.log.info("splitbrain_widget: TCP_NODELAY on kernel websockets disabled by SPLITBRAIN_NODELAY")
        return
    patch_kernel_websocket()
    serverapp.log.info("splitbrain_widget: TCP_NODELAY set on kernel websockets")

"""The TCP_NODELAY server extension: enabled by shipped config, idempotent, can be disabled."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget
from splitbrain_widget import _server_extension

ROOT = Path(__file__).resolve().parent.parent


class FakeHandler:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def set_nodelay(self, value: bool) -> None:
        self.calls.append(("nodelay", value))

    async def open(self, kernel_id: str) -> None:
        self.calls.append(("open", kernel_id))


def test_the_extension_point_names_the_module() -> None:
    points = splitbrain_widget._jupyter_server_extension_points()
    assert points == [{"module": "splitbrain_widget._server_extension"}]


def test_the_shipped_config_enables_it() -> None:
    config = json.loads((ROOT / "jupyter-config/jupyter_server_config.d/splitbrain_widget.json").read_text())
    assert config["ServerApp"]["jpserver_extensions"]["splitbrain_widget"] is True


def test_open_sets_nodelay_then_opens() -> None:
    class Handler(FakeHandler):
        pass

    _server_extension.patch_kernel_websocket(Handler)
    handler = Handler()
    asyncio.run(handler.open("k1"))
    assert handler.calls == [("nodelay", True), ("open", "k1")]


def test_patching_twice_wraps_once() -> None:
    class Handler(FakeHandler):
        pass

    _server_extension.patch_kernel_websocket(Handler)
    first = Handler.open
    _server_extension.patch_kernel_websocket(Handler)
    assert Handler.open is first
    handler = Handler()
    asyncio.run(handler.open("k1"))
    assert handler.calls.count(("nodelay", True)) == 1


def test_the_real_handler_is_patched() -> None:
    from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

    assert _server_extension.patch_kernel_websocket()
    assert getattr(KernelWebsocketHandler.open, "_splitbrain_nodelay", False)


def test_disabled_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPLITBRAIN_NODELAY", "0")
    logged: list[str] = []

    class App:
        log = logging.getLogger("fake-server")

    monkeypatch.setattr(App.log, "info", lambda msg, *a: logged.append(msg))
    _server_extension._load_jupyter_server_extension(App())
    assert "disabled" in logged[0]

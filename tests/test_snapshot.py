"""A picture of the page (#42): ``sim.snapshot()``, taken by the page itself inside its sandbox.

Without a browser: the checks on what a page sends (``core/_picture.py``). With one: the built-in
targets' pictures on a headless page (a PNG within the bounds, not blank, following a change), a page
with no canvas, a page whose handler gives a huge canvas, and a hostile page that answers a snapshot
with a forged picture.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.core._picture import Picture, PictureError, picture_from
from splitbrain_widget.headless import HeadlessTarget
from splitbrain_widget.protocol import MAX_PICTURE_BYTES, MAX_PICTURE_SIDE, PictureData

from .fake_view import FakeView

browser = pytest.mark.browser


def png(width: int, height: int) -> bytes:
    """A real grey PNG of ``width`` x ``height`` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def data(raw: bytes, width: int, height: int) -> PictureData:
    return PictureData(png=base64.b64encode(raw).decode(), width=width, height=height)


def test_a_picture_is_the_png_it_claims_to_be(tmp_path: Path) -> None:
    raw = png(40, 30)
    picture = picture_from(data(raw, 40, 30), alt="a grey box")
    assert isinstance(picture, bytes) and bytes(picture) == raw
    assert (picture.width, picture.height, picture.alt) == (40, 30, "a grey box")
    assert picture._repr_png_() == raw
    assert repr(picture) == f"<Picture 40x30 PNG, {len(raw):,} bytes>"
    assert picture.save(tmp_path / "p.png").read_bytes() == raw
    assert picture.data_url().startswith("data:image/png;base64,iVBOR")


@pytest.mark.parametrize(
    ("picture", "words"),
    [
        (PictureData(png="not base64!", width=4, height=3), "not base64"),
        (data(b"GIF89a" + b"\x00" * 40, 4, 3), "not a PNG"),
        (data(png(40, 30), 41, 30), "the PNG is 40x30, the reply says 41x30"),
        (data(png(1100, 2), 1000, 2), "the PNG is 1100x2, the reply says 1000x2"),
    ],
)
def test_what_is_not_that_picture_is_refused_saying_why(picture: PictureData, words: str) -> None:
    with pytest.raises(PictureError, match=words):
        picture_from(picture)


def test_the_bounds_are_in_the_message_model() -> None:
    with pytest.raises(ValueError):
        PictureData(png="AAAA", width=MAX_PICTURE_SIDE + 1, height=1)
    with pytest.raises(ValueError):
        PictureData(png="A" * (4 * MAX_PICTURE_BYTES // 3 + 8), width=1, height=1)


def pixels(picture: Picture) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(picture)).convert("RGB")


@browser
def test_the_bouncer_s_picture_follows_its_colour(engine: None) -> None:
    with HeadlessTarget("bouncer") as sim:
        sim.set_parameters({"color": "red", "size": 40})
        red = sim.snapshot()
        sim.set_parameters({"color": "seagreen"})
        green = sim.snapshot()
    assert 1 <= red.width <= MAX_PICTURE_SIDE and 1 <= red.height <= MAX_PICTURE_SIDE
    assert len(red) <= MAX_PICTURE_BYTES
    image = pixels(red)
    assert image.size == (red.width, red.height)
    colours = image.getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 2, "a blank picture"
    assert any(r > 200 and g < 40 and b < 40 for _, (r, g, b) in colours), "no red ball in the red picture"
    assert not any(r > 200 and g < 40 and b < 40 for _, (r, g, b) in pixels(green).getcolors(1 << 16) or [])
    assert red != green
    assert "color red" in red.alt and "color seagreen" in green.alt


def target(tmp_path: Path, body: str) -> Path:
    manifest = {
        "id": "pic",
        "type": "apply",
        "title": "Picture test",
        "description": "A page for the snapshot tests.",
        "data": {"p": {"x": {"type": "number", "value": 1, "min": 0, "max": 10, "description": "a number"}}},
    }
    (tmp_path / "pic.json").write_text(json.dumps(manifest), encoding="utf-8")
    page = tmp_path / "pic.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'></head><body>"
        f"<script>{body}\nSplitBrain.onApply(() => ({{}})); SplitBrain.ready();</script></body></html>",
        encoding="utf-8",
    )
    return page


WORDS_ONLY = "document.body.style.background = 'rgb(200, 30, 30)'; document.body.append('words only');"


@browser
def test_a_page_with_no_canvas_says_so_and_a_headless_page_gets_chromium_s_picture(
    engine: None, tmp_path: Path
) -> None:
    with HeadlessTarget(target(tmp_path, WORDS_ONLY)) as sim:
        own = sim._ops.run_blocking("snapshot", {}, sim._ops.snapshot(10), audit=False)
        picture = sim.snapshot()
        size = sim._headless_page()._frame_evaluate("() => [innerWidth, innerHeight]")
    assert not own.ok and own.error is not None
    assert "draws no canvas" in own.error.message and "SplitBrain.onSnapshot" in own.error.message
    assert [picture.width, picture.height] == size
    assert any(r > 150 and g < 60 and b < 60 for _, (r, g, b) in pixels(picture).getcolors(1 << 16) or [])


def test_a_widget_with_no_view_has_no_picture_and_says_why() -> None:
    sim = sb.TargetWidget("bouncer", headless=False)
    with pytest.raises(sb.SnapshotError, match="no_view"):
        sim.snapshot(timeout=0.5)


@browser
def test_a_huge_canvas_from_the_page_s_handler_is_scaled_to_the_bounds(engine: None, tmp_path: Path) -> None:
    body = """
    const big = document.createElement('canvas'); big.width = 4000; big.height = 1000;
    const ctx = big.getContext('2d');
    for (let i = 0; i < 4000; i += 7) { ctx.fillStyle = `hsl(${i % 360}, 80%, 50%)`; ctx.fillRect(i, 0, 7, 1000); }
    SplitBrain.onSnapshot(() => big);
    """
    with HeadlessTarget(target(tmp_path, body)) as sim:
        picture = sim.snapshot()
    assert (picture.width, picture.height) == (MAX_PICTURE_SIDE, MAX_PICTURE_SIDE // 4)
    assert len(pixels(picture).getcolors(1 << 16) or []) > 50


@browser
def test_a_forged_picture_is_refused_and_the_page_s_own_is_not_taken_for_it(engine: None, tmp_path: Path) -> None:
    # The page answers every snapshot before its target API does (whose handler takes a while), with a
    # picture that is no PNG.
    body = """
    const c = document.createElement('canvas'); c.width = 10; c.height = 10; document.body.append(c);
    SplitBrain.onSnapshot(() => new Promise((done) => setTimeout(() => done(c), 50)));
    addEventListener('message', (e) => {
      if (e.data && e.data.type === 'snapshot') parent.postMessage({source: 'splitbrain-target',
        nonce: SplitBrain.nonce, type: 'state', id: e.data.id, payload: {},
        picture: {png: btoa('GIF89a not a png at all'), width: 5, height: 5}}, '*');
    });
    """
    with HeadlessTarget(target(tmp_path, body)) as sim:
        with pytest.raises(sb.SnapshotError, match="not a PNG"):
            sim.snapshot()
        sim.advance(0.2)  # the page's own handler (on the virtual clock) answers late: dropped
        assert sim.fetch_state().ok  # and the page still answers


@browser
def test_an_mcp_client_gets_the_picture_as_image_content(engine: None) -> None:
    from .browser_env import run_async
    from .test_mcp import client

    with HeadlessTarget("bouncer") as sim:
        sim.set_parameters({"color": "red"})
        server = sb.serve_mcp(sim)
        try:

            async def go() -> Any:
                async with client(server) as session:
                    names = [t.name for t in (await session.list_tools()).tools]
                    return names, await session.call_tool("bouncer__snapshot", {})

            names, result = run_async(go())
        finally:
            server.stop()
    assert "bouncer__snapshot" in names
    assert not result.is_error
    image, text = result.content
    assert (image.type, image.mime_type) == ("image", "image/png")
    picture = base64.b64decode(image.data)
    assert picture.startswith(b"\x89PNG") and len(picture) <= MAX_PICTURE_BYTES
    payload = json.loads(text.text)
    assert payload == result.structured_content and "image" not in payload
    assert payload["ok"] and "color red" in payload["alt"]


def test_the_built_in_agent_is_not_offered_the_picture(textbook_projectile: sb.TargetWidget) -> None:
    from splitbrain_widget.agent._tools import Scope, tool_specs

    scope = Scope(textbook_projectile.schema, ["projectile"])
    assert "snapshot" not in {s.name for s in tool_specs(scope)}
    assert "snapshot" in {s.name for s in tool_specs(Scope(textbook_projectile.schema, [], pictures=True))}


def test_a_live_notebook_s_output_is_the_view_its_line_and_its_record() -> None:
    from splitbrain_widget.features._pictures import SIMULATION_MIME

    sim = sb.TargetWidget("bouncer")
    sim.set_parameters({"color": "red"})  # no view: kept
    assert sim._ipython_display_ is None  # IPython displays it through _repr_mimebundle_, as always
    data, _metadata = sim._repr_mimebundle_()
    assert set(data) == {"text/plain", "application/vnd.jupyter.widget-view+json", SIMULATION_MIME}
    assert data[SIMULATION_MIME]["values"]["display.color"] == "red"
    assert data[SIMULATION_MIME]["target"] == "bouncer"


def test_a_snapshot_in_a_live_notebook_is_the_picture_its_outputs_are_saved_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from splitbrain_widget.features import _picture_cache

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    sim = sb.TargetWidget("bouncer", headless=False)
    view = FakeView(sim, picture=data(png(40, 30), 40, 30).model_dump())
    first = sim.snapshot(timeout=10)
    kept = _picture_cache.read(sim._comm_id)
    assert kept is not None and kept["image/png"] == first.base64() and f'width="{first.width}"' in kept["text/html"]
    view.picture = data(png(64, 20), 64, 20).model_dump()  # the page changed: the next snapshot is kept instead
    second = sim.snapshot(timeout=10)
    kept = _picture_cache.read(sim._comm_id)
    assert kept is not None and kept["image/png"] == second.base64() != first.base64()
    assert sim._output_bundle()[0]["image/png"] == second.base64()  # and a new display shows it
    view.picture = None  # a snapshot that fails leaves the last picture as it was
    with pytest.raises(sb.SnapshotError):
        sim.snapshot(timeout=10)
    assert _picture_cache.read(sim._comm_id) == kept
    off = sb.TargetWidget("bouncer", headless=False, snapshots=False)
    FakeView(off, picture=data(png(40, 30), 40, 30).model_dump())
    assert off.snapshot(timeout=10).width == 40 and _picture_cache.read(off._comm_id) is None


def test_snapshots_off_for_one_widget_or_for_all(monkeypatch: pytest.MonkeyPatch) -> None:
    from splitbrain_widget.features._pictures import snapshots_default

    assert sb.TargetWidget("bouncer", headless=False, snapshots=False)._pictures.enabled is False
    monkeypatch.setenv("SPLITBRAIN_SNAPSHOTS", "0")
    assert snapshots_default() is False and sb.TargetWidget("bouncer")._pictures.enabled is False
    monkeypatch.setenv("SPLITBRAIN_SNAPSHOTS", "1")
    assert snapshots_default() is True


@browser
def test_a_headless_widget_is_displayed_with_its_picture_and_a_display_id(
    engine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from splitbrain_widget.features import _pictures

    sim = sb.TargetWidget("bouncer", headless=True)
    try:
        assert sim._ipython_display_ is None  # outside a runner's cell (here, no kernel): the widget view
        monkeypatch.setattr(_pictures, "cell_from_a_runner", lambda: True)  # a real runner's: test_notebook_pictures
        assert callable(sim._ipython_display_)
        picture = sim._pictures.take()
        assert picture is not None and picture.width == 960
        data, _metadata = sim._repr_mimebundle_()
        assert data["image/png"] == picture.data_url().split(",", 1)[1]
        assert (
            data["text/html"].startswith('<img src="data:image/png;base64,')
            and 'alt="Bouncing ball.' in data["text/html"]
        )
        assert len(sim.audit) == 0  # the picture is the package's own call, not the user's
    finally:
        sim.close()


AGENT_WIRES = [("openai", False), ("openai", True), ("anthropic", True), ("gemini", False)]


@browser
@pytest.mark.parametrize(("provider", "stream"), AGENT_WIRES)
def test_an_agent_with_vision_is_shown_the_page_s_picture(engine: None, fake: Any, provider: str, stream: bool) -> None:
    from .fake_providers import call, make_agent, say

    server = fake(provider).script(call("snapshot", {}), say("A red ball."))
    with HeadlessTarget("bouncer") as sim:
        sim.set_parameters({"color": "red"})
        picture = sim.snapshot()
        seen = make_agent(sim, server, stream=stream, vision=True).ask("what does it look like?")
        blind = make_agent(sim, fake(provider).script(say("I cannot see it.")), stream=stream)
        blind.ask("what does it look like?")
    assert seen.text == "A red ball." and [c.name for c in seen.tool_calls] == ["snapshot"]
    assert seen.tool_calls[0].ok and "image" not in seen.tool_calls[0].result  # the picture is the model's
    assert "snapshot" in server.tools(0)
    sent = json.dumps(server.model_requests[1].body)
    png = bytes(picture)  # the PNG went to the model as an image (Gemini's in URL-safe base64)
    assert any(b[:200].decode() in sent for b in (base64.b64encode(png), base64.urlsafe_b64encode(png)))
    assert "color red" in sent  # and the page in words beside it
    assert "snapshot" not in blind_tools(blind)


def blind_tools(agent: Any) -> set[str]:
    from splitbrain_widget.agent._tools import tool_specs

    return {s.name for s in tool_specs(agent._runtime.state.scope())}

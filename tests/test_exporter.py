"""The notebook as a page (#42, ``exporter.py``) without a browser: which outputs become pages, from
which values, and what stays a picture and why. tests/browser/test_notebook_pictures_browser.py opens
the pages in Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from splitbrain_widget.exporter import PAGE_ATTR, WIDGET_STATE, WIDGET_VIEW, SplitbrainExporter, live_pages
from splitbrain_widget.features._pictures import SIMULATION_MIME

PICTURE = '<img src="data:image/png;base64,AAAA" alt="a ball">'


def output(record: dict[str, Any] | None, model_id: str = "m1") -> dict[str, Any]:
    data: dict[str, Any] = {"text/plain": "<TargetWidget>", WIDGET_VIEW: {"model_id": model_id}, "text/html": PICTURE}
    if record is not None:
        data[SIMULATION_MIME] = record
    return nbformat.v4.new_output("display_data", data=data)


def notebook(*outputs: dict[str, Any], state: dict[str, Any] | None = None) -> Any:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("sim")
    cell.outputs = list(outputs)
    nb.cells = [nbformat.v4.new_markdown_cell("# A lesson"), cell]
    if state is not None:
        nb.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    return nb


def traits_in(frame: str) -> dict[str, Any]:
    """The traits block of the page in an output's frame."""
    import json

    page = html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))  # type: ignore[union-attr]
    block = re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', page, re.S)
    assert block is not None
    return dict(json.loads(block.group(1))["traits"])


def test_a_widget_output_becomes_its_page_at_its_saved_values() -> None:
    nb = notebook(output({"target": "bouncer", "values": {"display.color": "red"}, "height": 300}))
    pages = live_pages(nb, Path("."))
    assert [(p.target, p.why_not) for p in pages] == [("bouncer", "")] and pages[0].size > 10_000
    data = nb.cells[1].outputs[0]["data"]
    assert set(data) == {"text/html", "text/plain"}  # no widget view, no picture: the page
    frame = data["text/html"]
    assert frame.startswith(f'<iframe {PAGE_ATTR} sandbox="allow-scripts" title="Bouncing ball"')
    assert "height: 348px" in frame  # the view's height and its status bar
    traits = traits_in(frame)
    assert traits["values"]["display.color"] == "red"
    assert traits["values"]["settings.speed"] == 8  # the defaults for what the output did not save
    assert traits["chat_enabled"] is True


def test_an_output_of_an_older_version_is_read_from_the_saved_widget_state() -> None:
    state = {"m7": {"state": {"target_id": "projectile", "values": {"launch.angle": 30}, "height": 380}}}
    nb = notebook(output(None, "m7"), state=state)
    assert [p.target for p in live_pages(nb, Path("."))] == ["projectile"]
    assert traits_in(nb.cells[1].outputs[0]["data"]["text/html"])["values"]["launch.angle"] == 30


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ({"target": "no-such-target", "values": {}}, "TargetError"),
        ({"target": "bouncer", "values": {"display.color": "plaid"}}, "ParameterError"),
        ({"values": {}}, "names no target"),
    ],
)
def test_what_cannot_be_a_page_stays_a_picture_saying_why(record: dict[str, Any], words: str) -> None:
    nb = notebook(output(record))
    (page,) = live_pages(nb, Path("."))
    assert words in page.why_not
    data = nb.cells[1].outputs[0]["data"]
    assert WIDGET_VIEW not in data and data["text/html"] == PICTURE  # the picture, not an empty widget box


def test_other_outputs_are_left_alone() -> None:
    nb = notebook(nbformat.v4.new_output("stream", name="stdout", text="hello\n"))
    before = nb.cells[1].outputs[0].copy()
    assert live_pages(nb, Path(".")) == [] and nb.cells[1].outputs[0] == before


def test_the_exporter_is_registered_with_nbconvert_and_writes_html() -> None:
    from nbconvert.exporters import get_exporter

    assert get_exporter("splitbrain") is SplitbrainExporter
    nb = notebook(output({"target": "bouncer", "values": {}}))
    body, resources = SplitbrainExporter().from_notebook_node(nb, {"metadata": {"path": "."}})
    assert body.count(f"<iframe {PAGE_ATTR}") == 1 and "A lesson" in body
    assert [p.target for p in resources["splitbrain_pages"]] == ["bouncer"]
    assert nb.cells[1].outputs[0]["data"][WIDGET_VIEW]  # the notebook given is not changed

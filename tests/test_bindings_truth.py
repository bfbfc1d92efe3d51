"""Bindings that tell the truth (#43): after every bound set, reset and opening, ``sim.values`` holds
what the page's own model holds, read in the page itself.

On real pages, headless: Vi Hart and Nicky Case's Parable of the Polygons (its custom double sliders
keep a share in 0..1, dragged to the nearest of their 400 pixels; the manifest speaks percent), and
the dial of docs/writing-targets.md with its track turned round.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb

from .browser_env import require_browser
from .fake_view import wait_for
from .test_docs_examples import _example

ROOT = Path(__file__).resolve().parents[1]
POLYGONS = ROOT / "examples" / "third_party" / "ncase_polygons"

pytestmark = pytest.mark.browser


def _page(sim: Any, expression: str) -> Any:
    """What the page itself holds, evaluated in it (not through the bindings)."""
    return sim.host.page._frame_evaluate(expression)


@contextmanager
def _headless(page: Path) -> Iterator[Any]:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(page, timeout=30) as sim:
        yield sim


def _polygons_variant(tmp_path: Path, defaults: Mapping[str, float], *, constraints: bool = True) -> Path:
    """The Polygons page beside its manifest with other defaults (and without its rules)."""
    shutil.copy(POLYGONS / "ncase_polygons.html", tmp_path / "ncase_polygons.html")
    manifest = json.loads((POLYGONS / "ncase_polygons.json").read_text(encoding="utf-8"))
    for path, value in defaults.items():
        group, name = path.split(".")
        manifest["data"][group][name]["value"] = value
    if not constraints:
        manifest.pop("constraints")
    (tmp_path / "ncase_polygons.json").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path / "ncase_polygons.html"


def test_a_drag_the_page_rounds_is_what_the_kernel_the_result_and_the_code_say() -> None:
    with _headless(POLYGONS / "ncase_polygons.html") as sim:
        result = sim.set_parameter("min_same", 33.3)
        assert result.ok, result.error
        held = _page(sim, "BIAS * 100")
        assert held == pytest.approx(33.25)  # the page keeps the nearest of its 400 pixels (1/400 = 0.25 %)
        assert sim.values["segregation.min_same"] == pytest.approx(held)
        assert result.state["segregation.min_same"] == pytest.approx(held)
        changed = result.changed["segregation.min_same"]
        assert changed["value"] == pytest.approx(held) and changed["asked"] == 33.3 and changed["unit"] == "%"
        assert "segregation.min_same: asked 33.3 %, the page took 33.25 %" in result.message
        assert sim.audit.entries()[-1].changed["segregation.min_same"] == pytest.approx(held)
        assert "33.25" in sim.audit.to_code() and "33.3" not in sim.audit.to_code()
        assert sim.fetch_state().state["segregation.min_same"] == pytest.approx(held)
        assert sim.values["segregation.min_same"] == pytest.approx(held)  # and after a fetch too


def test_a_scaled_drag_without_span_lands_where_the_percent_says_and_with_span_too() -> None:
    """min_same: scale 0.01 and no span (the track's ends are min..max in the page's units, 0..1);
    occupied: scale 0.01 with span [0, 1] in the page's units, for a value allowed from 5 %."""
    with _headless(POLYGONS / "ncase_polygons.html") as sim:
        result = sim.set_parameters({"min_same": 25, "occupied": 50})
        assert result.ok, result.error
        assert _page(sim, "[BIAS, 1 - EMPTINESS]") == [pytest.approx(0.25), pytest.approx(0.5)]
        assert sim.values["segregation.min_same"] == pytest.approx(25)
        assert sim.values["board.occupied"] == pytest.approx(50)
        # the triangles' handle stayed where it was (0.4 of the track): now 80 % of fewer polygons
        assert result.message == "applied; board.triangles: the page moved it from 50 % to 80 %"
        assert sim.values["board.triangles"] == pytest.approx(80) == _page(sim, "RATIO_TRIANGLES * 100")
        assert result.changed["board.triangles"]["value"] == pytest.approx(80)


def test_a_handle_placed_by_an_expression_of_another_parameter() -> None:
    """The triangles' handle sits at their share of the occupied cells (``position``): a share of 30 %
    of 60 % occupied cells is dragged to 0.18 of the track, whichever handle a call moves first."""
    with _headless(POLYGONS / "ncase_polygons.html") as sim:
        result = sim.set_parameters({"occupied": 60, "triangles": 30})
        assert result.ok, result.error
        assert _page(sim, "[1 - EMPTINESS, RATIO_TRIANGLES]") == [pytest.approx(0.6), pytest.approx(0.3, abs=0.005)]
        assert sim.values["board.triangles"] == pytest.approx(_page(sim, "RATIO_TRIANGLES * 100"))
        alone = sim.set_parameter("triangles", 75)  # with the occupied share the page holds
        assert alone.ok, alone.error
        assert _page(sim, "RATIO_TRIANGLES") == pytest.approx(0.75, abs=0.005)
        assert sim.values["board.triangles"] == pytest.approx(_page(sim, "RATIO_TRIANGLES * 100"))


def test_a_set_to_the_value_the_page_holds_leaves_its_random_board_alone() -> None:
    """Dragging the board's sliders builds a new random board; a set to what the page holds, and a
    reset to defaults it holds, drag nothing."""
    with _headless(POLYGONS / "ncase_polygons.html") as sim:
        assert sim.set_parameter("occupied", 60).ok
        _page(sim, "(window.__board = draggables, 1)")
        assert sim.set_parameter("occupied", 60).ok
        assert sim.set_parameter("occupied", 60.1).ok  # within a pixel (0.25 %) of what it holds
        assert _page(sim, "draggables === window.__board") is True
        assert sim.set_parameter("occupied", 70).ok
        assert _page(sim, "draggables === window.__board") is False  # a real drag does rebuild it
        assert sim.reset().ok
        _page(sim, "(window.__board = draggables, 1)")
        assert sim.reset().ok
        assert _page(sim, "draggables === window.__board") is True


# the page's model, in the manifest's units
MODEL = {
    "segregation.min_same": "BIAS * 100",
    "segregation.max_same": "NONCONFORM * 100",
    "board.occupied": "(1 - EMPTINESS) * 100",
    "board.triangles": "RATIO_TRIANGLES * 100",
}
CROSSING = {"segregation.min_same": 90, "segregation.max_same": 50}  # handles that cannot cross


def _kept_and_followed(sim: Any, asked: Mapping[str, Any], words: str) -> set[str]:
    """Which asked values the page kept its own for (more than a pixel off); checks that the others
    were set, that ``sim.values`` is the page's for all, and that ``words`` names each kept one."""
    held = {path: _page(sim, expression) for path, expression in MODEL.items()}
    kept = {path for path, value in asked.items() if abs(held[path] - value) > 0.25}
    for path in MODEL:
        assert sim.values[path] == pytest.approx(held[path]), (path, sim.values[path], held[path])
    for path in set(asked) - kept:
        assert held[path] == pytest.approx(asked[path], abs=0.25), (path, held[path])
    for path in kept:
        assert f"{path}: asked {asked[path]:g} %, the page holds {round(held[path], 6):g} %" in words, words
    return kept


def test_a_default_the_page_refuses_as_it_opens_is_reported_and_the_kernel_takes_the_page_s(tmp_path: Path) -> None:
    """Defaults whose handles would cross (and no rule to stop them): the page's slider stops one
    handle at the other; the other values apply. Reported as a warning, in the audit and in the
    panel's transcript; ``sim.values`` is the page's."""
    page = _polygons_variant(tmp_path, CROSSING, constraints=False)
    defaults = sb.load_target(page).manifest.defaults()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _headless(page) as sim:
            # a call made before the page was ready runs before the values it gets as it opens
            # (js/host/relay.js: the page never sees a value go back), so the news comes after it
            wait_for(lambda: any(e.op == "page_kept" for e in sim.audit.entries()), "the page_kept entry")
            audited = [e for e in sim.audit.entries() if e.op == "page_kept"]
            assert len(audited) == 1
            kept = _kept_and_followed(sim, defaults, audited[0].message)
            assert kept and kept <= set(CROSSING)
            assert [e["role"] for e in sim.transcript] == ["notice"]
            assert sim.transcript[0]["text"] == audited[0].message
    words = [str(w.message) for w in caught if issubclass(w.category, sb.PageValueWarning)]
    assert words == [audited[0].message]
    assert words[0].startswith("the page of 'ncase_polygons' kept its own values: ")


def test_a_default_the_page_refuses_on_reset_sets_the_others_and_says_which(tmp_path: Path) -> None:
    page = _polygons_variant(tmp_path, CROSSING, constraints=False)
    with _headless(page) as sim:
        assert sim.set_parameters({"min_same": 10, "max_same": 95, "occupied": 60, "triangles": 20}).ok
        with pytest.warns(sb.PageValueWarning, match="kept its own values") as caught:
            reset = sim.reset()
        assert reset.ok, reset.error
        kept = _kept_and_followed(sim, sim.target.manifest.defaults(), reset.message)
        assert kept and kept <= set(CROSSING)
        assert all(str(w.message).split(": ", 1)[1] in reset.message for w in caught)
        for path in kept:
            assert reset.changed[path]["asked"] == CROSSING[path]
            assert reset.changed[path]["value"] == pytest.approx(sim.values[path])
            assert reset.state["_refused"][path]["asked"] == CROSSING[path]  # in the manifest's units


def test_a_track_whose_value_falls_as_the_handle_moves_right(tmp_path: Path) -> None:
    """The docs' dial, its track turned round (100 at the left end, 0 at the right): ``span``
    [100, 0] in the page's units."""
    page = _example(tmp_path, "### Controls people drag", "dial")
    html = page.read_text(encoding="utf-8")
    turned = html.replace(
        "((e.clientX - box.left) / box.width) * 100", "(1 - (e.clientX - box.left) / box.width) * 100"
    )
    turned = turned.replace(
        'knob.style.left = model.speed * 2 + "px"', 'knob.style.left = (100 - model.speed) * 2 + "px"'
    )
    assert turned.count("1 - (e.clientX") == 1 and turned.count("(100 - model.speed)") == 1
    page.write_text(turned, encoding="utf-8")
    manifest = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    manifest["data"]["dial"]["speed"]["bind"]["span"] = [100, 0]
    page.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    with _headless(page) as sim:
        result = sim.set_parameter("speed", 30)
        assert result.ok, result.error
        assert _page(sim, "model.speed") == pytest.approx(30, abs=0.5)
        assert _page(sim, "parseFloat(knob.style.left)") == pytest.approx(140, abs=1)  # 70 % along the rail
        assert sim.values["dial.speed"] == pytest.approx(_page(sim, "model.speed"))


def test_a_headless_page_gets_a_call_s_values_once_with_the_call_and_a_direct_assignment_without(
    tmp_path: Path,
) -> None:
    """A call's values reach a headless page in its request only, as they reach a notebook view (whose
    echo waits for a pause between calls): never first without an id, which a bound page takes as
    values given outside a call (leniently: it would move to what it can hold, then get the call)."""
    (tmp_path / "counter.html").write_text(
        "<!doctype html><html><body><script>"
        "window.applies = [];"
        "SplitBrain.onApply((values, ctx) => { applies.push([ctx.id === undefined ? null : 'call', values]); });"
        "SplitBrain.ready();"
        "</script></body></html>",
        encoding="utf-8",
    )
    manifest = {"id": "counter", "data": {"s": {"speed": {"type": "number", "value": 1, "min": 0, "max": 10}}}}
    (tmp_path / "counter.json").write_text(json.dumps(manifest), encoding="utf-8")
    with _headless(tmp_path / "counter.html") as sim:
        # once the kernel knows the page is ready (a call made before that is kept in the values while it
        # waits for the page, which then gets them when it is ready: that one may come without an id)
        assert sim.fetch_state().ok
        opened = _page(sim, "applies.length")  # the values the page got as it opened
        assert sim.set_parameter("speed", 4).ok and sim.set_parameter("speed", 5).ok
        calls = _page(sim, "applies")[opened:]
        assert calls == [["call", {"s.speed": 4}], ["call", {"s.speed": 5}]]
        before = _page(sim, "applies.length")
        sim.values = {**sim.values, "s.speed": 7}  # assigned directly: the page gets it without an id
        wait_for(lambda: _page(sim, "applies.length") > before, "the assigned value at the page")
        assert _page(sim, "applies").pop() == [None, {"s.speed": 7}]

"""The inspector's Observables section in a real browser: values, units, sparklines, both themes."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .harness import LAB_ONLY, NotebookPage, wait_for
from .targets import write_targets
from .test_bridge_browser import PREAMBLE, run_preamble
from .test_chat_browser import SCREENSHOTS, open_chat

pytestmark = pytest.mark.browser

PENDULUM_CELL = "sim = sb.TargetWidget('pendulum', chat=True)\nsim"
REDRAW_MS = 250  # js/view/panel.js OBSERVABLE_REDRAW_MS

# A user target that reports its observables nested under "observables", one of them text.
METER_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>meter</title></head>
<body>
<script>
  let gain = 1;
  let level = 0;
  const snapshot = () => ({ "settings.gain": gain, observables: { level, note: level > 0 ? "rising" : "idle" } });
  SplitBrain.onApply((v) => { if ("settings.gain" in v) gain = v["settings.gain"]; return snapshot(); });
  SplitBrain.onState(() => snapshot());
  SplitBrain.ready();
  setInterval(() => { level = Math.round((level + 0.5 * gain) * 10) / 10; SplitBrain.state(snapshot()); }, 200);
</script>
</body></html>
"""

METER_JSON = {
    "id": "meter",
    "type": "apply",
    "title": "Meter",
    "data": {"settings": {"gain": {"type": "number", "value": 1, "min": 0, "max": 10}}},
    "observables": {
        "level": {"unit": "V", "description": "rises by half the gain five times a second"},
        "note": {"description": "a word"},
    },
}

# What the page shows of the section: each row's name, kind, value text, unit, label, sparkline.
_JS_ROWS = """el => [...el.querySelectorAll('.sb-observables .sb-obs')].map(row => ({
  name: row.dataset.name,
  kind: row.dataset.kind,
  text: row.querySelector('.sb-obs-text').textContent,
  unit: row.querySelector('.sb-unit').textContent,
  label: row.getAttribute('aria-label'),
  svgHidden: row.querySelector('svg').getAttribute('aria-hidden'),
  sparkVisible: getComputedStyle(row.querySelector('svg')).visibility === 'visible',
  points: (row.querySelector('polyline').getAttribute('points') || '').split(' ').filter(Boolean).length,
}))"""

# The colours the section is drawn in and the background under it (the first opaque one up the tree).
_JS_COLOURS = """el => {
  const section = el.querySelector('.sb-observables');
  const row = section.querySelector('.sb-obs[data-kind="number"]');
  let bg = section, background = 'rgba(0, 0, 0, 0)';
  while (bg) {
    const c = getComputedStyle(bg).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') { background = c; break; }
    bg = bg.parentElement;
  }
  const colour = (sel) => getComputedStyle(row.querySelector(sel)).color;
  return {
    background,
    heading: getComputedStyle(section.querySelector('h3')).color,
    name: colour('.sb-obs-name'),
    value: colour('.sb-obs-text'),
    unit: colour('.sb-unit'),
    line: getComputedStyle(row.querySelector('svg')).color,
  };
}"""


def rows(view: Any) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in view.evaluate(_JS_ROWS)}


def _rgba(css: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", css)]
    assert len(parts) in (3, 4), f"not an rgb() colour: {css!r}"
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) == 4 else 1.0)


def contrast(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of a (possibly translucent) colour over an opaque background."""
    fr, fg, fb, alpha = _rgba(foreground)
    br, bg, bb, _ = _rgba(background)
    over = [alpha * f + (1 - alpha) * b for f, b in ((fr, br), (fg, bg), (fb, bb))]

    def luminance(rgb: list[float] | tuple[float, ...]) -> float:
        def channel(c: float) -> float:
            c /= 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(over), luminance((br, bg, bb))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def check_contrast(view: Any, theme: str) -> None:
    """Text at least 4.5:1 against the panel, the sparkline (a graphic) at least 3:1."""
    colours = view.evaluate(_JS_COLOURS)
    background = colours.pop("background")
    assert _rgba(background)[3] == 1, colours
    ratios = {what: round(contrast(c, background), 2) for what, c in colours.items()}
    for what, ratio in ratios.items():
        assert ratio >= (3 if what == "line" else 4.5), f"{theme}: {what} contrast {ratio}:1 on {background}: {ratios}"


@contextmanager
def dark_theme(nb: NotebookPage) -> Iterator[None]:
    """JupyterLab in its dark theme for the block, and back to the light one after it."""

    def switch(theme: str, light: str) -> None:
        nb.page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
        wait_for(
            lambda: (
                nb.page.evaluate("() => [document.body.dataset.jpThemeName, document.body.dataset.jpThemeLight]")
                == [theme, light]
            ),
            timeout=30,
            what=f"the {theme} theme",
        )

    switch("JupyterLab Dark", "false")
    try:
        yield
    finally:
        switch("JupyterLab Light", "true")


def wait_background(view: Any, rgb: str) -> None:
    """The theme's CSS reaches the panel a moment after the body says it changed."""
    wait_for(lambda: view.evaluate(_JS_COLOURS)["background"] == rgb, timeout=30, what=f"the panel on {rgb}")


@LAB_ONLY  # the inspector's own code and the page's reports, the same in Notebook 7 (its listing is tested there)
def test_pendulum_observables_show_value_unit_and_a_moving_sparkline(open_notebook: Any, server: Any) -> None:
    nb, view = open_chat(open_notebook, [PENDULUM_CELL])
    section = view.locator(".sb-observables")
    assert section.get_by_role("heading", name="Observables").count() == 1
    section.scroll_into_view_if_needed()
    units = {"period": "s", "energy": "J/kg", "angle": "deg"}
    assert set(units) <= set(rows(view)), rows(view)  # every declared observable has a row

    def numeric() -> dict[str, dict[str, Any]] | None:
        seen = rows(view)
        return seen if all(seen[name]["kind"] == "number" for name in units) else None

    # the period is null until two half swings were seen: about one second in
    seen = wait_for(
        numeric, timeout=30, what="period, energy and angle to be numbers", describe=lambda: repr(rows(view))
    )
    assert seen is not None
    for name, unit in units.items():
        row = seen[name]
        assert row["unit"] == unit, row
        assert row["label"] == f"{name}: {row['text']} {unit}", row  # name, value and unit, for a screen reader
        assert row["svgHidden"] == "true" and row["sparkVisible"], row
        float(row["text"])  # the value's text is the number
    assert 1.5 < float(seen["period"]["text"]) < 2.5, seen["period"]  # L = 1 m, g = 9.81: about 2.0 s
    assert seen["angle2"]["kind"] == "none" and seen["angle2"]["text"] == "—", seen["angle2"]  # null: text, no line
    assert not seen["angle2"]["sparkVisible"] and seen["angle2"]["label"] == "angle2: no value"

    first = seen["angle"]["text"]
    wait_for(lambda: rows(view)["angle"]["text"] != first, timeout=10, what="the angle to change")
    wait_for(
        lambda: rows(view)["angle"]["points"] >= 8,
        timeout=15,
        what="the angle's sparkline to have several points",
        describe=lambda: repr(rows(view)["angle"]),
    )

    # redrawn at most four times a second though the state changes ten times a second
    view.evaluate(
        """el => { window.__sbDraws = [];
            new MutationObserver(() => window.__sbDraws.push(performance.now()))
              .observe(el.querySelector('.sb-obs[data-name="angle"] polyline'), {attributes: true}); }"""
    )
    wait_for(lambda: len(view.evaluate("() => window.__sbDraws")) >= 8, timeout=15, what="eight redraws")
    draws = view.evaluate("() => window.__sbDraws")
    gaps = [b - a for a, b in itertools.pairwise(draws)]
    assert min(gaps) >= REDRAW_MS * 0.8, gaps

    # out of sight, nothing is drawn; back in sight, it is drawn at once from what it kept
    view.evaluate("el => { el.querySelector('.sb-panel').style.display = 'none'; }")
    marks = view.evaluate("() => window.__sbDraws.length")
    states = {nb.frame_dataset(1)["state"]}

    def ten_states() -> bool:
        states.add(nb.frame_dataset(1)["state"])
        return len(states) >= 10

    wait_for(ten_states, timeout=15, what="the page to report ten states while the panel is hidden")
    hidden_draws = view.evaluate("() => window.__sbDraws.length") - marks
    assert hidden_draws <= 1, f"{hidden_draws} redraws while hidden"  # at most one already on its way
    view.evaluate("el => { el.querySelector('.sb-panel').style.display = ''; }")
    section.scroll_into_view_if_needed()
    wait_for(lambda: view.evaluate("() => window.__sbDraws.length") > marks + hidden_draws, timeout=10, what="a redraw")
    assert rows(view)["angle"]["points"] >= 8  # the samples were kept while hidden

    check_contrast(view, "light")
    if server.app != "lab":
        return  # screenshots and the dark theme: JupyterLab only
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(SCREENSHOTS / "observables-light.png"))
    with dark_theme(nb):
        wait_background(view, "rgb(33, 33, 33)")
        check_contrast(view, "dark")
        angle = rows(view)["angle"]["text"]
        wait_for(lambda: rows(view)["angle"]["text"] != angle, timeout=10, what="a redraw in the dark theme")
        section.screenshot(path=str(SCREENSHOTS / "observables-dark.png"))
    wait_background(view, "rgb(255, 255, 255)")


def test_user_targets_list_their_observables_flat_or_nested(open_notebook: Any, targets_dir: Path) -> None:
    write_targets(targets_dir, ("meter", METER_HTML, METER_JSON))
    folder = repr(str(targets_dir))
    nb = open_notebook(
        [
            PREAMBLE,
            f"demo = sb.TargetWidget('demo', targets_dir={folder}, chat=True)\ndemo",
            f"meter = sb.TargetWidget('meter', targets_dir={folder}, chat=True)\nmeter",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.run_cell(2)
    demo = nb.wait_view(1)
    meter = nb.wait_view(2)
    manifest = json.loads((targets_dir / "demo.json").read_text())

    # the fixture's demo page reports its applied values, never its "echo": listed, not reported
    wait_for(lambda: view_rows_named(demo) == list(manifest["observables"]), timeout=30, what="demo's observables")
    demo.locator(".sb-observables").scroll_into_view_if_needed()
    wait_for(lambda: rows(demo)["echo"]["label"] == "echo: not reported", timeout=10, what="echo: not reported")
    assert rows(demo)["echo"]["kind"] == "none" and rows(demo)["echo"]["unit"] == ""

    # meter nests its observables under "observables", as the kernel's goals read them too
    assert view_rows_named(meter) == ["level", "note"]
    meter.locator(".sb-observables").scroll_into_view_if_needed()
    wait_for(
        lambda: rows(meter)["level"]["kind"] == "number" and rows(meter)["level"]["points"] >= 4,
        timeout=30,
        what="meter's level with a sparkline",
        describe=lambda: repr(rows(meter)),
    )
    level, note = rows(meter)["level"], rows(meter)["note"]
    assert level["unit"] == "V" and level["label"] == f"level: {level['text']} V", level
    assert float(level["text"]) > 0
    assert note["kind"] == "text" and note["text"] == "rising" and note["label"] == "note: rising", note
    assert not note["sparkVisible"] and note["points"] == 0, note  # text: no sparkline


def view_rows_named(view: Any) -> list[str]:
    return list(rows(view))


@LAB_ONLY  # the inspector's own code and the page's reports, the same in Notebook 7 (its listing is tested there)
def test_record_on_a_live_page_samples_its_reports_every_tenth_of_a_second(open_notebook: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('pendulum')\nsim",
            "df = sim.record(5)\n"
            "steps = df.index.to_series().diff().dropna()\n"
            "print(len(df), df.attrs['clock'], round(steps.median(), 3), df.attrs['reports'] > 10)\n"
            "print(sorted(df.attrs['units']))\n"
            "print(df['angle [deg]'].nunique() > 10, df['period [s]'].dropna().between(1.9, 2.1).all())",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    nb.run_cell(2, timeout=60)
    out = nb.expect_output(2, "50 wall 0.1 True")  # the live page's own reports, one row per 0.1 s
    assert "'angle', 'angle2', 'angular_velocity', 'energy', 'period', 't'" in out, out
    assert "True True" in out, out  # the angle swings; the period the page measured is ~2 s (L = 1 m)


@pytest.mark.parametrize("server", ["lab"], indirect=True)  # the panel is the same code in Notebook 7
def test_named_values_are_choices_that_set_the_parameter(open_notebook: Any) -> None:
    """The pendulum's manifest names gravities ("moon": 1.62): the inspector offers them beside the number."""
    nb, view = open_chat(open_notebook, [PENDULUM_CELL, "print(sim.values['environment.gravity'])"])
    choices = view.get_by_label("gravity: named values")
    options = choices.locator("option").all_text_contents()
    assert options[:1] == ["…"] and "moon (1.62 m/s²)" in options and "mars (3.71 m/s²)" in options, options
    choices.select_option(label="moon (1.62 m/s²)")
    wait_for(lambda: nb.run_cell(2).strip() == "1.62", timeout=30, what="the kernel to hold the moon gravity")
    assert choices.input_value() == ""  # back to the placeholder: a choice, not a state

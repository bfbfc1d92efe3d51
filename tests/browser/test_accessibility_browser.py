"""Every student, every key (#40): the widget by keyboard and screen reader, in the notebook's theme.

In JupyterLab and Notebook 7, headless Chromium:

- axe-core (npm ``axe-core``, injected with Playwright into the notebook page and into each frame) at
  WCAG 2.2 A/AA on every built-in target's view (its output, the sandbox frame, the target's page), light
  and dark: zero violations; contrast is checked on the panel's text too (the app's ``<body>`` gets
  ``height: 100vh`` for the run, else axe calls the output's text "not visible" and skips it);
- the keyboard alone: Tab reaches every control in order with a visible focus ring, the frames are not
  tab stops, arrows move a slider (Shift: ten steps) and the kernel's values follow, the notebook's
  command-mode keys do nothing from inside the widget, Escape gives the cell its focus back, focus stays
  in the message box after Send;
- what a screen reader gets: names and values with units (Playwright's aria snapshot), one announcement
  per answer and per applied change over several turns (a MutationObserver on the live regions), and no
  re-insertion of the conversation log;
- the notebook's theme and reduced motion reach every built-in target (JupyterLab: pixels of the
  background in JupyterLab Dark; frames counted over 2 s with ``prefers-reduced-motion: reduce``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from .harness import LAB_ONLY, ROOT, NotebookPage, wait_for
from .test_bridge_browser import PREAMBLE, run_preamble
from .test_chat_browser import open_chat
from .test_inspector_browser import PENDULUM_CELL as PENDULUM_CHAT
from .test_inspector_browser import dark_theme

pytestmark = pytest.mark.browser

AXE = ROOT / "js" / "node_modules" / "axe-core" / "axe.min.js"
TARGETS = ("pendulum", "projectile", "bouncer", "boids", "orbits", "waves")
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
# printed at the end of the module: (app, theme, target, where) -> (rules passed, violations)
AXE_COUNTS: dict[tuple[str, str, str, str], tuple[int, int]] = {}

# every built-in target, one per cell; the pendulum with the chat panel
ALL_CELLS = [
    PREAMBLE,
    *(f"w_{t} = sb.TargetWidget({t!r}{', chat=True' if t == 'pendulum' else ''})\nw_{t}" for t in TARGETS),
    # a set on a page that draws twice a second still changes what it measures (v² sin 2θ / g)
    "r = w_projectile.set_parameters({'launch.speed': 30, 'launch.angle': 45, 'launch.height': 0})\n"
    "print(r.ok, round(w_projectile.state['range'], 1), round(30**2 / w_projectile.values['environment.gravity'], 1))",
]
SET_CELL = len(ALL_CELLS) - 1


@pytest.fixture(scope="module", autouse=True)
def _print_axe_counts(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if AXE_COUNTS:
        lines = ["", "== axe-core WCAG 2.2 A/AA: rules passed / violations =="]
        for (app, theme, target, where), (passed, violations) in sorted(AXE_COUNTS.items()):
            lines.append(f"{app:<9} {theme:<6} {target:<11} {where:<8} {passed:3d} passed  {violations} violations")
        print("\n".join(lines))


def _need_axe() -> str:
    """axe-core's script; without it (no npm here) the test skips, or fails under SPLITBRAIN_REQUIRE_BROWSER=1."""
    if not AXE.exists():
        why = f"{AXE} is missing: `make js` (npm ci in js/, which needs Node.js) installs axe-core"
        if os.environ.get("SPLITBRAIN_REQUIRE_BROWSER") == "1":
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return AXE.read_text(encoding="utf-8")


def _axe_run(where: Any, source: str, *, root_js: str = "document", arg: Any = None) -> dict[str, Any]:
    """axe-core in one document (a Page, a Frame or an element's frame), iframes left to their own runs."""
    where.evaluate(f"() => {{ if (!window.axe) {{ {source}\n }} }}") if hasattr(where, "evaluate") else None
    script = f"""async (arg) => {{
      const root = {root_js};
      const r = await axe.run(root, {{ iframes: false, resultTypes: ['violations'],
        runOnly: {{ type: 'tag', values: {json.dumps(AXE_TAGS)} }} }});
      return {{ passes: r.passes.length, violations: r.violations.map(v => ({{ id: v.id, impact: v.impact,
        nodes: v.nodes.map(n => n.target.join(' ') + ' :: ' + n.failureSummary).slice(0, 5) }})) }};
    }}"""
    return dict(where.evaluate(script, arg))


def axe_view(nb: NotebookPage, cell: int, target: str, theme: str, source: str) -> list[dict[str, Any]]:
    """axe on a view's output (in the notebook page), its sandbox frame and its target page."""
    app = nb.server.app
    view = nb.wait_view(cell)
    view.scroll_into_view_if_needed()
    nb.mark_cells()
    # the app's body is height 0 with overflow hidden: axe would call the output's text "not visible"
    nb.page.evaluate(
        "() => { document.body.dataset.sbAxeHeight = document.body.style.height; document.body.style.height = '100vh'; }"
    )
    try:
        selector = f'.jp-NotebookPanel:not(.lm-mod-hidden) [data-sb-cell="{cell}"] .jp-OutputArea .splitbrain-view'
        found: list[dict[str, Any]] = []
        parts: list[tuple[str, Any, str]] = [("output", nb.page, f"document.querySelector({json.dumps(selector)})")]
        sandbox = view.locator("iframe").first.element_handle().content_frame()
        parts.append(("sandbox", sandbox, "document"))
        parts.append(("page", nb.frame(cell), "document"))
        for where, frame, root in parts:
            frame.evaluate(f"() => {{ if (!window.axe) {{ {source}\n }} }}")
            result = _axe_run(frame, source, root_js=root)
            AXE_COUNTS[(app, theme, target, where)] = (int(result["passes"]), len(result["violations"]))
            found += [{"where": where, **v} for v in result["violations"]]
        return found
    finally:
        nb.page.evaluate("() => { document.body.style.height = document.body.dataset.sbAxeHeight || ''; }")


def open_all(open_notebook: Any) -> NotebookPage:
    nb = open_notebook(ALL_CELLS)
    run_preamble(nb)
    for cell in range(1, SET_CELL):
        nb.run_cell(cell)
    for cell in range(1, SET_CELL):
        nb.wait_view(cell)
    return nb


def frame_pixels(nb: NotebookPage, cell: int) -> bytes:
    """A screenshot of the view's frame as the reader sees it (clipped from the page: the element's own
    screenshot waits for a stable box, which a notebook that lays itself out may not give)."""
    frame = nb.iframe(cell)
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    assert box is not None, f"the frame of cell {cell} is not shown"
    return bytes(nb.page.screenshot(clip=box))


def luminance(png: bytes) -> float:
    """The median luminance (0-255) of a screenshot: a page's background dominates it."""
    import io
    import itertools

    from PIL import Image

    histogram = Image.open(io.BytesIO(png)).convert("L").histogram()
    half = sum(histogram) / 2
    return float(next(level for level, seen in enumerate(itertools.accumulate(histogram)) if seen >= half))


def test_axe_finds_no_violation_in_any_built_in_target_light_and_dark(open_notebook: Any, server: Any) -> None:
    source = _need_axe()
    nb = open_all(open_notebook)
    # first, that axe sees the output's text at all: a low-contrast line and an unnamed field put in a view
    bad = nb.wait_view(1)
    bad.evaluate(
        "(root) => { const d = document.createElement('div'); d.id = 'sb-axe-probe';"
        " d.innerHTML = '<p style=\"color:#bbb;background:#fff\">faint words</p><input type=text>'; root.append(d); }"
    )
    probe = {v["id"] for v in axe_view(nb, 1, "probe", "light", source) if v["where"] == "output"}
    bad.evaluate("() => document.getElementById('sb-axe-probe').remove()")
    AXE_COUNTS.pop((server.app, "light", "probe", "output"), None)
    assert {"color-contrast", "label"} <= probe, f"axe did not see the probe's faults: {probe}"
    problems: list[str] = []
    themes = ["light", "dark"]
    for theme in themes:
        with dark_theme(nb) if theme == "dark" else _nothing():
            if theme == "dark":
                # the views' pages are loaded again in the notebook's theme
                for cell in range(1, SET_CELL):
                    wait_for(
                        lambda c=cell: (
                            nb.frame(c).evaluate("() => document.documentElement.dataset.splitbrainTheme") == "dark"
                        ),
                        timeout=30,
                        what=f"the page of cell {cell} in the dark theme",
                    )
                    nb.wait_view(cell)
            for cell, target in enumerate(TARGETS, start=1):
                # the page's own pixels follow the notebook's theme, whatever the system's scheme
                # (waited for: a frame scrolled into sight, or just reloaded, is painted a moment later;
                # seen once in CI: a white frame, 255, right after the dark reload)
                dark = theme == "dark"
                shades: list[float] = []

                def painted(c: int = cell, dark: bool = dark, shades: list[float] = shades) -> bool:
                    shades.append(luminance(frame_pixels(nb, c)))
                    return (shades[-1] < 80) if dark else (shades[-1] > 180)

                wait_for(
                    painted,
                    timeout=15,
                    interval=0.25,
                    what=f"{target}'s pixels in the {theme} theme",
                    describe=lambda shades=shades: f"median luminance {shades[-3:]}",
                )
                for v in axe_view(nb, cell, target, theme, source):
                    problems.append(f"{theme} {target} {v['where']}: {v['id']} ({v['impact']}): {v['nodes']}")
    assert not problems, "axe-core violations:\n" + "\n".join(problems)

    # reduced motion asked for: each page is loaded again and draws twice a second (the kit's
    # REDUCED_MOTION_INTERVAL_MS), its physics at its pace: a set still changes what it measures
    # (each view scrolled into sight first: Chromium stops animation frames in frames out of sight)
    for cell, target in enumerate(TARGETS, start=1):
        nb.iframe(cell).scroll_into_view_if_needed()
        full = wait_for(
            lambda c=cell: (f := nb.frame(c).evaluate("() => [window.__fps, window.__fpsSpan]")) and f[1] >= 1500 and f,
            timeout=30,
            what=f"{target}'s frame rate",
        )
        assert full[0] > 5, f"{target} draws {full[0]} frames a second before reduced motion is asked for"
    nb.page.emulate_media(reduced_motion="reduce")
    for cell, target in enumerate(TARGETS, start=1):
        nb.iframe(cell).scroll_into_view_if_needed()
        fps = wait_for(
            lambda c=cell: (
                (f := nb.frame(c).evaluate("() => [window.__fps, window.__fpsSpan, document.body.dataset.motion]"))
                and f[2] == "reduced"
                and f[1] >= 1500
                and f
            ),
            timeout=30,
            what=f"{target} to draw at its reduced rate",
        )
        assert fps[0] <= 2.5, f"{target} draws {fps[0]} frames a second with reduced motion"
    ok, measured, expected = nb.run_cell(SET_CELL).split()
    assert ok == "True" and abs(float(measured) - float(expected)) < 0.05 * float(expected), (ok, measured, expected)
    nb.page.emulate_media(reduced_motion="no-preference")


@contextmanager
def _nothing() -> Iterator[None]:
    yield


# -- the keyboard ------------------------------------------------------------------------------------

_JS_CELLS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  return { count: nb.model.cells.length, types: [...Array(nb.model.cells.length).keys()].map(i => nb.model.cells.get(i).type),
           active: nb.activeCellIndex, mode: nb.mode };
}"""

# the focused element, described; whether it is in the widget and how its focus shows
_JS_FOCUS = """(root) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const backdrop = (node) => { for (let n = node; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c; } return [255, 255, 255]; };
  const el = document.activeElement;
  const inView = root.contains(el);
  const cs = el ? getComputedStyle(el) : null;
  return {
    inView,
    tag: el ? el.tagName.toLowerCase() : null,
    type: el && el.getAttribute('type'),
    name: el && (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 40),
    path: el && el.closest('[data-path]') ? el.closest('[data-path]').dataset.path : null,
    outline: cs ? [cs.outlineStyle, parseFloat(cs.outlineWidth), cs.outlineColor] : null,
    // the ring against what is around it (outside the control: its parent's backdrop), WCAG's 3:1
    ringContrast: cs && el.parentElement ? Math.round(ratio(rgb(cs.outlineColor), backdrop(el.parentElement)) * 100) / 100 : 0,
    inCell: Boolean(el && el.closest('.jp-Cell')),
  };
}"""


def _focus(view: Any) -> dict[str, Any]:
    return dict(view.evaluate(_JS_FOCUS))


def test_the_widget_by_keyboard_alone(open_notebook: Any, server: Any) -> None:
    nb, view = open_chat(open_notebook, [PENDULUM_CHAT, "print(round(sim.values['pendulum.length'], 2))"])
    page = nb.page
    before = page.evaluate(_JS_CELLS)

    # Tab from just before the widget walks through its controls, never into a frame
    view.evaluate(
        "(root) => { const s = document.createElement('button'); s.id = 'sb-before'; s.textContent = 'before'; root.before(s); s.focus(); }"
    )
    seen: list[dict[str, Any]] = []
    for _ in range(80):
        page.keyboard.press("Tab")
        focus = _focus(view)
        if not focus["inView"]:
            break
        seen.append(focus)
    tags = [f["tag"] for f in seen]
    assert "iframe" not in tags, f"a target frame is a tab stop: {tags}"
    names = [f["name"] for f in seen]
    # the panel's head, the message box and Send, then the inspector in the manifest's order, then the
    # observables' "Announce changes"
    assert names[:3] == ["Copy as code", "Message", "Send"] and tags[1] == "textarea", f"the panel's order: {names}"
    assert seen[-1]["type"] == "checkbox" and "Announce" in view.locator(".sb-announce").inner_text()
    paths = [f["path"] for f in seen if f["path"]]
    for path in ("pendulum.length", "pendulum.amplitude", "environment.gravity", "display.show_trail"):
        assert path in paths, f"{path} is not reached by Tab: {paths}"
    assert paths.index("pendulum.length") < paths.index("environment.gravity"), "the manifest's order"
    for f in seen:
        style, width, _colour = f["outline"]
        assert style != "none" and width >= 2, f"no visible focus on {f}"
        assert f["ringContrast"] >= 3, f"the focus ring of {f['name']!r} is {f['ringContrast']}:1 on its backdrop"
    # nothing of a row is cut off at the panel's edge (a unit, a select of named values)
    cut = view.evaluate(
        "(root) => { const edge = root.querySelector('.sb-panel').getBoundingClientRect().right;"
        " return [...root.querySelectorAll('.sb-row .sb-control > *')]"
        ".filter(e => e.getBoundingClientRect().right > edge + 1).map(e => e.outerHTML.slice(0, 80)); }"
    )
    assert cut == [], f"cut off at the panel's edge: {cut}"

    cells = lambda: page.evaluate(_JS_CELLS)  # noqa: E731

    slider = view.locator('.sb-row[data-path="pendulum.length"] input[type=range]')
    slider.focus()
    start = float(slider.input_value())
    page.keyboard.press("ArrowRight")
    assert float(slider.input_value()) == pytest.approx(start + 0.01), "an arrow moves a slider by its step"
    page.keyboard.press("Shift+ArrowRight")
    assert float(slider.input_value()) == pytest.approx(start + 0.11), "Shift+arrow: ten steps"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowUp")
    assert float(slider.input_value()) == pytest.approx(start + 0.11)
    assert _focus(view)["inView"], "the arrows kept the focus in the widget"

    # the notebook's command-mode keys, pressed on each kind of control: nothing happens to the notebook
    controls = {
        "slider": slider,
        "checkbox": view.locator('.sb-row[data-path="display.show_trail"] input[type=checkbox]'),
        "select": view.locator('.sb-row[data-path="pendulum.mode"] select'),
        "button": view.locator(".sb-panel .sb-copy"),
    }
    for kind, control in controls.items():
        for key in ["a", "b", "d", "d", "m", "y", "c", "x", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Space"]:
            control.focus()
            page.keyboard.press(key)
            now = cells()
            assert (now["count"], now["types"]) == (before["count"], before["types"]), (
                f"{key!r} on the {kind} changed the notebook: {before} -> {now}"
            )
            assert _focus(view)["inView"], f"{key!r} on the {kind} took the focus out of the widget"
    page.keyboard.press("Escape")
    focus = _focus(view)
    assert not focus["inView"] and focus["inCell"], f"Escape gives the focus back to the cell: {focus}"
    count = cells()["count"]
    page.keyboard.press("b")
    wait_for(lambda: cells()["count"] == count + 1, timeout=10, what="`b` to work again in the cell after Escape")
    page.keyboard.press("z")  # undo the new cell (command mode)
    wait_for(lambda: cells()["count"] == count, timeout=10, what="the new cell undone")

    # the kernel follows the keyboard: sim.values holds where the slider was left
    final = round(float(slider.input_value()), 2)
    wait_for(
        lambda: nb.run_cell(2).strip() == str(final),
        timeout=30,
        what=f"sim.values to follow the keys ({final})",
        describe=lambda: nb.output(2),
    )

    # Send by keyboard: the focus stays in the message box
    box = view.locator(".sb-panel textarea")
    box.focus()
    page.keyboard.type("what is the period?")
    page.keyboard.press("Tab")  # Send
    assert _focus(view)["name"] == "Send"
    page.keyboard.press("Enter")
    wait_for(
        lambda: view.evaluate("(r) => document.activeElement === r.querySelector('.sb-panel textarea')"),
        timeout=5,
        what="the focus back in the message box after Send",
    )


# -- what a screen reader hears ---------------------------------------------------------------------

_JS_LISTEN = """(root) => {
  const heard = window.__sbHeard = { polite: [], assertive: [], logRemoved: 0 };
  for (const region of root.querySelectorAll('.sb-announcer')) {
    new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes)
      if (n.textContent) heard[region.dataset.live].push(n.textContent); }).observe(region, { childList: true });
  }
  new MutationObserver((records) => { for (const r of records) heard.logRemoved += r.removedNodes.length; })
    .observe(root.querySelector('.sb-log'), { childList: true });
}"""


@LAB_ONLY  # the panel's own code; Notebook 7 runs the same (its keys and axe are tested above)
def test_one_announcement_per_answer_and_change_and_names_with_units(open_notebook: Any) -> None:
    nb, view = open_chat(open_notebook, [PENDULUM_CHAT, "print(sim.set_parameter('pendulum.amplitude', 25).ok)"])
    view.evaluate(_JS_LISTEN)
    heard = lambda: view.evaluate("() => window.__sbHeard")  # noqa: E731

    turns = [
        ("set the length to 2 m", "Length 2 m"),
        ("set the gravity to 1.62", "Gravity 1.62 m/s²"),
        ("what is the period?", None),
    ]
    for n, (words, change) in enumerate(turns, start=1):
        box = view.locator(".sb-panel textarea")
        box.fill(words)
        box.press("Enter")
        wait_for(
            lambda n=n: (
                len([t for t in heard()["polite"] if not t.startswith("Changed:")]) >= n
                and view.locator(".sb-panel").get_attribute("data-busy") == "false"
            ),
            timeout=60,
            what=f"the answer to turn {n} announced",
            describe=lambda: repr(heard()),
        )
        if change:
            wait_for(
                lambda c=change: any(c in t for t in heard()["polite"]),
                timeout=10,
                what=f"{change!r} announced",
                describe=lambda: repr(heard()),
            )
    assert nb.run_cell(2).strip() == "True"  # the kernel's own change, said like any other
    wait_for(
        lambda: any("Amplitude 25 deg" in t for t in heard()["polite"]),
        timeout=15,
        what="the kernel's change announced",
        describe=lambda: repr(heard()),
    )
    said = heard()
    answers = [t for t in said["polite"] if not t.startswith("Changed:")]
    changes = [t for t in said["polite"] if t.startswith("Changed:")]
    assert len(answers) == 3, f"one announcement per answer: {said}"
    assert len(changes) == 3, f"one announcement per applied change: {said}"
    assert said["assertive"] == [], said
    assert said["logRemoved"] == 0, f"the conversation was laid out again: {said}"

    # two runs that changed something: two chips, each with its own change and its outcome in its name
    chips = view.locator(".sb-chip summary")
    texts = [chips.nth(i).inner_text() for i in range(chips.count())]
    set_chips = [t for t in texts if "set_parameters" in t]
    assert len(set_chips) == 2, texts
    assert "length = 2" in set_chips[0] and "gravity = 1.62" in set_chips[1], set_chips
    assert all("applied" in t for t in set_chips), set_chips

    # the accessibility tree: each control named by its label, a slider's value with its unit
    tree = view.locator('.sb-row[data-path="pendulum.length"]').aria_snapshot()
    assert re.search(r'slider "Length"', tree), tree
    # the snapshot shows a slider's aria-valuenow; what a screen reader says is its aria-valuetext
    slider = view.locator('.sb-row[data-path="pendulum.length"] input[type=range]')
    assert slider.get_attribute("aria-valuetext") == "2 m"
    assert 'spinbutton "Length in m"' in tree, tree
    chip_tree = view.locator(".sb-log").aria_snapshot()
    assert "set_parameters: length = 2" in chip_tree and "applied" in chip_tree, chip_tree

    # "Announce changes": what the page measures is read out, at most every 5 s (OBSERVABLE_ANNOUNCE_MS)
    before = len(heard()["polite"])
    view.locator(".sb-announce-toggle").check()
    wait_for(
        lambda: any(t.startswith("period:") for t in heard()["polite"][before:]),
        timeout=15,
        what="the measurements announced",
        describe=lambda: repr(heard()["polite"][before:]),
    )
    started = time.monotonic()
    wait_for(lambda: len(heard()["polite"]) >= before + 2, timeout=15, what="a second reading of the measurements")
    assert time.monotonic() - started > 3.5, "measurements are read out at most every 5 s"
    view.locator(".sb-announce-toggle").uncheck()

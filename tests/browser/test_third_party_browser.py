"""Other people's pages (examples/third_party), unchanged, steered from a notebook in JupyterLab.

For each page: it loads with the page's own values; every parameter is applied and read back from
the page itself (the global's value, the control's value, through Playwright's frame API, not
through the bindings); every observable is reported; every action does what the page's button
does. Then the agent steers the double pendulum from the chat panel with the offline model.
The values and actions are ``EXAMPLES`` of tests/test_third_party_examples.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..test_third_party_examples import EXAMPLES, IDS, Example, same
from .harness import LAB_ONLY, NotebookPage, wait_for
from .test_bridge_browser import PREAMBLE, run_preamble
from .test_chat_browser import type_message, wait_text

pytestmark = pytest.mark.browser

REPORT = (
    "import json\n"
    "def report(r):\n"
    "    print('RESULT ' + json.dumps({'ok': r.ok, 'state': r.state, 'values': dict(sim.values),\n"
    "        'error': None if r.error is None else f'{r.error.code}: {r.error.message}'}))\n"
)


def widget_cell(example: Example, chat: bool = False) -> str:
    return f"sim = sb.TargetWidget({str(example.page)!r}{', chat=True' if chat else ''})\nsim"


def result(out: str) -> dict[str, Any]:
    """The RESULT line a cell printed with ``report(r)``."""
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert lines, f"the cell printed no RESULT line:\n{out}"
    return dict(json.loads(lines[-1][len("RESULT ") :]))


def page_value(frame: Any, example: Example, path: str) -> Any:
    """A parameter's value read from the page itself: its model (its own read), its global, or its form control."""
    param = example.load().manifest.parameters[path]
    bind = param.bind
    assert bind is not None
    if param.read is not None:
        held = frame.evaluate(f"() => ({param.read.global_ or param.read.expr})")
        held = float(held) if param.read.number and isinstance(held, str) else held  # fire stores the slider's text
        if param.read.scale is not None or param.read.offset is not None:  # the page's units -> the manifest's
            held = (held - (param.read.offset or 0)) / (param.read.scale or 1)
        return held
    if bind.kind == "global":
        return frame.evaluate(f"() => ({bind.global_})")
    return frame.evaluate(
        """(sel) => { const el = document.querySelector(sel);
             return el.type === "checkbox" ? el.checked : Number(el.value); }""",
        bind.selector,
    )


def settles_at(frame: Any, example: Example, path: str, value: Any) -> None:
    """The page shows ``value`` for ``path`` within a few frames. A page may redraw its controls from
    its own state on a timer and take a change only at its next frame (lorossi_boids rewrites its
    sliders every 50 ms from the factors its frame loop updates), so the control can show the old
    value for a moment after the reply; the reply's own state is checked exactly, at once."""
    wait_for(
        lambda: same(page_value(frame, example, path), value),
        timeout=10,
        what=f"{path} = {value!r} in the page",
        describe=lambda: repr(page_value(frame, example, path)),
    )


def open_example(
    open_notebook: Any, example: Example, cells: list[str], chat: bool = False
) -> tuple[NotebookPage, Any]:
    nb = open_notebook([PREAMBLE + "\n" + REPORT, widget_cell(example, chat), *cells])
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    return nb, nb.frame(1)


def run(nb: NotebookPage, index: int) -> dict[str, Any]:
    out = nb.run_cell(index, timeout=60)
    return result(out)


@LAB_ONLY
@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_every_parameter_applies_and_reads_back_and_every_action_does_what_the_page_does(
    open_notebook: Any, example: Example
) -> None:
    """In one notebook a page: its parameters first, then (after a reset to the defaults) its actions."""
    manifest = example.load().manifest
    together = {p: v for p, v in example.changes.items() if p not in example.alone}
    cells = [
        "report(sim.fetch_state())",
        f"report(sim.set_parameters({together!r}))",
        *[f"report(sim.set_parameter({p!r}, {example.changes[p]!r}))" for p in example.alone],
        "report(sim.fetch_state())",
        "report(sim.reset())",
        *_action_cells(example),
    ]
    nb, frame = open_example(open_notebook, example, cells)

    first = run(nb, 2)
    assert first["ok"], first["error"]
    # Loaded as the page starts: the state reads the page's own values, which are the defaults.
    for path, param in manifest.parameters.items():
        assert same(first["state"][path], param.value), (path, first["state"][path], param.value)
        settles_at(frame, example, path, param.value)
    for name in manifest.observables:
        if name not in example.late:
            assert first["state"].get(name) is not None, f"observable {name} not reported: {first['state']}"

    applied = run(nb, 3)
    assert applied["ok"], applied["error"]
    for path, value in together.items():
        assert same(applied["state"][path], value), (path, applied["state"][path], value)
        settles_at(frame, example, path, value)
        assert same(applied["values"][path], value)
    for offset, path in enumerate(example.alone):
        alone = run(nb, 4 + offset)
        assert alone["ok"], alone["error"]
        assert same(alone["state"][path], example.changes[path]), (path, alone["state"])
        settles_at(frame, example, path, example.changes[path])

    last = run(nb, 4 + len(example.alone))
    missing = [n for n in manifest.observables if last["state"].get(n) is None and n not in example.late]
    assert not missing, f"observables not reported after the changes: {missing}; {last['state']}"

    first_action = 6 + len(example.alone)
    reset = run(nb, first_action - 1)
    assert reset["ok"], reset["error"]
    for offset, (name, expected) in enumerate(example.actions.items()):
        reply = run(nb, first_action + offset)
        assert reply["ok"], (name, reply["error"])
        wrong = {k: reply["state"].get(k) for k, v in expected.items() if not same(reply["state"].get(k), v)}
        assert not wrong, f"after {name}: {wrong} (expected {expected})"
    if example.name == "euler_fluid":  # the last action was the wind tunnel: the page's own numbers agree
        assert frame.evaluate("() => [scene.sceneNr, scene.fluid.numY - 2]") == [1, 100]


def _action_cells(example: Example) -> list[str]:
    return [f"report(sim.act({name!r}))" for name in example.actions]


@LAB_ONLY
def test_a_reset_button_puts_the_boids_back(open_notebook: Any) -> None:
    """lorossi_boids: the page's Reset restores its factors; its own 50 ms timer moves the sliders."""
    example = next(e for e in EXAMPLES if e.name == "lorossi_boids")
    check = (
        "import time\nfor _ in range(100):\n    r = sim.fetch_state()\n"
        "    if r.state['flock.separation'] == 0.5: break\n    time.sleep(0.1)\nreport(r)"
    )
    nb, frame = open_example(
        open_notebook, example, ["report(sim.set_parameter('separation', 2.5))", "report(sim.act('reset'))", check]
    )
    assert run(nb, 2)["state"]["flock.separation"] == 2.5
    label = "() => document.querySelector('label[for=separation] .value').textContent"
    wait_for(lambda: frame.evaluate(label) == "2.50", timeout=10, what="the page's label to show 2.50")
    assert run(nb, 3)["ok"]
    state = run(nb, 4)["state"]
    assert state["flock.separation"] == 0.5 and state["separation_now"] == 0.5, state
    assert frame.evaluate("() => document.querySelector('#separation').value") == "0.5"


@LAB_ONLY
def test_the_chat_panel_steers_a_sketch_s_let_variable(open_notebook: Any) -> None:
    example = next(e for e in EXAMPLES if e.name == "double_pendulum")
    nb, frame = open_example(open_notebook, example, ["report(sim.fetch_state())"], chat=True)
    view = nb.views(1).nth(0)
    wait_for(lambda: view.locator(".sb-panel").count() == 1, timeout=30, what="the chat panel")
    assert frame.evaluate("() => g") == 1
    type_message(view, "set the gravity to 2")
    wait_for(lambda: frame.evaluate("() => g") == 2, timeout=30, what="the sketch's `let g` to be 2")
    wait_text(view, ".sb-msg.sb-assistant", "Set gravity to 2")
    wait_for(lambda: view.locator('.sb-chip[data-status="ok"]').count() >= 1, timeout=30, what="an ok chip")
    state = run(nb, 2)
    assert state["state"]["pendulum.gravity"] == 2 and state["values"]["pendulum.gravity"] == 2
    angle = state["state"]["angle1"]
    wait_for(lambda: frame.evaluate("() => a1") != angle, timeout=10, what="the pendulum to keep swinging")


@LAB_ONLY
def test_a_rounded_drag_and_a_default_the_page_refuses_as_it_opens_are_what_the_kernel_says(
    open_notebook: Any, tmp_path: Any
) -> None:
    """The Polygons page in JupyterLab: a drag the page rounds (asked 33.3 %, it keeps 33.25 %) is what
    ``sim.values`` holds; a copy whose default handles would cross opens with the values the page
    takes, says in the panel which it kept its own for, and the kernel's values are the page's."""
    from ..test_bindings_truth import CROSSING, MODEL, _polygons_variant

    example = next(e for e in EXAMPLES if e.name == "ncase_polygons")
    nb, frame = open_example(open_notebook, example, ["report(sim.set_parameter('min_same', 33.3))"])
    rounded = run(nb, 2)
    assert rounded["ok"], rounded["error"]
    held = frame.evaluate("() => BIAS * 100")
    assert held == pytest.approx(33.25)
    assert rounded["values"]["segregation.min_same"] == pytest.approx(held) == rounded["state"]["segregation.min_same"]

    page = _polygons_variant(tmp_path, CROSSING, constraints=False)
    crossing = open_notebook(
        [
            PREAMBLE + "\n" + REPORT,
            f"sim = sb.TargetWidget({str(page)!r}, chat=True)\nsim",
            "print('VALUES ' + json.dumps(dict(sim.values)))",
        ]
    )
    run_preamble(crossing)
    crossing.run_cell(1)
    crossing.wait_view(1)
    view = crossing.views(1).nth(0)
    notice = view.locator(".sb-msg.sb-notice")
    wait_for(lambda: notice.count() == 1, timeout=30, what="the panel's notice that the page kept its own values")
    text = notice.inner_text()
    assert text.startswith("the page of 'ncase_polygons' kept its own values: "), text
    out = crossing.run_cell(2, timeout=60)
    values = json.loads(next(line for line in out.splitlines() if line.startswith("VALUES "))[len("VALUES ") :])
    page_frame = crossing.frame(1)
    for path, expression in MODEL.items():
        assert values[path] == pytest.approx(page_frame.evaluate(f"() => {expression}")), path
    kept = [path for path in CROSSING if f"{path}: asked {CROSSING[path]} %" in text]
    assert kept and all(abs(values[path] - CROSSING[path]) > 0.25 for path in kept)


@LAB_ONLY
def test_a_reset_the_page_partly_refuses_a_set_to_what_it_holds_and_a_reversed_track_in_jupyterlab(
    open_notebook: Any, tmp_path: Any
) -> None:
    """In JupyterLab: a set to what the Polygons page holds leaves its random board alone; a reset whose
    defaults cross is partly taken, named in the result and the panel, the kernel's values the page's;
    the docs' dial with its track turned round is dragged the right way."""
    from ..test_bindings_truth import CROSSING, MODEL, _polygons_variant
    from ..test_docs_examples import _example

    page = _polygons_variant(tmp_path, CROSSING, constraints=False)
    nb = open_notebook(
        [
            PREAMBLE + "\n" + REPORT,
            f"sim = sb.TargetWidget({str(page)!r}, chat=True)\nsim",
            "report(sim.set_parameters({'min_same': 10, 'max_same': 95, 'occupied': 60}))",
            "report(sim.set_parameter('occupied', 60))",
            "r = sim.reset()\nprint('MESSAGE ' + r.message)\nreport(r)",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    frame, view = nb.frame(1), nb.views(1).nth(0)
    notices = view.locator(".sb-msg.sb-notice")
    wait_for(lambda: notices.count() == 1, timeout=30, what="the notice of the defaults the page kept as it opened")
    assert run(nb, 2)["ok"]
    frame.evaluate("() => { window.__board = draggables; }")
    assert run(nb, 3)["ok"]
    assert frame.evaluate("() => draggables === window.__board") is True  # a drag to where it is: not made
    out = nb.run_cell(4, timeout=60)
    reset = result(out)
    assert reset["ok"], reset["error"]
    message = next(line for line in out.splitlines() if line.startswith("MESSAGE "))
    assert "the page holds" in message, message
    wait_for(lambda: notices.count() == 2, timeout=30, what="the notice of the defaults the reset could not set")
    for path, expression in MODEL.items():
        assert reset["values"][path] == pytest.approx(frame.evaluate(f"() => {expression}")), path

    dial = _example(tmp_path, "### Controls people drag", "dial")
    html = dial.read_text(encoding="utf-8")
    html = html.replace("((e.clientX - box.left) / box.width) * 100", "(1 - (e.clientX - box.left) / box.width) * 100")
    html = html.replace('knob.style.left = model.speed * 2 + "px"', 'knob.style.left = (100 - model.speed) * 2 + "px"')
    dial.write_text(html, encoding="utf-8")
    manifest = json.loads(dial.with_suffix(".json").read_text(encoding="utf-8"))
    manifest["data"]["dial"]["speed"]["bind"]["span"] = [100, 0]
    dial.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    turned = open_notebook(
        [
            PREAMBLE + "\n" + REPORT,
            f"sim = sb.TargetWidget({str(dial)!r})\nsim",
            "report(sim.set_parameter('speed', 30))",
        ]
    )
    run_preamble(turned)
    turned.run_cell(1)
    turned.wait_view(1)
    dragged = run(turned, 2)
    assert dragged["ok"], dragged["error"]
    knob = turned.frame(1).evaluate("() => [model.speed, parseFloat(knob.style.left)]")
    assert knob[0] == pytest.approx(30, abs=0.5) and knob[1] == pytest.approx(140, abs=1)
    assert dragged["values"]["dial.speed"] == pytest.approx(knob[0])

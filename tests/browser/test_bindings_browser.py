"""Bound pages in JupyterLab: pages that know nothing of splitbrain, steered through their manifest only.

The pages (tests/fixtures/bound_pages) have top-level ``let`` globals, form controls and buttons;
the registry adds the binding runtime and the generated accessors. Each test runs cells through
the real kernel -> comm -> view -> sandboxed iframe path and reads the page's DOM through
Playwright's frame API. JupyterLab only: Notebook 7 shares the view and the relay.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .harness import ROOT, NotebookPage, wait_for
from .test_bridge_browser import PREAMBLE, run_preamble

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("server", ["lab"], indirect=True)]

BOUND_PAGES = ROOT / "tests" / "fixtures" / "bound_pages"


def _widget_cell(page: str) -> str:
    return f"sim = sb.TargetWidget({str(BOUND_PAGES / f'{page}.json')!r})\nsim"


def _printed_json(out: str) -> Any:
    return json.loads(out.strip().splitlines()[-1])


def _open(open_notebook: Any, page: str, *cells: str) -> NotebookPage:
    nb: NotebookPage = open_notebook([PREAMBLE, _widget_cell(page), *cells])
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    return nb


def test_top_level_let_globals_are_written_and_reported(open_notebook: Any) -> None:
    nb = _open(
        open_notebook,
        "globals",
        "import json\nr = sim.set_parameters({'speed': 7.5, 'gain': 4})\n"
        "print(json.dumps({'ok': r.ok, 'error': str(r.error), 'state': r.state}))",
        "print(json.dumps(sim.state))",
    )
    reply = _printed_json(nb.run_cell(2))
    assert reply["ok"], reply["error"]
    assert reply["state"]["motion.speed"] == 7.5 and reply["state"]["motion.gain"] == 4
    # The page's own code sees the new values: its `after` function redrew with them.
    frame = nb.frame(1)
    wait_for(
        lambda: "speed 7.5 gain 4" in frame.evaluate("() => document.getElementById('out').textContent"),
        timeout=10,
        what="the page to redraw with the new speed and gain",
    )
    assert frame.evaluate("() => typeof window.speed") == "undefined", "speed is a top-level let, no window property"
    # The runtime reports on its own, only when the state changed: the page's clock moves on.
    seen: dict[str, Any] = {}

    def reported_time_moves() -> bool:
        seen["state"] = _printed_json(nb.run_cell(3))
        return bool(seen["state"].get("t", 0) > 0.5 and seen["state"].get("motion.speed") == 7.5)

    wait_for(reported_time_moves, timeout=30, what="state reports with t > 0.5 s", describe=lambda: repr(seen))


def test_form_controls_are_set_like_a_person_and_the_page_follows(open_notebook: Any) -> None:
    nb = _open(
        open_notebook,
        "form",
        "import json\n"
        "r = sim.set_parameters({'speed': 12.5, 'count': 42, 'name': 'comet', 'trail': True, "
        "'mode': 'double', 'color': 'orange'})\n"
        "print(json.dumps({'ok': r.ok, 'error': str(r.error), 'state': r.state}))",
        "import json\nr = sim.set_parameter('mode', 'sideways')\nprint(json.dumps({'ok': r.ok, 'error': str(r.error)}))",
    )
    reply = _printed_json(nb.run_cell(2))
    assert reply["ok"], reply["error"]
    state = reply["state"]
    assert state["settings.speed"] == 12.5 and state["settings.mode"] == "double" and state["settings.trail"] is True
    assert state["model_mode"] == "double" and state["model_count"] == 42 and state["shown_speed"] == 12.5
    controls = nb.frame(1).evaluate(
        """() => ({
          speed: document.getElementById('speed').value,
          count: document.getElementById('count').value,
          name: document.getElementById('name').value,
          trail: document.getElementById('trail').checked,
          mode: document.querySelector('input[name=mode]:checked').value,
          color: document.getElementById('color').value,
          stats: document.getElementById('stats').textContent,
        })"""
    )
    assert controls == {
        "speed": "12.5",
        "count": "42",
        "name": "comet",
        "trail": True,
        "mode": "double",
        "color": "orange",
        "stats": "speed 12.5 m/s, double, orange",
    }
    # The kernel refuses a value outside the manifest's enum before the page sees it.
    refused = _printed_json(nb.run_cell(3))
    assert not refused["ok"] and "sideways" in refused["error"]


def test_a_button_action_clicks_once_the_page_says_it_is_ready(open_notebook: Any) -> None:
    nb = _open(
        open_notebook,
        "button",
        "import json\nsim.set_parameter('steps', 5)\nr = sim.act('run')\n"
        "print(json.dumps({'ok': r.ok, 'error': str(r.error), 'state': r.state}))",
        "import json\nr = sim.act('off')\nprint(json.dumps({'ok': r.ok, 'error': r.error.message if r.error else ''}))",
    )
    reply = _printed_json(nb.run_cell(2))
    assert reply["ok"], reply["error"]
    assert reply["state"]["runs"] == 5 and reply["state"]["run.steps"] == 5
    frame = nb.frame(1)
    assert frame.evaluate("() => document.getElementById('runs').textContent") == "5"
    off = _printed_json(nb.run_cell(3))
    assert not off["ok"] and "actions.off: bind.click '#off' is disabled" in off["error"]

"""Actions over the wire in a real browser (protocol 1.5): ``sim.act(name)`` from a JupyterLab cell
reaches the sandboxed page's own ``SplitBrain.onAction`` handler and comes back with its state.

The page is ``tests/fixtures/action_pages/counter.html``: it registers ``SplitBrain.onAction`` itself
(no bindings) and shows what it ran in ``body.dataset``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .harness import LAB_ONLY
from .test_bridge_browser import PREAMBLE, run_preamble

pytestmark = pytest.mark.browser
ACTION_PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "action_pages"


@LAB_ONLY
def test_act_runs_the_pages_own_onaction_handler_in_order_with_the_sets(open_notebook: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            f"sim = sb.TargetWidget('counter', targets_dir={str(ACTION_PAGES)!r})\nsim",
            "print(sim.set_parameter('step', 4).ok)\n"
            "r = sim.act('add')\n"
            "print(r.ok, r.applied, r.state['count'], r.state['last_action'])\n"
            "r = await sim.aact('run')\n"
            "print(r.ok, r.state['running'])",
            "r = sim.act('explode')\nprint(r.error.code, '|', r.error.message)",
            "r = sim.act('nope')\nprint(r.error.code, '|', r.error.message)",
            "print(sim.audit.to_code())",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)

    assert nb.run_cell(2).strip().splitlines() == ["True", "True True 4 add@4", "True True"]
    seen = nb.wait_frame_value(1, "running", "true")
    assert seen["count"] == "4" and seen["lastAction"] == "run@4"

    assert nb.run_cell(3).strip() == "target_error | the counter exploded"
    refused = nb.run_cell(4).strip()
    assert refused.startswith("invalid_value | target 'counter' has no action 'nope'; its actions are 'run'"), refused
    assert nb.frame_dataset(1)["lastAction"] == "explode@4"  # the refused name never reached the page

    assert nb.run_cell(5).strip() == (
        "# python\nsim.set_parameters({\"settings.step\": 4})\nsim.act('add')\nsim.act('run')"
    )


@LAB_ONLY
def test_the_panel_has_a_button_per_action_and_pressing_it_runs_the_action(open_notebook: Any) -> None:
    from .harness import wait_for
    from .test_chat_browser import open_chat, type_message, wait_text

    nb, view = open_chat(
        open_notebook,
        [
            f"sim = sb.TargetWidget('counter', targets_dir={str(ACTION_PAGES)!r}, chat=True)\nsim",
            "print([(e.op, e.arguments, e.ok, e.source) for e in sim.audit])",
        ],
    )
    buttons = view.locator(".sb-actions button.sb-action")
    wait_for(lambda: buttons.count() == 4, timeout=30, what="one button per action")
    assert buttons.all_inner_texts() == ["Run", "Add the step", "Reset the count", "Explode"]
    assert buttons.nth(1).get_attribute("title") == "add — Add the step to the count once."

    view.get_by_role("button", name="Add the step").click()
    nb.wait_frame_value(1, "count", "1")
    view.get_by_role("button", name="Explode").click()  # the page throws: the panel says so
    wait_text(view, ".sb-log", "the counter exploded")

    type_message(view, "press run")  # the offline planner's run_action, through the same page
    nb.wait_frame_value(1, "running", "true")
    wait_text(view, ".sb-log", "Ran Run")
    assert nb.run_cell(2).strip() == (
        "[('action', {'name': 'add'}, True, 'inspector'), ('action', {'name': 'explode'}, False, 'inspector'), "
        "('action', {'name': 'run'}, True, 'chat: press run')]"
    )

"""The whole path in a real browser: kernel -> comm -> view -> sandboxed iframe -> back.

Each test writes a fresh notebook into the app's server, opens it in headless Chromium, runs
cells through ``window.jupyterapp`` and reads the target page's DOM through Playwright's frame
API (the parent page cannot read into the opaque-origin iframe). Parametrized over JupyterLab
("lab") and Notebook 7 ("notebook") by the session-scoped ``server`` fixture.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import LAB_ONLY, ROOT, NotebookPage, record_timing, wait_for

pytestmark = pytest.mark.browser

PREAMBLE = (
    "import sys, splitbrain_widget as sb\n"
    "from IPython.display import display\n"
    "print('PY', sys.executable)\n"
    "print('SB', sb.__file__)"
)


def run_preamble(nb: NotebookPage) -> None:
    """Cell 0 of every notebook: the kernel is this venv's interpreter and imports this checkout."""
    out = nb.run_cell(0)
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines() if " " in line)
    assert lines.get("PY") == sys.executable, f"the kernel is not this venv's python ({sys.executable}): {out!r}"
    assert Path(lines.get("SB", "")).resolve().is_relative_to(ROOT / "splitbrain_widget"), (
        f"the kernel imported splitbrain_widget from elsewhere: {out!r}"
    )


def frame_speed(nb: NotebookPage, cell: int, nth: int = 0) -> str | None:
    return nb.frame_dataset(cell, nth).get("speed")


# -- a. a blocking set from a plain cell ---------------------------------------------------------------


def test_blocking_set_reaches_iframe_and_returns_state(open_notebook: Any, server: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\nsim",
            "r = sim.set_parameter('speed', 12)\nprint(r.ok, r.views_applied, r.state['settings.speed'])",
        ]
    )
    opened = time.monotonic() - nb.timings["open_to_kernel_idle_s"]
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    record_timing(server.app, "open to widget ready (bouncer)", time.monotonic() - opened)
    assert nb.frame_dataset(1)["speed"] == "8", "the target should start at the manifest default"

    out = nb.run_cell(2)
    assert out.strip() == "True 1 12", out
    assert frame_speed(nb, 1) == "12"


# -- b. a change in the same cell as the display -------------------------------------------------------


def test_set_in_the_displaying_cell_lands_once_ready(open_notebook: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\n"
            "display(sim)\n"
            "r = sim.set_parameter('speed', 21)\n"
            "print(r.ok, r.views_applied, r.state and r.state.get('settings.speed'), r.error)",
        ]
    )
    run_preamble(nb)
    # Worst case by design: attach_timeout (5 s) + timeout (10 s); anything longer is a hang.
    out = nb.run_cell(1, timeout=30)
    assert out.strip() == "True 1 21 None", out
    nb.wait_view(1)
    nb.wait_frame_value(1, "speed", "21")


# -- c. a page reload restores the values ------------------------------------------------------------


def test_reload_restores_values(open_notebook: Any, server: Any) -> None:
    """Save, reload the page: the widget manager re-renders the saved widget output from the live
    kernel model, and the new view applies the current values once its target is ready."""
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\nsim",
            "r = sim.set_parameter('speed', 17)\nprint(r.ok, r.views_applied)",
            "display(sim)",
            "r = sim.set_parameter('speed', 19)\n"
            "print(r.ok, r.views_applied >= 1, r.state['settings.speed'], sim.values['settings.speed'])\n"
            "print('views', sim.views)",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    assert nb.run_cell(2).strip() == "True 1"
    nonce_before = nb.nonce(1)
    # The outputs must be on disk for the page to re-render them (autosave would do it in 2 min).
    nb.save()

    started = time.monotonic()
    nb.reload()
    nb.wait_view(1)
    record_timing(server.app, "reload to re-rendered widget ready", time.monotonic() - started)
    assert nb.nonce(1) != nonce_before, "a reloaded view must get a fresh nonce"
    nb.wait_frame_value(1, "speed", "17")

    # A new view of the same widget, displayed after the reload, starts from the current values too.
    nb.run_cell(3)
    nb.wait_view(3)
    nb.wait_frame_value(3, "speed", "17")

    # And the kernel reaches the views of the reloaded page.
    out = nb.run_cell(4)
    assert out.splitlines()[0] == "True True 19 19", out
    print(server.app, "after reload:", out.splitlines()[1])
    nb.wait_frame_value(1, "speed", "19")
    nb.wait_frame_value(3, "speed", "19")


# -- d. two views of one widget ----------------------------------------------------------------------


def test_two_views_both_apply_one_result(open_notebook: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\nsim",
            "display(sim)",
            "n0 = len(sim.audit)\n"
            "r = sim.set_parameter('speed', 14)\n"
            "print(r.ok, r.views_applied >= 1, len(sim.audit) - n0, sim.views)\n"
            "print('views_applied', r.views_applied)",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.run_cell(2)
    nb.wait_view(1)
    nb.wait_view(2)
    assert nb.nonce(1) != nb.nonce(2), "each view needs its own nonce"

    out = nb.run_cell(3)
    assert out.splitlines()[0] == "True True 1 2", out
    nb.wait_frame_value(1, "speed", "14")
    nb.wait_frame_value(2, "speed", "14")


# -- e. forged messages from a sibling frame and from the top page -------------------------------------


def test_forged_sibling_and_top_messages_are_ignored(open_notebook: Any, targets_dir: Path) -> None:
    """A hostile target in a sibling iframe floods window.parent with forged ready/state/error
    messages: with wrong nonces, with its own nonce, with the honest views' real nonces (handed to
    it by the test: it cannot read them itself) and with a real pending request id. The top page
    posts the same with the right nonce. None of it may reach the honest widget: its call is
    answered by its own target, its state is untouched, and a never-ready view stays not ready."""
    d = repr(str(targets_dir))
    nb = open_notebook(
        [
            PREAMBLE,
            f"honest = sb.TargetWidget('gated', targets_dir={d})\nhonest",
            f"nr = sb.TargetWidget('neverready', targets_dir={d})\nnr",
            f"hostile = sb.TargetWidget('hostile', targets_dir={d})\nhostile",
            "r = honest.set_parameter('speed', 13, timeout=40)\n"
            "print(r.ok, r.views_applied, r.state.get('settings.speed'), r.state.get('honest'), 'forged' in r.state, r.error)",
            "r2 = nr.set_parameter('speed', 3, timeout=3)\nprint(r2.ok, r2.error and r2.error.code)",
            "import json\n"
            "print(honest.values['settings.speed'], 'forged' in honest.state, "
            "'forged' in (honest.bridge.latest_state or {}), honest.state.get('honest'), len(honest.audit), honest.views)\n"
            "print('STATE', json.dumps(honest.state))",
        ]
    )
    run_preamble(nb)
    for cell in (1, 2, 3):
        nb.run_cell(cell)
    nb.wait_view(1)
    nb.wait_view(3)
    nb.wait_view(2, status=("loading", "error"))
    honest_nonce, nr_nonce = nb.nonce(1), nb.nonce(2)

    hostile = nb.frame(3)
    attempts = json.loads(hostile.evaluate("() => document.body.dataset.stealAttempts"))
    assert attempts and all(a.startswith("blocked:") for a in attempts), (
        f"a sandboxed sibling could read another frame's name (nonce): {attempts}"
    )

    honest = nb.frame(1)
    honest.evaluate("() => window.holdRequests()")
    run = nb.start_cell(4)
    pending_id = wait_for(
        lambda: honest.evaluate("() => document.body.dataset.pendingId"),
        timeout=30,
        what="the honest target to hold the request",
    )
    assert pending_id.startswith("r"), pending_id

    # The hostile frame now knows everything an attacker could wish for, and floods with it.
    sent0 = int(hostile.evaluate("(o) => window.arm(o)", {"nonces": [honest_nonce, nr_nonce], "ids": [pending_id]}))
    wait_for(
        lambda: int(hostile.evaluate("() => document.body.dataset.sent")) > sent0 + 500,
        timeout=30,
        what="the hostile frame to flood",
    )
    # The top page forges with the right nonces: event.source is the top window, not the iframe.
    nb.page.evaluate(
        """([honest, nr, id]) => {
          const forged = { forged: true, honest: false, "settings.speed": 666 };
          const post = (m) => window.postMessage({ source: "splitbrain-target", ...m }, "*");
          post({ nonce: honest, type: "state", id, payload: forged });
          post({ nonce: honest, type: "error", id, error: { code: "target_error", message: "forged" } });
          post({ nonce: honest, type: "state", payload: forged });
          post({ nonce: honest, type: "ready" });
          post({ nonce: nr, type: "ready" });
        }""",
        [honest_nonce, nr_nonce, pending_id],
    )
    assert nb.view_status(1) == "ready"
    assert nb.view_status(2) != "ready", "a forged ready message made the never-ready view ready"

    honest.evaluate("() => window.releaseAll()")
    out = nb.wait_cell(run, 4)
    assert out.strip() == "True 1 13 True False None", out
    nb.wait_frame_value(1, "speed", "13")

    out = nb.run_cell(5)
    assert out.strip() == "False not_ready", out
    assert nb.view_status(2) != "ready", "a forged ready message made the never-ready view ready"

    out = nb.run_cell(6)
    assert out.splitlines()[0] == "13 False False True 1 1", out


# -- f. a target that never calls ready() ---------------------------------------------------------------


@LAB_ONLY  # the ready timeout is the view's own (js/host), the same in Notebook 7; it waits 15 s
def test_never_ready_target_gives_a_clear_error(open_notebook: Any, targets_dir: Path) -> None:
    d = repr(str(targets_dir))
    nb = open_notebook(
        [
            PREAMBLE,
            f"sim = sb.TargetWidget('neverready', targets_dir={d})\nsim",
            "import time\n"
            "t0 = time.monotonic()\n"
            "r = sim.set_parameter('speed', 5, timeout=3)\n"
            "print(r.ok, r.error.code, 2.9 < time.monotonic() - t0 < 8, sim.values['settings.speed'])\n"
            "print(r.error.message)",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    view = nb.wait_view(1, status="loading")
    assert nb.frame(1).evaluate("() => document.body.dataset.loaded") == "1"

    out = nb.run_cell(2, timeout=30)
    assert out.splitlines()[0] == "False not_ready True 5", out
    assert "did not signal ready" in out, out

    # The view says so too, once its own ready timeout (15 s in js/view/widget.js) has passed.
    nb.wait_view(1, status="error", timeout=45)
    text = view.locator(".splitbrain-status").inner_text()
    assert "did not call SplitBrain.ready()" in text, text


# -- a change in the cell right after the display, both cells run at once (Run All) ---------------------


@pytest.mark.parametrize("via", ["python", "agent"])
def test_a_change_in_the_next_cell_after_a_display_is_never_lost(open_notebook: Any, via: str) -> None:
    """Run All: the display and the change race the new view's first apply; the page must end on it."""
    change = (
        "r = sim.set_parameter('speed', 17)"
        if via == "python"
        else "r = sb.Agent(sim).ask('set the speed to 17').tool_calls[0]"
    )
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\nsim",
            f"{change}\nprint('R', r.ok)",
            "print('V', sim.values['settings.speed'])",
        ]
    )
    outs = nb.run_all(timeout=60)
    assert "V 17" in outs[3], outs
    nb.wait_view(1)
    nb.wait_frame_value(1, "speed", "17", timeout=20)

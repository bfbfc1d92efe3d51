"""The notebook's page in the background, in JupyterLab (issue #20, protocol 1.6).

The kernel learns that the page went to the background, a call that needs the page's own clock
(a live ``seek`` or ``record``) answers ``page_hidden`` at once, a change still reaches the page,
the chat panel holds its streamed text; when the page comes back the kernel's values and the page
agree, a recording works again and the panel shows what it held.

Playwright keeps every page it drives "visible": a second tab brought to the front, a minimised
window or a frozen page do not change ``document.visibilityState`` (by design: microsoft/playwright
#2286, #3570; checked here with new and headed Chromium under Xvfb). So the test gives the notebook
page what Chromium gives it on a tab switch: ``document.hidden`` / ``visibilityState`` and the
``visibilitychange`` event. What it cannot reproduce is the throttling itself (timers at most once a
second, no animation frames): that is why the calls above must not wait for the page's clock.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .harness import LAB_ONLY, record_timing
from .test_chat_browser import open_chat, type_message, wait_text

pytestmark = pytest.mark.browser
# What Chromium does to a page whose tab goes to the background, or comes back.
SET_HIDDEN = """(hidden) => {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  document.dispatchEvent(new Event('visibilitychange'));
}"""

KNOWS = "import json\nprint('K', json.dumps([sim.page_visible, [(e.op, e.arguments) for e in sim.audit if e.op.startswith('page_')]]))"
HIDDEN_CALLS = """\
import time
out = {}
t = time.monotonic()
r = sim.seek('period', 3.0, vary='pendulum.length', timeout=30)
out['seek'] = [r.error and r.error.code, round(time.monotonic() - t, 2), sim.values['pendulum.length']]
t = time.monotonic()
try:
    sim.record(2.0, every=0.5)
    out['record'] = ['returned', round(time.monotonic() - t, 2)]
except RuntimeError as e:
    out['record'] = [str(e)[:19], round(time.monotonic() - t, 2)]
r = sim.set_parameter('length', 2.0)
out['set'] = [r.ok, r.applied, r.state.get('pendulum.length')]
print('H', json.dumps(out))
"""
BACK = """\
s = sim.fetch_state()
df = sim.record(1.0, every=0.5)
print('B', json.dumps([sim.page_visible, s.state.get('pendulum.length'), sim.values['pendulum.length'], len(df), df.attrs['reports'] > 0]))
"""

ANSWERED = """\
import asyncio
while not any(e['role'] == 'assistant' for e in sim.transcript):
    await asyncio.sleep(0.05)
print('answered')
"""


def tagged(text: str, tag: str) -> Any:
    line = next(line for line in text.splitlines() if line.startswith(tag + " "))
    return json.loads(line[len(tag) + 1 :])


@LAB_ONLY
def test_a_page_in_the_background_is_known_answered_at_once_and_caught_up_when_back(open_notebook: Any) -> None:
    nb, view = open_chat(
        open_notebook,
        ["sim = sb.TargetWidget('pendulum', chat=True)\nsim", KNOWS, HIDDEN_CALLS, BACK, KNOWS, ANSWERED],
    )
    panel = view.locator(".sb-panel")
    assert tagged(nb.run_cell(2), "K") == [True, []]

    hidden_at = time.monotonic()
    nb.page.evaluate(SET_HIDDEN, True)
    known = tagged(nb.run_cell(2), "K")
    record_timing("lab", "page hidden to the kernel knowing (a cell later)", time.monotonic() - hidden_at)
    assert known == [False, [["page_hidden", {"cause": "visibilitychange"}]]], known
    assert panel.get_attribute("data-paused") == "true"

    calls = tagged(nb.run_cell(3), "H")
    print(f"calls while the page is in the background: {calls}")
    code, seek_s, length = calls["seek"]
    assert code == "page_hidden" and seek_s < 5 and length == 1.0, calls  # put back, at once
    assert calls["record"][0] == "record: page_hidden" and calls["record"][1] < 1, calls
    assert calls["set"] == [True, True, 2], calls  # a change still reaches the page
    record_timing("lab", "live seek while hidden: page_hidden after", seek_s)

    type_message(view, "set the length to 1.5 m")
    assert nb.run_cell(6, timeout=60).strip() == "answered"  # the kernel's side of the run is over
    log = panel.locator(".sb-log").inner_text()
    assert "Set length to 1.5 m" not in log and panel.locator(".sb-chip").count() == 0, (
        f"the run showed while the page was hidden: {log!r}"
    )

    nb.page.evaluate(SET_HIDDEN, False)
    wait_text(view, ".sb-log", "Set length to 1.5 m")  # held, then shown when the page came back
    assert panel.locator(".sb-chip").count() == 1
    assert panel.get_attribute("data-paused") == "false"
    back = tagged(nb.run_cell(4), "B")
    print(f"back in front: {back}")
    visible, page_length, kernel_length, rows, reported = back
    assert visible is True and page_length == kernel_length == 1.5 and rows == 2 and reported, back
    ops = [op for op, _ in tagged(nb.run_cell(5), "K")[1]]
    assert ops == ["page_hidden", "page_visible"], ops

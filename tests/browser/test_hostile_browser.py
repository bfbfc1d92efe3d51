"""The hostile pages of the security suite (tests/hostile/) in JupyterLab and Notebook 7.

One notebook holds every hostile page as a widget beside an honest one, all displayed at once; a
loopback server logs every request it receives. The passing figure is zero requests; every call
ends by its deadline with a code that says why (judged by the same table as headless,
tests/hostile/__init__.py); the honest widget keeps working. Then, in JupyterLab, the one-second
raw postMessage flood, ten times with both cores kept busy: the honest widget beside it must answer
each time within its normal deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .. import hostile
from .harness import LAB_ONLY, NotebookPage
from .test_bridge_browser import PREAMBLE, run_preamble
from .test_security_browser import tagged

pytestmark = pytest.mark.browser
CALL_TIMEOUT = 10  # the widget's default deadline
HONEST_DEADLINE = 10.0  # the widget's default timeout: an honest call must never need more
FLOOD_RUNS = int(os.environ.get("SPLITBRAIN_FLOOD_RUNS", "5"))  # CI: 5 (its budget); a longer stress: 20
STAYS = [n for n, a in hostile.PAGES.items() if a.expect == "answers" and n != "raw_flood"]
LEAVES = [n for n, a in hostile.PAGES.items() if a.expect == "leaves"]


@pytest.fixture(scope="module")
def log() -> Iterator[hostile.RequestLog]:
    with hostile.request_log() as server:
        yield server


def forget_attack_noise(page: Any, log: hostile.RequestLog) -> int:
    """Drop the console lines the attacks cause on purpose (CSP reports naming the log server, refused
    frames): the page fixture fails on any other CSP report."""
    lines = page._sb_console.lines
    noise = (log.url, "ws://127.0.0.1", "chrome-error", "Framing '")  # the navigations the sandbox frame refused
    expected = [line for line in lines if any(mark in line for mark in noise)]
    lines[:] = [line for line in lines if line not in expected]
    return len(expected)


CALLS = """
import json, time
def settle(sim, leaves, timeout):
    # call until the page stays answered (or, for a page that leaves its frame, until it is stopped)
    seen, until = [], time.monotonic() + 60
    while time.monotonic() < until:
        t0 = time.monotonic()
        r = sim.set_parameter('speed', 3 + len(seen) % 10, timeout=timeout)
        seen.append({'ok': r.ok, 'code': r.error.code if r.error else None, 'message': r.error.message if r.error else '',
                     'took': time.monotonic() - t0, 'forged': 'forged' in (r.state or {})})
        if (leaves and not r.ok and 'the target was stopped: it left its frame' in seen[-1]['message']) or (not leaves and len(seen) >= 2):
            break
    return seen
"""


@pytest.mark.parametrize("server", ["lab", "notebook"], indirect=True)
def test_hostile_pages_reach_nothing_and_every_call_ends_by_its_deadline(
    open_notebook: Any, targets_dir: Path, page: Any, log: hostile.RequestLog, server: Any
) -> None:
    hostile.write_pages(targets_dir, log.url)
    d = repr(str(targets_dir))
    # The pages that leave their frames first (until each is stopped), then those that stay, then the
    # page of huge states on its own: each is judged on its own calls, not on its neighbours' noise.
    order = LEAVES + STAYS
    cells = [PREAMBLE, f"honest = sb.TargetWidget('gated', targets_dir={d})\nhonest"]
    cells += [f"w_{n} = sb.TargetWidget({n!r}, targets_dir={d}, timeout={CALL_TIMEOUT})\nw_{n}" for n in order]
    calls_at = len(cells)
    cells.append(CALLS)
    cells += [f"print('OUT', json.dumps(settle(w_{n}, {n in LEAVES}, {CALL_TIMEOUT})))" for n in order]
    huge_at = len(cells)
    cells.append(f"w_huge = sb.TargetWidget('huge_values', targets_dir={d}, timeout={CALL_TIMEOUT})\nw_huge")
    cells.append(
        "import json\nres = {m: w_huge.set_parameter('mode', m) for m in ('wide', 'deep', 'surrogate', 'proto')}\nr = {m: x.state for m, x in res.items()}\nprint('WHY', json.dumps({m: str(x) for m, x in res.items() if not x.ok}))\n"
        "print('HUGE', json.dumps(r, ensure_ascii=True))"
    )
    cells.append("r = honest.set_parameter('speed', 13)\nprint('H', json.dumps({'ok': r.ok, 'state': r.state}))")
    cells.append(
        "try:\n    sb.TargetWidget('proto_names', targets_dir="
        + d
        + ")\nexcept sb.TargetError as e:\n    print('P', e)"
    )
    before = log.count()
    nb: NotebookPage = open_notebook(cells)
    run_preamble(nb)
    for cell in range(1, calls_at):
        nb.run_cell(cell)
    nb.wait_view(1)
    for cell in range(1 + len(LEAVES) + 1, calls_at):
        nb.wait_view(cell)
    for cell in range(2, calls_at):  # sandboxed, or already stopped (its frame replaced by an empty one)
        assert nb.iframe(cell).get_attribute("sandbox") in ("allow-scripts", ""), cell
    nb.run_cell(calls_at)
    calls = {n: tagged(nb.run_cell(calls_at + 1 + i, timeout=90), "OUT") for i, n in enumerate(order)}
    for name, seen in calls.items():
        said = [(c["code"], round(c["took"], 1), c["message"][:60]) for c in seen]
        # Every call ended by its deadline, with a code that says why, never forged. A page that leaves
        # its frame is answered not_ready at once, except (seen in JupyterLab, about one run in two)
        # a call sent to a fresh frame whose page neither became ready nor was seen leaving before the
        # call's deadline: it ends `timeout` (known, in the closing note of issue 25).
        allowed = ("not_ready", "timeout") if name in LEAVES else ("not_ready",)
        for call in seen:
            assert call["took"] < CALL_TIMEOUT + 1, (name, said)
            assert not call["forged"], (name, said)
            assert call["ok"] or call["code"] in allowed, (name, said)
        if name in LEAVES:
            assert sum(c["code"] == "timeout" for c in seen) <= 1, (name, said)
        if name in LEAVES:
            assert "the target was stopped: it left its frame" in seen[-1]["message"], (name, seen)
        else:
            assert seen[-1]["ok"], (name, seen)
    nb.run_cell(huge_at)
    nb.wait_view(huge_at)
    out = nb.run_cell(huge_at + 1)
    huge, why = tagged(out, "HUGE"), tagged(out, "WHY")
    expected = {
        "wide": lambda s: s == {"_truncated": True, "code": "too_many_values", "limit": 100_000},
        "deep": lambda s: s == {"_truncated": True, "code": "too_deep", "limit": 32},
        "surrogate": lambda s: s["status"] == "broken \ufffd text" and "key\ufffd" in s,
        "proto": lambda s: s["__proto__"] == {"polluted": True},
    }
    for mode, holds in expected.items():
        # Stop 34 saw 'wide' and 'deep' time out here: the page's ~1 MiB states crossed the comm and
        # held the calls behind them for seconds. The view now replaces them by the marker first.
        assert huge[mode] is not None, (mode, why)
        assert holds(huge[mode]), (mode, huge[mode])
    assert page.evaluate("() => ({}).polluted === undefined && Object.prototype.polluted === undefined")
    honest = tagged(nb.run_cell(huge_at + 2), "H")
    assert honest["ok"] and honest["state"]["settings.speed"] == 13, honest
    refused = nb.run_cell(huge_at + 3)
    assert "proto_names.json: data.settings.__proto__" in refused, refused
    assert log.count() == before, f"requests reached the server:\n{log.seen(before)}"
    forget_attack_noise(page, log)


FLOOD_CELL = """
import json, time
def flood_run():
    w_flood.set_parameter('mode', 'flood')
    took, until = [], time.monotonic() + 4
    while time.monotonic() < until:
        t0 = time.monotonic()
        r = honest.set_parameter('speed', 1 + len(took) % 40, timeout=DEADLINE)
        took.append((r.ok, time.monotonic() - t0))
    stopped = w_flood.set_parameter('mode', 'none')
    return {'honest': took, 'flood': stopped.error.code if stopped.error else 'ok',
            'why': stopped.error.message if stopped.error else ''}
print('RUN', json.dumps(flood_run()))
"""


@LAB_ONLY
def test_a_raw_flood_never_makes_an_honest_widget_miss_its_deadline(
    open_notebook: Any, targets_dir: Path, page: Any, log: hostile.RequestLog
) -> None:
    """Ten one-second raw postMessage floods (to the page's parent: its sandbox frame) with both cores
    kept busy by two other processes; after each, the flooding page is restarted from its status bar."""
    hostile.write_pages(targets_dir, log.url)
    d = repr(str(targets_dir))
    nb: NotebookPage = open_notebook(
        [
            PREAMBLE,
            f"honest = sb.TargetWidget('gated', targets_dir={d})\nhonest",
            f"w_flood = sb.TargetWidget('raw_flood', targets_dir={d})\nw_flood",
            FLOOD_CELL.replace("DEADLINE", repr(HONEST_DEADLINE)),
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.run_cell(2)
    nb.wait_view(1)
    nb.wait_view(2)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    runs: list[dict[str, Any]] = []
    try:
        for _ in range(FLOOD_RUNS):
            runs.append(tagged(nb.run_cell(3, timeout=120), "RUN"))
            nb.wait_view(2, status="error")
            nb.views(2).locator(".sb-restart").click()
            nb.wait_view(2)
    finally:
        for proc in busy:
            proc.kill()
    worst = [max(t for _, t in run["honest"]) for run in runs]
    print(f"\n[flood] honest call, slowest per run (s): {json.dumps([round(w, 3) for w in worst])}")
    for run in runs:
        assert all(ok for ok, _ in run["honest"]), run
        assert run["flood"] == "not_ready" and "was stopped" in run["why"], run
    assert max(worst) < HONEST_DEADLINE, worst
    assert log.count() == 0

"""The agent and the chat panel in a real browser: type, watch the target change, stop, approve, steer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .harness import LAB_ONLY, ROOT, NotebookPage, wait_for
from .test_bridge_browser import PREAMBLE, run_preamble

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "docs" / "img"
CHAT_CELL = "sim = sb.TargetWidget('bouncer', chat=True)\nsim"


def open_chat(open_notebook: Any, cells: list[str]) -> tuple[NotebookPage, Any]:
    nb = open_notebook([PREAMBLE, *cells])
    run_preamble(nb)
    nb.run_cell(1)
    view = nb.wait_view(1)
    wait_for(lambda: view.locator(".sb-panel").count() == 1, timeout=30, what="the chat panel")
    return nb, view


def type_message(view: Any, text: str) -> None:
    box = view.locator(".sb-panel textarea")
    box.fill(text)
    box.press("Enter")


def wait_text(view: Any, selector: str, text: str, timeout: float = 30) -> None:
    wait_for(
        lambda: any(text in t for t in view.locator(selector).all_inner_texts()),
        timeout=timeout,
        what=f"{text!r} in {selector}",
        describe=lambda: repr(view.locator(".sb-log").inner_text()),
    )


def shoot(view: Any, server: Any, name: str) -> None:
    """Save a screenshot (JupyterLab only) as a test artifact used by the README."""
    if server.app == "lab":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        view.screenshot(path=str(SCREENSHOTS / name))


def test_agent_ask_in_a_plain_cell_changes_the_target(open_notebook: Any) -> None:
    nb = open_notebook(
        [
            PREAMBLE,
            "sim = sb.TargetWidget('bouncer')\nsim",
            "agent = sb.Agent(sim)\nr = agent.ask('set the speed to 12 and make it red')\nprint(r.text)\n"
            "print([c.name for c in r.tool_calls], r.tool_calls[0].result.get('views_applied'))",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    nb.run_cell(2, timeout=60)
    nb.expect_output(2, "Offline planner: Set speed to 12 m/s and color to red.")
    nb.expect_output(2, "['set_parameters'] 1")
    nb.wait_frame_value(1, "speed", "12")
    nb.wait_frame_value(1, "color", "red")


def test_typing_a_request_changes_the_target_and_shows_chips(open_notebook: Any, server: Any) -> None:
    nb, view = open_chat(open_notebook, [CHAT_CELL, "print(sim.values['settings.speed'], sim.values['display.color'])"])
    type_message(view, "set the speed to 12 and make it red")
    nb.wait_frame_value(1, "speed", "12")
    nb.wait_frame_value(1, "color", "red")
    wait_text(view, ".sb-msg.sb-assistant", "Set speed to 12 m/s and color to red")
    wait_for(lambda: view.locator('.sb-chip[data-status="ok"]').count() >= 1, timeout=30, what="an ok chip")
    shoot(view, server, "chat-panel.png")
    chip = view.locator(".sb-chip").first
    chip.locator("summary").click()
    assert "settings.speed" in chip.inner_text()  # arguments and result on click
    nb.run_cell(2)
    nb.expect_output(2, "12.0 red")


@LAB_ONLY  # the panel's own code, the same in Notebook 7 (typing, reload and the new cell are tested there)
def test_stop_cancels_a_slow_model(open_notebook: Any) -> None:
    slow = (
        "import asyncio\n"
        "from pydantic_ai.models.function import FunctionModel\n"
        "async def slow(messages, info):\n"
        "    await asyncio.sleep(120)\n"
        "    yield 'never'\n"
        "sim = sb.TargetWidget('bouncer', chat=True)\n"
        "sim.chat(sb.Agent(sim, FunctionModel(stream_function=slow)))\n"
        "sim"
    )
    nb, view = open_chat(open_notebook, [slow, "print(sim.transcript[-1]['text'], sim.chat_busy)"])
    panel = view.locator(".sb-panel")
    type_message(view, "take your time")
    wait_for(lambda: panel.get_attribute("data-busy") == "true", timeout=30, what="the agent to be busy")
    deadline = view.locator(".sb-deadline")  # the run's deadline, counted down while it runs
    wait_for(lambda: deadline.count() == 1, timeout=30, what="the deadline banner")
    assert "answer deadline: 4:" in deadline.inner_text() or "answer deadline: 5:00" in deadline.inner_text()
    stop = panel.get_by_role("button", name="Stop the agent")
    assert stop.is_enabled()
    stop.click()
    wait_for(lambda: panel.get_attribute("data-busy") == "false", timeout=30, what="the run to stop")
    wait_for(lambda: deadline.count() == 0, timeout=30, what="the deadline banner to go")
    wait_text(view, ".sb-msg.sb-assistant", "Cancelled.")
    nb.run_cell(2)
    nb.expect_output(2, "Cancelled. False")


@LAB_ONLY  # the panel's own code, the same in Notebook 7 (typing, reload and the new cell are tested there)
def test_the_panel_says_no_change_was_made_and_shows_a_cut_off_answer(open_notebook: Any) -> None:
    """A model that claims a change it never made, then an answer cut off at its cap: the panel says both
    beside the answer, from the result's fields, and the page keeps its speed."""
    from ..fake_providers import FakeProvider, Turn, say

    with FakeProvider("openai") as provider:
        provider.script(
            say("The speed is now set to 12 m/s."),  # the claim, and again after the nudge: no tool call
            say("The speed is now set to 12 m/s."),
            Turn(text="The ball bounces because", finish="length"),
        )
        cell = (
            "sim = sb.TargetWidget('bouncer', chat=True)\n"
            f"sim.chat(sb.Agent(sim, 'openai:gpt-test', base_url='{provider.url}/v1', api_key='test-key'))\n"
            "sim"
        )
        nb, view = open_chat(
            open_notebook, [cell, "print(sim.values['settings.speed'], sim.transcript[-1]['stopped'])"]
        )
        wait_for(lambda: nb.frame_dataset(1).get("speed") is not None, timeout=30, what="the page's speed")
        speed = nb.frame_dataset(1).get("speed")
        type_message(view, "set the speed to 12")
        note = view.locator('.sb-note[data-note="no-change"]')
        wait_for(lambda: note.count() == 1, timeout=30, what="the no-change note")
        assert note.inner_text() == "no change was made"
        assert nb.frame_dataset(1).get("speed") == speed != "12"
        type_message(view, "why does the ball bounce?")
        wait_for(
            lambda: view.locator('.sb-note[data-note="cut-off"]').count() == 1, timeout=30, what="the cut-off note"
        )
        wait_text(view, ".sb-msg.sb-assistant", "The ball bounces because [cut off")
        assert note.count() == 1  # the first answer keeps its note, the second has only its own
        nb.run_cell(2)
        nb.expect_output(2, "length")


@LAB_ONLY  # the panel's own code, the same in Notebook 7 (typing, reload and the new cell are tested there)
def test_approval_flow_both_ways(open_notebook: Any, server: Any) -> None:
    cell = "sim = sb.TargetWidget('bouncer', chat=True, approval={'speed': 'ask'})\nsim"
    nb, view = open_chat(open_notebook, [cell, "print(sim.values['settings.speed'])"])
    type_message(view, "set the speed to 12")
    prompt = view.locator(".sb-approval")
    wait_for(lambda: prompt.count() == 1, timeout=30, what="the approval prompt")
    assert "speed = 12" in prompt.inner_text()
    shoot(view, server, "chat-approval.png")
    prompt.get_by_role("button", name="Approve").click()
    nb.wait_frame_value(1, "speed", "12")
    wait_text(view, ".sb-msg.sb-assistant", "Set speed to 12 m/s")
    wait_for(lambda: prompt.count() == 0, timeout=30, what="the prompt to close")

    type_message(view, "set the speed to 20")
    wait_for(lambda: view.locator(".sb-approval").count() == 1, timeout=30, what="the second approval prompt")
    view.locator(".sb-approval").get_by_role("button", name="Deny").click()
    wait_text(view, ".sb-msg.sb-assistant", "the user denied this change")
    wait_for(lambda: view.locator('.sb-chip[data-status="error"]').count() >= 1, timeout=30, what="an error chip")
    assert nb.frame_dataset(1).get("speed") == "12"
    nb.run_cell(2)
    nb.expect_output(2, "12")


LESSON_CELL = (
    "import os, pathlib, tempfile\n"
    "lesson = pathlib.Path(tempfile.mkdtemp()) / 'lesson.toml'\n"
    "lesson.write_text('[log]\\nnotebook = true\\n\\n[targets.bouncer.parameters]\\n\"settings.speed\" = { max = 30 }\\n')\n"
    "os.environ['SPLITBRAIN_LESSON'] = str(lesson)  # this kernel only, as a JupyterHub's spawner sets it\n"
    "sim = sb.TargetWidget('bouncer', chat=True)\nsim"
)


def test_the_panel_shows_the_lesson_in_force_and_what_it_refuses(open_notebook: Any, server: Any) -> None:
    """The lesson's line and its refusal in the panel; the turn, refusal included, in the notebook's
    metadata once it is saved (the lesson says ``[log] notebook = true``: the server's pre-save hook)."""
    nb, view = open_chat(open_notebook, [LESSON_CELL])
    note = view.get_by_role("note", name="Lesson policy")
    wait_for(lambda: note.is_visible() and "settings.speed ..30" in note.inner_text(), timeout=30, what="the policy")
    assert "lesson.toml" in note.inner_text()
    speed = nb.frame_dataset(1).get("speed")
    type_message(view, "set the speed to 50")
    wait_for(lambda: view.locator('.sb-chip[data-status="error"]').count() >= 1, timeout=30, what="a refused chip")
    chip = view.locator('.sb-chip[data-status="error"]').first
    chip.locator("summary").click()
    assert "allows 'settings.speed' within ..30, not 50" in chip.inner_text()
    assert nb.frame_dataset(1).get("speed") == speed  # the page untouched

    def logged() -> list[Any]:
        nb.save()
        saved = json.loads((server.root_dir / nb.name).read_text(encoding="utf-8"))
        return list(saved["metadata"].get("splitbrain", {}).get("lesson_log", []))

    (record,) = wait_for(logged, timeout=30, what="the lesson log in the saved notebook's metadata")
    assert record["kind"] == "chat" and record["asked"] == "set the speed to 50"
    assert "allows 'settings.speed' within ..30, not 50" in record["refused"][0]


@LAB_ONLY  # the panel's own code, the same in Notebook 7 (typing, reload and the new cell are tested there)
def test_inspector_and_kernel_stay_in_sync(open_notebook: Any) -> None:
    nb, view = open_chat(
        open_notebook,
        [
            CHAT_CELL,
            "import time\nfor _ in range(200):\n    if sim.values['settings.speed'] == 21: break\n    time.sleep(0.05)\nprint(sim.values['settings.speed'])",
            "sim.set_parameter('speed', 33).ok",
        ],
    )
    number = view.locator('.sb-row[data-path="settings.speed"] input[type=number]')
    number.fill("21")
    number.press("Enter")
    nb.wait_frame_value(1, "speed", "21")
    nb.run_cell(2)
    nb.expect_output(2, "21")
    nb.run_cell(3)
    wait_for(lambda: number.input_value() == "33", timeout=30, what="the inspector to follow a Python change")
    slider = view.locator('.sb-row[data-path="settings.speed"] input[type=range]')
    assert slider.input_value() == "33"
    nb.wait_frame_value(1, "speed", "33")


def test_a_reload_keeps_the_transcript(open_notebook: Any, page: Any) -> None:
    nb, view = open_chat(open_notebook, [CHAT_CELL])
    type_message(view, "set the speed to 14")
    wait_text(view, ".sb-msg.sb-assistant", "Set speed to 14 m/s")
    nb.save()
    nb.reload()
    view = nb.wait_view(1)
    wait_text(view, ".sb-msg.sb-user", "set the speed to 14")
    wait_text(view, ".sb-msg.sb-assistant", "Set speed to 14 m/s")
    assert view.locator(".sb-chip").count() >= 1


@LAB_ONLY  # the panel's own code, the same in Notebook 7 (typing, reload and the new cell are tested there)
def test_a_goal_is_one_seek_whose_chip_follows_every_try(open_notebook: Any) -> None:
    cell = "sim = sb.TargetWidget('projectile', chat=True)\nsim"
    check = (
        "last, tried = sim.audit[-1].op, len([e for e in sim.audit if e.op == 'set_parameters'])\n"
        "r = sim.fetch_state()\nprint(abs(r.state['range'] - 50) <= 0.5, last, tried)"
    )
    nb, view = open_chat(open_notebook, [cell, check])
    # every label the chip shows, as it shows it (the tries come and go faster than a poll)
    view.evaluate(
        """el => { window.__chipLabels = [];
            new MutationObserver(() => el.querySelectorAll('.sb-chip summary').forEach(s => {
              const t = s.textContent; if (window.__chipLabels.at(-1) !== t) window.__chipLabels.push(t); }))
            .observe(el, {subtree: true, childList: true, characterData: true}); }"""
    )
    type_message(view, "make it land at 50 m")
    wait_for(lambda: view.locator('.sb-chip[data-status="ok"]').count() >= 1, timeout=60, what="the seek's ok chip")
    wait_text(view, ".sb-msg.sb-assistant", "range is now 50")
    labels = [t for t in view.evaluate("() => window.__chipLabels") if "seek" in t]
    tries = [t for t in labels if ": try " in t]
    assert len(tries) >= 2, labels  # the chip followed the tries while the seek ran
    numbers = [int(t.split(": try ")[1].split(",")[0]) for t in tries]
    assert numbers == sorted(numbers) and numbers[0] == 1, labels
    assert "range → 50" in labels[-1] and ": try " not in labels[-1]  # the finished chip: the goal
    nb.run_cell(2)
    tried = int(nb.expect_output(2, "True seek").split()[-1])
    assert numbers[-1] == tried, (labels, tried)  # the chip's last try is the last value the page got


_CELL_SOURCES = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.widgets.map((cell) => cell.model.sharedModel.getSource());
}"""


def test_what_the_chat_did_becomes_a_cell_and_the_clipboard_s_code(open_notebook: Any, server: Any) -> None:
    setup = "before = dict(sim.values)\nfresh = sb.TargetWidget('bouncer')\nsim.to_cell(var='fresh')"
    check = "print(fresh.values == before, before != sb.TargetWidget('bouncer').values)\nprint(sim.audit.to_code())"
    nb, view = open_chat(open_notebook, [CHAT_CELL, setup, check])
    type_message(view, "set the speed to 12 and make it red")
    wait_text(view, ".sb-msg.sb-assistant", "Set speed to 12 m/s and color to red")
    idle = view.locator('.sb-panel[data-busy="false"]')
    wait_for(lambda: idle.count() == 1, timeout=30, what="the agent done (a message sent while busy is not run)")
    type_message(view, "set the size to 30")
    wait_for(lambda: len(view.locator(".sb-msg.sb-assistant").all()) >= 2, timeout=30, what="the second answer")
    wait_for(lambda: idle.count() == 1, timeout=30, what="the agent done")
    nb.run_cell(2)
    sources: list[str] = []

    def inserted() -> bool:
        sources[:] = nb.page.evaluate(_CELL_SOURCES)
        return len(sources) == 5 and "fresh.set_parameters" in sources[3]

    wait_for(inserted, timeout=30, what="the cell to_cell put below", describe=lambda: repr(sources))
    code = sources[3]
    assert "# chat: set the speed to 12 and make it red" in code and "# chat: set the size to 30" in code, code
    nb.run_cell(3)  # the generated cell, on a fresh widget
    nb.run_cell(4)
    out = nb.expect_output(4, "True True")
    printed = out.split("True True", 1)[1].strip()

    nb.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    view.locator(".sb-copy").click()
    wait_text(view, ".sb-copied", "copied")
    clipboard = nb.page.evaluate("() => navigator.clipboard.readText()")
    assert clipboard.strip() == printed == code.replace("fresh.", "sim.").strip(), (clipboard, printed, code)

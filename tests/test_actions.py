"""Actions over the wire (protocol 1.5): ``sim.act(name)`` / ``await sim.aact(name)``, the ``action``
request, the audit and the code it writes, the agent's ``run_action`` tool and the offline planner.

The page is the fake view (``tests/fake_view.py``): its ``on_action`` stands where a page's
``SplitBrain.onAction`` handler stands. The same calls on a real page: ``test_actions_browser.py``
(JupyterLab) and the headless test at the end of this file.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget import protocol
from splitbrain_widget.agent import Agent
from splitbrain_widget.agent._tools import BY_NAME, Scope, system_prompt, tool_specs
from splitbrain_widget.agent.planner import PlannerContext, plan, summarise

from .browser_env import require_browser
from .fake_view import NO_ACTION_HANDLER, FakeView, wait_for

ACTION_PAGES = Path(__file__).parent / "fixtures" / "action_pages"
TARGETS = Path(__file__).parent / "fixtures" / "targets"


class Counter:
    """What the fixture page ``counter.html`` does with its actions, for the fake view."""

    def __init__(self) -> None:
        self.count = 0
        self.running = False
        self.ran: list[tuple[str, Any]] = []  # (action, the step the page had when it ran)

    def __call__(self, name: str, values: dict[str, Any]) -> dict[str, Any]:
        self.ran.append((name, values.get("settings.step")))
        if name == "run":
            self.running = True
        elif name == "add":
            self.count += int(values.get("settings.step", 1))
        elif name == "clear":
            self.count, self.running = 0, False
        elif name == "explode":
            raise RuntimeError("the counter exploded")
        return {"count": self.count, "running": self.running}


@pytest.fixture
def counter() -> Counter:
    return Counter()


@pytest.fixture
def sim(counter: Counter) -> Iterator[sb.TargetWidget]:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES, timeout=5)
    FakeView(widget, on_action=counter)
    yield widget
    widget.close()


# -- the wire ---------------------------------------------------------------------------------


def test_an_action_goes_to_the_page_as_an_action_request_with_its_name(sim: sb.TargetWidget) -> None:
    view = sim.host
    assert isinstance(view, FakeView)
    sim.act("run")
    (message,) = view.requests
    assert message == {"kind": "request", "id": message["id"], "op": "action", "payload": {"name": "run"}}
    assert protocol.parse_kernel_message(message) == message


def test_the_result_is_the_state_the_page_reports_after_the_action(sim: sb.TargetWidget, counter: Counter) -> None:
    result = sim.act("run")
    assert result.ok and result.applied and result.views_applied == 1 and not result.kept
    assert result.op == "action" and result.target == "counter" and result.message == "ran run"
    assert result.state is not None and result.state["running"] is True
    assert result.changed == {} and counter.ran == [("run", 1)]


def test_set_and_act_reach_the_page_in_the_order_they_were_made(sim: sb.TargetWidget, counter: Counter) -> None:
    sim.set_parameter("step", 5)
    sim.act("add")
    sim.set_parameter("step", 2)
    sim.act("add")
    assert counter.ran == [("add", 5), ("add", 2)]
    assert sim.fetch_state().state == {"settings.step": 2}  # the fake page's values; the count is the action's
    view = sim.host
    assert isinstance(view, FakeView)
    assert [m["op"] for m in view.requests] == ["apply", "action", "apply", "action", "state"]


def test_the_awaitable_twin_runs_the_same_operation(sim: sb.TargetWidget, counter: Counter) -> None:
    result = asyncio.run(sim.aact("add"))
    assert result.ok and result.state is not None and result.state["count"] == 1
    assert [e.op for e in sim.audit] == ["action"] and counter.ran == [("add", 1)]


def test_an_unknown_action_is_refused_naming_it_and_listing_the_actions_and_nothing_is_sent(
    sim: sb.TargetWidget,
) -> None:
    result = sim.act("ran")
    assert not result.ok and result.error is not None and result.error.code == "invalid_value"
    assert result.error.message == (
        "target 'counter' has no action 'ran'; its actions are 'run', 'add', 'clear', 'explode'"
    )
    assert result.error.hint == "did you mean 'run'?"
    view = sim.host
    assert isinstance(view, FakeView) and view.requests == []


def test_a_target_without_actions_says_it_declares_none() -> None:
    widget = sb.TargetWidget("demo", targets_dir=TARGETS)
    view = FakeView(widget)
    result = widget.act("run")
    assert result.error is not None and result.error.code == "invalid_value"
    assert "target 'demo' declares no actions" in result.error.message and "'run'" in result.error.message
    assert view.requests == []


def test_a_page_without_an_onaction_handler_answers_target_error(counter: Counter) -> None:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES)
    FakeView(widget)  # no on_action: the target API's answer
    result = widget.act("run")
    assert not result.ok and result.error is not None and result.error.code == "target_error"
    assert result.error.message == NO_ACTION_HANDLER and result.applied is False and not result.kept


def test_a_handler_that_throws_answers_target_error_with_its_text(sim: sb.TargetWidget) -> None:
    result = sim.act("explode")
    assert result.error is not None and result.error.code == "target_error"
    assert "the counter exploded" in result.error.message


def test_a_page_that_does_not_answer_times_out_and_nothing_is_kept() -> None:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES)
    FakeView(widget, behaviour="silent")
    started = time.monotonic()
    result = widget.act("run", timeout=0.3)
    assert time.monotonic() - started < 3
    assert result.error is not None and result.error.code == "timeout"
    assert result.applied is False and result.kept is False
    assert "the page may still run it late" in result.error.message


def test_without_a_view_an_action_answers_no_view_and_is_not_kept() -> None:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES, attach_timeout=0.1)
    result = widget.act("run", timeout=0.2)
    assert result.error is not None and result.error.code == "no_view"
    assert result.applied is False and result.kept is False and "not kept" in result.error.message


# -- the audit and the code -------------------------------------------------------------------


def test_the_audit_records_the_action_with_its_name(sim: sb.TargetWidget) -> None:
    sim.act("run")
    sim.act("nope")
    ran, refused = sim.audit
    assert (ran.op, ran.arguments, ran.ok, ran.changed) == ("action", {"name": "run"}, True, {})
    assert (refused.op, refused.ok, refused.code) == ("action", False, "invalid_value")


def test_to_code_writes_the_actions_where_they_ran_between_the_sets(sim: sb.TargetWidget) -> None:
    sim.set_parameter("step", 5)
    sim.act("add")
    sim.set_parameter("step", 2)
    sim.set_parameter("step", 3)  # merged with the one before: no action between them
    sim.act("add")
    sim.act("nope")  # refused: leaves nothing
    assert sim.audit.to_code() == (
        "# python\n"
        'sim.set_parameters({"settings.step": 5})\n'
        "sim.act('add')\n"
        'sim.set_parameters({"settings.step": 3})\n'
        "sim.act('add')\n"
    )


def test_a_reset_after_an_action_is_kept_in_the_code(sim: sb.TargetWidget) -> None:
    sim.act("run")
    sim.reset()
    assert sim.audit.to_code() == "# python\nsim.act('run')\nsim.reset()\n"


def test_a_failed_action_is_not_in_the_code() -> None:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES)
    FakeView(widget)  # no handler: target_error
    widget.act("run")
    assert widget.audit.to_code() == "# nothing to reproduce: no call changed the values\n"


def test_the_code_runs_the_same_actions_on_a_fresh_widget(sim: sb.TargetWidget, counter: Counter) -> None:
    sim.set_parameter("step", 4)
    sim.act("add")
    sim.act("run")
    code = sim.audit.to_code(var="again")
    replay = Counter()
    again = sb.TargetWidget("counter", targets_dir=ACTION_PAGES)
    FakeView(again, on_action=replay)
    exec(code, {"again": again})
    assert replay.ran == counter.ran == [("add", 4), ("run", 4)]
    assert again.values == sim.values


def test_to_cell_puts_the_action_in_the_new_cell(sim: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    class Shell:
        def set_next_input(self, text: str, replace: bool = False) -> None:
            asked.append(text)

    fake = types.ModuleType("IPython")
    fake.get_ipython = Shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    sim.act("run")
    sim.to_cell()
    assert asked == ["# python\nsim.act('run')\n"]


# -- the agent's tool -------------------------------------------------------------------------


def test_run_action_is_offered_with_an_enum_of_the_actions_and_their_descriptions(sim: sb.TargetWidget) -> None:
    (spec,) = [s for s in tool_specs(Scope(sim.schema, [])) if s.name == "run_action"]
    assert spec.schema == {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "enum": ["run", "add", "clear", "explode"],
                "description": "the action to run: run (Run) — Start the counter.; add (Add the step) — Add the step "
                "to the count once.; clear (Reset the count) — Set the count back to 0 and stop.; explode (Explode) — "
                "An action the page throws on.",
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    assert "clear (Reset the count) — Set the count back to 0 and stop." in spec.description
    assert not spec.read_only and BY_NAME["run_action"].needs_approval


def test_run_action_is_not_offered_to_a_target_without_actions() -> None:
    manifest = sb.load_target("demo", TARGETS).manifest
    assert "run_action" not in [s.name for s in tool_specs(Scope(manifest, []))]
    assert "Actions" not in system_prompt(Scope(manifest, []), manifest.defaults())


def test_the_system_prompt_lists_the_actions(sim: sb.TargetWidget) -> None:
    prompt = system_prompt(Scope(sim.schema, []), dict(sim.values))
    assert "Actions (run one with run_action):\n- run (Run) — Start the counter." in prompt


def test_the_tool_runs_the_action_through_the_widget(sim: sb.TargetWidget, counter: Counter) -> None:
    from splitbrain_widget.agent._tools import ToolContext, execute

    result = asyncio.run(execute(ToolContext(sim, {}), "run_action", {"name": "add"}))
    assert isinstance(result, protocol.ToolResult) and result.ok and counter.ran == [("add", 1)]
    refused = asyncio.run(execute(ToolContext(sim, {}), "run_action", {}))
    assert isinstance(refused, protocol.ToolResult) and refused.error is not None
    assert refused.error.code == "invalid_value" and refused.error.hint == "run, add, clear, explode"


def test_the_chip_label_is_the_actions_name() -> None:
    from splitbrain_widget.agent._tools import call_label

    assert call_label("run_action", {"name": "run"}) == "run"


def test_the_approval_policy_of_run_action_applies(sim: sb.TargetWidget, counter: Counter) -> None:
    sim.approval = {"run_action": "deny"}
    result = Agent(sim).ask("press run")
    (call,) = result.tool_calls
    assert counter.ran == [] and call.name == "run_action" and call.result["error"]["code"] == "denied"


# -- the offline planner ----------------------------------------------------------------------


def planner_context(target: str = "counter") -> PlannerContext:
    folder = ACTION_PAGES if target == "counter" else TARGETS
    manifest = sb.load_target(target, folder).manifest
    return PlannerContext(manifest, manifest.defaults(), [("counter", "Action counter"), ("demo", "Test demo")])


@pytest.mark.parametrize(
    ("request_text", "action"),
    [
        ("press run", "run"),
        ("Press Run!", "run"),
        ("click run", "run"),
        ("please press the run button", "run"),
        ("run the run action", "run"),
        ("click reset the count", "clear"),
        ("run the Reset the count action", "clear"),
        ("press clear", "clear"),
        ("click add the step", "add"),
        ("run the add the step action", "add"),
        ("trigger explode", "explode"),
        ("add the step", "add"),
        ("run the counter", "run"),
        ("start the counter", "run"),
        ("Set the count back to 0 and stop.", "clear"),
    ],
)
def test_the_planner_runs_an_action_named_by_its_name_or_label(request_text: str, action: str) -> None:
    planned = plan(request_text, planner_context())
    assert planned.refusal is None, planned.refusal
    assert [(c.tool, c.args) for c in planned.calls] == [("run_action", {"name": action})]


def test_the_planner_runs_reset_the_simulation_when_an_action_is_named_so() -> None:
    ctx = planner_context()
    manifest = ctx.manifest.model_copy(
        update={
            "actions": {
                **ctx.manifest.actions,
                "reset": ctx.manifest.actions["clear"].model_copy(
                    update={"name": "reset", "label": "Reset", "description": "Reset the simulation."}
                ),
            }
        }
    )
    planned = plan("click reset the simulation", PlannerContext(manifest, ctx.values, ctx.targets))
    assert [(c.tool, c.args) for c in planned.calls] == [("run_action", {"name": "reset"})]
    # "reset" alone is still the parameters' reset
    assert [c.tool for c in plan("reset", PlannerContext(manifest, ctx.values, ctx.targets)).calls] == ["reset"]


def test_pressing_a_button_that_is_no_action_is_refused_listing_the_actions() -> None:
    planned = plan("press launch", planner_context())
    assert planned.calls == [] and planned.refusal is not None
    assert '"launch" is not one of the actions (run, add, clear, explode)' in planned.refusal


def test_press_reset_is_the_parameters_reset_when_no_action_is_called_reset() -> None:
    for request in ("press reset", "click the reset button", "please hit reset"):
        planned = plan(request, planner_context())
        assert [c.tool for c in planned.calls] == ["reset"], (request, planned)


def test_a_panel_button_runs_the_action_as_the_inspectors_call_and_a_failure_comes_back_as_a_control_error(
    counter: Counter,
) -> None:
    widget = sb.TargetWidget("counter", targets_dir=ACTION_PAGES, timeout=5)
    sent: list[dict[str, Any]] = []
    widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    FakeView(widget, on_action=counter)
    try:
        widget.receive_view_message({"kind": "act", "name": "add"})
        actions = lambda: [e for e in widget.audit.entries() if e.op == "action"]  # noqa: E731
        wait_for(lambda: len(actions()) == 1, "the panel's action to run")
        assert actions()[0].source == "inspector" and widget.state["count"] == 1
        widget.receive_view_message({"kind": "act", "name": "explode"})
        errors = lambda: [  # noqa: E731
            m["event"] for m in sent if m.get("kind") == "chat_event" and m["event"]["kind"] == "control_error"
        ]
        wait_for(lambda: bool(errors()), "the failed action's control_error")
        assert "explode" in errors()[0]["text"] and "target_error" in errors()[0]["text"], errors()
    finally:
        widget.close()


def test_an_action_name_longer_than_a_request_can_carry_is_refused_by_the_manifest() -> None:
    raw = {"id": "t", "data": {"g": {"x": {"type": "number", "value": 1}}}, "actions": {"a" * 201: {}}}
    with pytest.raises(sb.ManifestError, match="at most 200 characters"):
        sb.Manifest.from_dict(raw)
    sb.Manifest.from_dict({**raw, "actions": {"a" * 200: {}}})


def test_a_target_without_actions_plans_no_action() -> None:
    planned = plan("press run", planner_context("demo"))
    assert all(c.tool != "run_action" for c in planned.calls)


def test_other_requests_still_plan_as_before() -> None:
    ctx = planner_context()
    assert [(c.tool, c.args) for c in plan("set the step to 3", ctx).calls] == [
        ("set_parameters", {"values": {"settings.step": 3}})
    ]
    assert [c.tool for c in plan("run faster", ctx).calls] != ["run_action"]
    assert "run an action" in (plan("fly to the moon", ctx).refusal or "")


def test_the_summary_says_which_action_ran() -> None:
    ctx = planner_context()
    planned = plan("press run", ctx)
    assert summarise(planned, [{"ok": True, "applied": True}], ctx) == "Offline planner: Ran Run."
    failed = summarise(planned, [{"ok": False, "error": {"code": "target_error", "message": "boom"}}], ctx)
    assert failed == "Offline planner: Could not run action: boom."


def test_the_offline_agent_presses_run_on_the_page(sim: sb.TargetWidget, counter: Counter) -> None:
    result = Agent(sim).ask("press run")
    assert counter.ran == [("run", 1)] and result.text == "Offline planner: Ran Run."
    (entry,) = sim.audit
    assert entry.op == "action" and entry.source == "agent: press run"
    assert sim.audit.to_code() == "# agent: press run\nsim.act('run')\n"


# -- a headless page --------------------------------------------------------------------------


@pytest.mark.browser
def test_on_a_headless_page_the_pages_own_onaction_handler_runs() -> None:
    require_browser()
    with sb.HeadlessTarget("counter", targets_dir=ACTION_PAGES) as page:
        assert page.set_parameter("step", 3).ok
        added = page.act("add")
        assert added.ok and added.state is not None and added.state["count"] == 3
        assert added.state["last_action"] == "add@3"
        assert page.act("run").state == {"settings.step": 3, "count": 3, "running": True, "last_action": "run@3"}
        thrown = page.act("explode")
        assert thrown.error is not None and thrown.error.code == "target_error"
        assert "the counter exploded" in thrown.error.message
        assert page.act("nope").error is not None
        page.advance(1.0)
        assert page.fetch_state().state == {"settings.step": 3, "count": 3, "running": True, "last_action": "explode@3"}
        assert page.audit.to_code(var="page") == (
            "# python\npage.set_parameters({\"settings.step\": 3})\npage.act('add')\npage.act('run')\n"
        )


@pytest.mark.browser
def test_on_a_headless_page_without_onaction_the_target_api_answers_target_error() -> None:
    require_browser()
    with sb.HeadlessTarget("silent", targets_dir=ACTION_PAGES) as page:
        result = page.act("run")
        assert result.error is not None and result.error.code == "target_error"
        assert result.error.message == NO_ACTION_HANDLER

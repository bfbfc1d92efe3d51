"""Actions as code (issue #17): every audit entry knows what it changed and who asked, and the audit
turns into a Python cell that makes the same changes again (``sim.audit.to_code()``)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import splitbrain_widget as sb
from splitbrain_widget.agent import Agent
from splitbrain_widget.core._audit import AUDIT_SIZE, AuditEntry, AuditLog, call_source
from splitbrain_widget.core._to_code import literal, to_code
from splitbrain_widget.manifest import Parameter
from splitbrain_widget.protocol import parse_kernel_message

from .fake_view import FakeView
from .test_seek import textbook

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
TARGETS = [*sb.list_targets().ids(), "demo"]  # the built-in manifests, and one with an array parameter


def entry(
    op: str = "set_parameters",
    changed: dict[str, Any] | None = None,
    *,
    source: str | None = None,
    code: str | None = None,
    target: str = "bouncer",
    arguments: dict[str, Any] | None = None,
    agent_id: str | None = None,
) -> AuditEntry:
    """An audit entry as Operations.record writes one."""
    return AuditEntry(
        time=time.time(),
        op=op,
        arguments=arguments or {},
        ok=code is None,
        code=code,
        message="",
        duration_ms=1.0,
        view_id=None,
        views_applied=0,
        changed=changed or {},
        target=target,
        source=source,
        agent_id=agent_id,
    )


def widget(
    target: str = "bouncer", *, view: bool = True, **view_options: Any
) -> tuple[sb.TargetWidget, FakeView | None]:
    sim = sb.TargetWidget(target, targets_dir=FIXTURES, headless=False)
    return sim, FakeView(sim, **view_options) if view else None


def exact(values: dict[str, Any]) -> str:
    """Values as text that tells 3 from 3.0 (``==`` does not)."""
    return json.dumps(values, sort_keys=True)


def replay(code: str, target: str = "bouncer") -> sb.TargetWidget:
    """Run ``code`` on a fresh widget of ``target`` (with its own fake view)."""
    fresh, view = widget(target)
    exec(compile(code, "<to_code>", "exec"), {"sim": fresh})
    assert view is not None
    view.detach()
    return fresh


@pytest.fixture
def sim() -> Iterator[sb.TargetWidget]:
    widget_, view = widget()
    yield widget_
    if view is not None:
        view.detach()


# -- the merging rules ------------------------------------------------------------------------------


def test_consecutive_changes_make_one_call_and_the_later_value_wins() -> None:
    code = to_code(
        [
            entry(changed={"settings.speed": 3}),
            entry("get_parameters"),
            entry(changed={"display.color": "red", "settings.speed": 4.5}),
        ]
    )
    assert code == '# python\nsim.set_parameters({"settings.speed": 4.5, "display.color": "red"})\n'


def test_each_source_gets_its_own_commented_call_and_what_a_later_call_sets_again_leaves_the_earlier() -> None:
    code = to_code(
        [
            entry(changed={"settings.speed": 3}, source="chat: make it fast"),
            entry(changed={"display.color": "red"}, source="inspector"),
            entry(changed={"settings.speed": 5, "display.size": 20}, source="chat: make it fast"),
            entry(changed={"display.color": "gold"}),
        ]
    )
    assert code == (
        "# chat: make it fast\n"
        'sim.set_parameters({"settings.speed": 5, "display.size": 20})\n'
        "# python\n"
        'sim.set_parameters({"display.color": "gold"})\n'
    )


def test_a_call_left_empty_disappears_and_its_neighbours_of_one_source_merge() -> None:
    code = to_code(
        [
            entry(changed={"settings.speed": 3}, source="agent: go"),
            entry(changed={"display.color": "red"}, source="inspector"),
            entry(changed={"display.size": 4}, source="agent: go"),
            entry(changed={"display.color": "gold"}, source="agent: go"),
        ]
    )
    assert (
        code == '# agent: go\nsim.set_parameters({"settings.speed": 3, "display.size": 4, "display.color": "gold"})\n'
    )


def test_a_reset_drops_what_came_before_and_is_kept_only_where_it_matters() -> None:
    defaults = {"settings.speed": 8.0, "display.color": "steelblue"}
    all_set_again = [
        entry(changed={"settings.speed": 3}),
        entry("reset", defaults, source="chat: start over"),
        entry(changed={"settings.speed": 5}, source="chat: start over"),
    ]
    assert to_code(all_set_again) == '# chat: start over\nsim.set_parameters({"settings.speed": 5})\n'
    left_changed = [
        entry(changed={"display.color": "red", "settings.speed": 3}),
        entry("reset", defaults, source="chat: start over"),
        entry(changed={"settings.speed": 5}, source="chat: start over"),
    ]
    assert to_code(left_changed) == (
        '# chat: start over\nsim.reset()\nsim.set_parameters({"settings.speed": 5})\n'
    )  # the color was red before the reset and nothing sets it after: the reset undoes that
    set_to_defaults = [entry(changed={"display.color": "steelblue", "settings.speed": 8.0})]
    assert "reset" not in to_code([*set_to_defaults, entry("reset", defaults)])  # nothing moved off its default
    assert to_code([entry("reset", defaults)]) == "# nothing to reproduce: no call changed the values\n"
    twice = [entry(changed={"display.color": "red"}), entry("reset", defaults), entry("reset", defaults)]
    assert to_code(twice) == "# python\nsim.reset()\n"  # one reset: the red is undone


def test_select_target_is_kept_and_everything_before_it_dropped() -> None:
    code = to_code(
        [
            entry(changed={"settings.speed": 3}),
            entry("reset", {"settings.speed": 8.0}),
            entry("select_target", {"launch.speed": 20}, arguments={"target": "projectile"}, target="projectile"),
            entry(changed={"launch.speed": 30}, target="projectile", source="inspector"),
            entry("select_target", arguments={"target": "nope"}, code="unknown_target", target="projectile"),
        ]
    )
    assert code == '# python\nsim.select_target("projectile")\n# inspector\nsim.set_parameters({"launch.speed": 30})\n'


def test_select_target_is_kept_when_the_page_did_not_answer_or_it_was_cancelled() -> None:
    no_view = entry("select_target", {"a.b": 1}, arguments={"target": "pendulum"}, code="no_view", target="pendulum")
    assert to_code([no_view]).endswith('sim.select_target("pendulum")\n')
    # a cancelled select_target had switched (it loads before its first wait): the audit holds the defaults
    cancelled = entry(
        "select_target", {"a.b": 1}, arguments={"target": "pendulum"}, code="cancelled", target="pendulum"
    )
    assert "select_target" in to_code([cancelled]) and "select_target" in to_code([entry(target="bouncer"), cancelled])
    refused = entry("select_target", arguments={"target": "nope"}, code="unknown_target", target="bouncer")
    assert "select_target" not in to_code([entry(target="bouncer"), refused])


def test_reads_and_refused_calls_make_nothing(sim: sb.TargetWidget) -> None:
    sim.get_parameters()
    sim.fetch_state()
    sim.list_targets()
    assert not sim.set_parameter("speed", "fast").ok  # invalid: refused before anything is sent
    assert not sim.set_parameter("no_such_thing", 1).ok
    assert not sim.select_target("no-such-target").ok
    assert all(e.changed == {} for e in sim.audit)
    assert sim.audit.to_code() == "# nothing to reproduce: no call changed the values\n"


def test_a_change_the_page_refused_changed_nothing(sim: sb.TargetWidget) -> None:
    sim.set_parameter("speed", 3)
    view = FakeView(sim, view_id="thrower", behaviour="throw")
    refused = sim.set_parameters({"speed": 4, "color": "red"})
    assert refused.error is not None and refused.error.code == "target_error"
    assert sim.audit[-1].changed == {} and sim.values["settings.speed"] == 3
    view.detach()
    assert sim.audit.to_code() == '# python\nsim.set_parameters({"settings.speed": 3})\n'


def test_a_kept_change_did_change_the_values() -> None:
    sim, _ = widget(view=False)
    result = sim.set_parameter("speed", 3)
    assert not result.ok and result.kept and result.error is not None and result.error.code == "no_view"
    assert sim.audit[-1].changed == {"settings.speed": 3} and sim.values["settings.speed"] == 3
    sim.reset()
    assert sim.audit[-1].changed == sim.schema.defaults()
    assert exact(replay(sim.audit.to_code()).values) == exact(sim.values)


def test_each_entry_knows_what_it_changed_and_the_target_after_it(sim: sb.TargetWidget) -> None:
    sim.set_parameters({"speed": 12, "color": "red"})
    assert sim.audit[-1].changed == {"settings.speed": 12, "display.color": "red"}
    assert sim.audit[-1].target == "bouncer"
    sim.reset()
    assert sim.audit[-1].changed == sim.schema.defaults()
    sim.select_target("pendulum")
    assert sim.audit[-1].target == "pendulum" and sim.audit[-1].changed == sim.schema.defaults()
    sim.get_parameters()
    assert sim.audit[-1].changed == {} and sim.audit[-1].target == "pendulum"


def test_values_are_exact_python_literals() -> None:
    for value in [0.1 + 0.2, 1e-300, 3, 12.0, True, None, [0, 1.5, -2], 'say "hi"\nand\tbye', "é😀", "\ud800"]:
        assert eval(literal(value)) == value and type(eval(literal(value))) is type(value)
    assert math.copysign(1, eval(literal(-0.0))) == -1
    assert literal(12.0) == "12.0" and literal(3) == "3" and literal("red") == '"red"'
    assert eval(literal(float("nan"))) != eval(literal(float("nan")))  # nan, whatever it compares to
    assert eval(literal(-math.inf)) == -math.inf
    assert eval(literal([1, 2])) == [1, 2] and literal((1, 2)) == "[1, 2]"  # arrays as lists
    with pytest.raises(TypeError):
        literal(object())


def test_a_long_call_goes_one_path_a_line_and_still_runs() -> None:
    values = {f"group.parameter_{i}": i * 0.5 for i in range(6)}
    code = to_code([entry(changed=values)])
    assert code.count("\n") == 9  # the comment, the opening line, six paths, the closing line
    namespace: dict[str, Any] = {}

    class Recorder:
        def set_parameters(self, given: dict[str, Any]) -> None:
            namespace["given"] = given

    exec(code, {"sim": Recorder()})
    assert namespace["given"] == values


def test_a_comment_is_one_line_whatever_was_typed() -> None:
    code = to_code([entry(changed={"a.b": 1}, source="chat: make it red\nimport os\x00" + "x" * 500)])
    comment, call = code.splitlines()
    assert comment.startswith("# chat: make it red import os ") and len(comment) <= 202
    assert call == 'sim.set_parameters({"a.b": 1})'
    compile(code, "<to_code>", "exec")


def test_var_names_the_widget_and_must_be_a_name() -> None:
    assert to_code([entry(changed={"a.b": 1})], var="w").endswith('w.set_parameters({"a.b": 1})\n')
    for bad in ["", "sim.x", "1sim", "class"]:
        with pytest.raises(ValueError, match="var must be a Python name"):
            to_code([], var=bad)


def test_a_log_that_dropped_its_first_calls_says_the_code_is_incomplete() -> None:
    log = AuditLog(size=3)
    for i in range(5):
        log.record(entry(changed={f"p.x{i}": i}))
    assert log.dropped == 2 and len(log) == 3
    code = log.to_code()
    assert (
        code.splitlines()[0]
        == "# incomplete: the audit log no longer holds its first 2 calls, so their changes are missing"
    )
    assert 'sim.set_parameters({"p.x2": 2, "p.x3": 3, "p.x4": 4})' in code
    log.record(entry("reset", {"p.x0": 0}))  # a kept reset: right from there on, for that target
    assert log.to_code().splitlines()[:3] == [
        "# the audit log no longer holds its first 3 calls: this code starts at a reset, so it holds for a widget "
        "showing target 'bouncer'",
        "# python",
        "sim.reset()",
    ]
    log.record(entry("select_target", {"q.y": 1}, arguments={"target": "pendulum"}, target="pendulum"))
    assert log.to_code() == '# python\nsim.select_target("pendulum")\n'  # starts afresh: complete
    log.clear()
    assert log.dropped == 7 and log.to_code().startswith(
        "# incomplete: the audit log no longer holds its first 7 calls"
    )


def test_the_ring_drops_the_oldest_entries_and_counts_them(sim: sb.TargetWidget) -> None:
    for i in range(AUDIT_SIZE + 2):
        sim.audit.record(entry(changed={"settings.speed": i}))
    assert len(sim.audit) == AUDIT_SIZE and sim.audit.dropped == 2
    assert sim.audit.to_code().startswith("# incomplete:")


# -- who asked --------------------------------------------------------------------------------------


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_plain_python_call_has_no_source(sim: sb.TargetWidget) -> None:
    sim.set_parameter("speed", 3)
    assert sim.audit[-1].source is None and sim.audit[-1].agent_id is None
    with call_source("my script"):
        sim.set_parameter("speed", 4)
    assert sim.audit[-1].source == "my script"
    sim.set_parameter("speed", 5)
    assert sim.audit[-1].source is None  # the context ended with the block


def test_the_inspector_tags_its_changes(sim: sb.TargetWidget) -> None:
    sim.receive_view_message({"kind": "set", "values": {"settings.speed": 21}})  # a control moved
    wait_for(lambda: len(sim.audit) == 1)
    assert sim.audit[-1].source == "inspector" and sim.audit[-1].changed == {"settings.speed": 21}
    assert sim.audit.to_code() == '# inspector\nsim.set_parameters({"settings.speed": 21})\n'


def test_agent_ask_tags_its_calls_with_the_request_and_the_agent(sim: sb.TargetWidget) -> None:
    agent = Agent(sim, "offline")
    agent.ask("set the speed to 12 and make it red")
    (made,) = sim.audit.entries()
    assert made.source == "agent: set the speed to 12 and make it red" and made.agent_id == agent.id
    assert sim.audit.to_code() == (
        "# agent: set the speed to 12 and make it red\n"
        'sim.set_parameters({"settings.speed": 12.0, "display.color": "red"})\n'
    )


def test_a_chat_message_tags_the_calls_of_its_answer(sim: sb.TargetWidget) -> None:
    sim.chat(Agent(sim, "offline"))
    sim.receive_view_message({"kind": "chat", "text": "make it red"})
    wait_for(lambda: sim.agent is not None and not sim._controller().busy() and len(sim.audit) > 0)
    assert sim._controller().wait_idle()
    assert [(e.op, e.source, e.agent_id) for e in sim.audit] == [("set_parameters", "chat: make it red", sim.agent.id)]
    assert sim.audit.to_code() == '# chat: make it red\nsim.set_parameters({"display.color": "red"})\n'


def test_a_seek_tags_its_tries_on_the_worker_thread_too() -> None:
    projectile, view = widget("projectile", state_of=textbook)
    agent = Agent(projectile)
    agent.ask("make it land at 50 m")  # the offline planner's one seek: aseek runs its tries on a thread
    ops = [e.op for e in projectile.audit]
    assert ops[-1] == "seek" and ops.count("set_parameters") >= 2
    assert {(e.source, e.agent_id) for e in projectile.audit} == {("agent: make it land at 50 m", agent.id)}
    code = projectile.audit.to_code()
    assert code.count("set_parameters") == 1
    assert exact(replay(code, "projectile").values) == exact(projectile.values)
    assert view is not None
    view.detach()


def test_a_blocking_seek_in_a_tagged_context_tags_every_try() -> None:
    projectile, _ = widget("projectile", state_of=textbook)
    with call_source("my notebook"):
        assert projectile.seek("range", 50).ok
    assert {e.source for e in projectile.audit} == {"my notebook"}


def test_agent_to_code_holds_only_this_agents_changes(sim: sb.TargetWidget) -> None:
    first, second = Agent(sim, "offline"), Agent(sim, "offline")
    assert first.to_code() == "# nothing to reproduce: this agent changed no value\n"
    first.ask("set the speed to 12")
    sim.set_parameter("size", 30)
    second.ask("make it red")
    sim.receive_view_message({"kind": "set", "values": {"settings.speed": 2}})
    wait_for(lambda: sim.audit[-1].source == "inspector")
    assert first.to_code() == '# agent: set the speed to 12\nsim.set_parameters({"settings.speed": 12.0})\n'
    assert second.to_code(var="w") == '# agent: make it red\nw.set_parameters({"display.color": "red"})\n'
    assert first.id != second.id


# -- the whole log as a table -----------------------------------------------------------------------


def test_to_dataframe_has_one_row_per_call_indexed_by_time(sim: sb.TargetWidget) -> None:
    import pandas

    assert len(sim.audit.to_dataframe()) == 0
    sim.set_parameter("speed", 3)
    sim.get_parameters()
    with call_source("inspector"):
        sim.reset()
    frame = sim.audit.to_dataframe()
    assert isinstance(frame.index, pandas.DatetimeIndex) and frame.index.name == "time"
    assert list(frame.columns)[:6] == ["op", "ok", "code", "duration_ms", "source", "changed"]
    assert list(frame["op"]) == ["set_parameters", "get_parameters", "reset"]
    assert list(frame["source"]) == [None, None, "inspector"]
    assert frame["changed"].iloc[0] == {"settings.speed": 3} and frame.index.is_monotonic_increasing
    assert abs(frame.index[-1].timestamp() - sim.audit[-1].time) < 1e-3


def test_importing_the_package_loads_no_pandas() -> None:
    probe = "import sys, splitbrain_widget as sb; sb.TargetWidget; import splitbrain_widget.core._to_code; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


# -- into a cell, and to the panel ------------------------------------------------------------------


def test_to_cell_outside_ipython_says_what_to_do_instead(sim: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    with pytest.raises(RuntimeError, match=r"print\(sim\.audit\.to_code\(\)\)"):
        sim.to_cell()


def test_to_cell_asks_ipython_for_a_new_cell_below(sim: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, bool]] = []

    class Shell:
        def set_next_input(self, text: str, replace: bool = False) -> None:
            asked.append((text, replace))

    fake = types.ModuleType("IPython")
    fake.get_ipython = Shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    sim.set_parameter("speed", 3)
    sim.to_cell(var="w")
    assert asked == [('# python\nw.set_parameters({"settings.speed": 3})\n', False)]
    fake.get_ipython = lambda: None  # type: ignore[attr-defined]  # IPython imported, but no shell running
    with pytest.raises(RuntimeError):
        sim.to_cell()


def test_copy_as_code_round_trip(sim: sb.TargetWidget, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, Any]] = []
    got = threading.Event()

    def send(content: dict[str, Any], buffers: Any = None) -> None:
        sent.append(content)
        got.set()

    monkeypatch.setattr(sim, "send", send)
    with call_source("chat: make it red"):
        sim.set_parameter("color", "red")
    sim.receive_view_message({"kind": "copy_code"})  # the panel's button
    assert got.wait(10)
    (reply,) = sent
    assert parse_kernel_message(reply) == {"kind": "code", "text": sim.audit.to_code()}
    assert reply["text"] == '# chat: make it red\nsim.set_parameters({"display.color": "red"})\n'


# -- the property: the code makes the same values -------------------------------------------------


def valid_value(param: Parameter) -> st.SearchStrategy[Any]:
    """Any value the manifest accepts for ``param``."""
    if param.enum is not None:
        return st.sampled_from(param.enum)
    if param.type == "array":
        item = scalar(param.item_type or "number", param.min, param.max)
        size = st.just(param.length) if param.length else st.integers(0, 4)
        return size.flatmap(lambda n: st.lists(item, min_size=n, max_size=n))
    return scalar(param.type, param.min, param.max)


def scalar(kind: str, low: float | None, high: float | None) -> st.SearchStrategy[Any]:
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return st.text(max_size=12)
    lo, hi = -1e6 if low is None else low, 1e6 if high is None else high
    ints = st.integers(math.ceil(lo), math.floor(hi)) if math.ceil(lo) <= math.floor(hi) else st.nothing()
    if kind == "integer":
        return ints
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False) | ints  # 3 stays 3, 3.0 stays 3.0


def refused_value(param: Parameter) -> Any:
    return {"boolean": "maybe", "string": 12}.get(param.type, "not a number" if param.type != "array" else "x")


@st.composite
def histories(draw: st.DrawFn) -> tuple[str, bool, list[tuple[str, Any]]]:
    """A target, whether a view answers, and a sequence of calls on it."""
    start = draw(st.sampled_from(TARGETS))
    manifest = sb.load_target(start, FIXTURES).manifest
    calls: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["set", "set", "set", "set", "reset", "refused", "throw", "select", "read"]))
        params = [p for p in manifest.parameters.values() if not p.readonly]
        if kind in ("set", "throw") and params:
            chosen = draw(st.lists(st.sampled_from(params), min_size=1, max_size=3, unique_by=lambda p: p.path))
            calls.append((kind, {p.path: draw(valid_value(p)) for p in chosen}))
        elif kind == "refused" and params:
            bad = draw(st.sampled_from(params))
            calls.append(("set", {bad.path: refused_value(bad)}))
        elif kind == "select":
            target = draw(st.sampled_from(TARGETS))
            manifest = sb.load_target(target, FIXTURES).manifest
            calls.append(("select", target))
        elif kind in ("reset", "read"):
            calls.append((kind, None))
    return start, draw(st.booleans()), calls


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_the_code_makes_the_same_values_on_a_fresh_widget(history: tuple[str, bool, list[tuple[str, Any]]]) -> None:
    start, with_view, calls = history
    sim, view = widget(start, view=with_view)
    sources = [None, "inspector", "chat: make it so", "agent: try this"]
    for i, (kind, argument) in enumerate(calls):
        with call_source(sources[i % len(sources)]):
            if kind == "set":
                sim.set_parameters(argument, timeout=5)
            elif kind == "throw" and view is not None:
                view.behaviour = "throw"  # the page refuses this one: nothing changes
                sim.set_parameters(argument, timeout=5)
                view.behaviour = "ok"
            elif kind == "throw":
                sim.set_parameters(argument, timeout=5)
            elif kind == "reset":
                sim.reset(timeout=5)
            elif kind == "select":
                sim.select_target(argument, timeout=5)
            else:
                sim.get_parameters()
    code = sim.audit.to_code()
    fresh = replay(code, start)
    assert fresh.target_id == sim.target_id, code
    assert exact(fresh.values) == exact(sim.values), code
    if view is not None:
        view.detach()


# -- in a real kernel -------------------------------------------------------------------------------


@pytest.mark.kernel
def test_the_code_runs_in_a_fresh_kernel_and_to_cell_fills_the_next_cell() -> None:
    from .kernel_python import start_frontend

    sim, view = widget()
    sim.set_parameters({"speed": 0.1 + 0.2, "color": "red"})
    with call_source("chat: bigger\nplease"):
        sim.set_parameter("size", 30)
    sim._controller()._control("set", {"display.show_trail": True})
    code = sim.audit.to_code()
    assert view is not None
    view.detach()

    fe = start_frontend()
    try:
        fe.check("import json, splitbrain_widget as sb\nsim = sb.TargetWidget('bouncer', headless=False)\n")
        fe.check(code)  # on a widget no view shows: every change is kept
        out = fe.check("print(json.dumps(sim.values, sort_keys=True))")
        assert out.strip() == exact(sim.values)
        msg_id = fe.kc.execute("sim.to_cell()", store_history=False)
        deadline = time.monotonic() + 60
        while True:
            reply = fe.kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        content = reply["content"]
        assert content["status"] == "ok", content
        (payload,) = [p for p in content["payload"] if p["source"] == "set_next_input"]
        assert payload["replace"] is False and payload["text"].startswith("# python\nsim.set_parameters(")
    finally:
        fe.close()


def test_a_set_or_reset_interrupted_after_it_committed_is_in_the_code() -> None:
    import asyncio

    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(sim, behaviour="silent")  # the page never answers: the call is cancelled while it waits

    async def interrupted(coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        await asyncio.sleep(0)  # the call runs up to its wait for the page's answer
        while not sim.bridge.pending:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted(sim.aset_parameters({"settings.speed": 3.0})))
    assert sim.values["settings.speed"] == 3.0 and sim.audit[-1].code == "cancelled"
    assert 'sim.set_parameters({"settings.speed": 3.0})' in sim.audit.to_code()
    sim.close()


def test_replay_steps_are_the_defaults_then_each_change_with_its_cause() -> None:
    from splitbrain_widget.core._audit import call_source
    from splitbrain_widget.core._to_code import replay_steps

    sim = sb.TargetWidget("projectile")
    sim.set_parameters({"launch.angle": 30})
    with call_source("chat: make it steeper"):
        sim.set_parameters({"launch.angle": 60})
        sim.set_parameters({"launch.speed": 25})
    sim.fetch_state()  # a read leaves no step
    sim.reset()
    sim.set_parameters({"launch.height": 5})
    steps = replay_steps(sim.audit.entries(), sim.schema.defaults(), "projectile")
    assert [s["label"] for s in steps] == [
        "start: the manifest's defaults",
        "python → angle = 30",
        "chat: make it steeper → angle = 60, speed = 25",
        "python → reset",
        "python → height = 5",
    ]
    assert steps[2]["values"]["launch.angle"] == 60 and steps[2]["values"]["launch.speed"] == 25
    assert steps[3]["values"] == sim.schema.defaults()
    assert steps[-1]["values"] == sim.values

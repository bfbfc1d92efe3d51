"""Kernel integration: a real ipykernel, the test acting as the notebook page (docs/protocol.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel_python import (
    KERNEL_PYTHON,
    awaiting_where_needed,
    expected_kernel,
    needs_blocking_wait,
    running_kernel,
    start_frontend,
)
from .scripted_frontend import ScriptedFrontend

pytestmark = pytest.mark.kernel

FIXTURES = Path(__file__).parent / "fixtures" / "targets"


@pytest.fixture
def fe() -> Iterator[ScriptedFrontend]:
    frontend = start_frontend()
    try:
        frontend.check(
            "import splitbrain_widget as sb, threading, asyncio\n"
            f"sim = sb.TargetWidget('demo', targets_dir={str(FIXTURES)!r}, timeout=3)\n"
        )
        # These tests are of the bridge, not of the blocking wait: where a blocking call in a cell answers
        # `deferred` (no shell-channel thread), their calls are awaited, which hears the page on every
        # kernel. What a blocking call does there is tests/test_kernel_hosts.py's.
        frontend.rewrite = awaiting_where_needed
        yield frontend
    finally:
        frontend.close()


def test_the_kernel_runs_the_requested_python(fe: ScriptedFrontend) -> None:
    prefix, version, ipykernel = running_kernel(fe)
    assert (prefix, version, ipykernel) == expected_kernel()
    out = fe.check("import sys, os; print(os.path.samefile(sys.executable, " + repr(KERNEL_PYTHON) + "))")
    assert out.strip() == "True"


def test_the_audit_log_records_op_arguments_result_duration_and_view(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "sim.set_parameter('speed', 12); sim.set_parameter('speed', 99)\n"
        "a, b = sim.audit[-2], sim.audit[-1]\n"
        "print(a.op, a.arguments, a.ok, a.view_id, a.duration_ms > 0)\n"
        "print(b.ok, b.code, b.view_id)"
    )
    first, second = out.splitlines()
    assert first == "set_parameters {'speed': 12} True v1 True"
    assert second == "False invalid_value None"


@needs_blocking_wait()
def test_blocking_set_in_a_plain_cell_gets_the_targets_reply(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "r = sim.set_parameter('speed', 12)\nprint(r.ok, r.views_applied, r.state['settings.speed'], r.changed)"
    )
    assert out.split(" ", 3)[:3] == ["True", "1", "12"]
    assert "'unit': 'm/s'" in out
    assert view.values["settings.speed"] == 12


def test_a_consumed_reply_causes_no_status_frames(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    result = fe.run("for i in range(5): sim.set_parameter('speed', i)")
    assert result.error is None
    assert result.requests_seen  # the cell did talk to the view
    assert "busy:comm_msg" not in result.status_parents  # and no reply was dispatched by the main shell


def test_async_call_in_a_cell(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "r = await sim.aset_parameters({'speed': 20, 'mode': 'manual'})\nprint(r.ok, r.state['settings.mode'])"
    )
    assert out.strip() == "True manual"


@needs_blocking_wait("the cell joins the thread: tests/test_kernel_hosts.py measures what happens there")
def test_worker_thread_call(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "box = []\n"
        "t = threading.Thread(target=lambda: box.append(sim.set_parameter('count', 7)))\n"
        "t.start(); t.join(10)\n"
        "print(box[0].ok, box[0].state['settings.count'])"
    )
    assert out.strip() == "True 7"


def test_no_view_keeps_the_change_and_says_so(fe: ScriptedFrontend) -> None:
    out = fe.check(
        "r = sim.set_parameter('speed', 5)\n"
        "print(r.ok, r.error.code, r.applied, r.kept, r.views_applied, sim.values['settings.speed'])\nprint(r)\n"
        "s = sim.fetch_state()\nprint(s.ok, s.error.code, s.applied, s.kept)"
    )
    lines = out.splitlines()
    assert lines[0] == "False no_view False True 0 5"  # kept, not applied: a field says so, not only prose
    assert "applies when the widget is displayed" in lines[1]
    assert lines[2] == "False no_view False False"


def test_a_new_view_receives_the_values_set_while_none_was_open(fe: ScriptedFrontend) -> None:
    fe.check("sim.set_parameter('speed', 33)")
    view = fe.attach(fe.widget_comm(), "late")
    assert view.values["settings.speed"] == 33  # the synced trait carries it to every new view


def test_two_views_both_apply_and_the_kernel_gets_one_result(fe: ScriptedFrontend) -> None:
    comm = fe.widget_comm()
    a, b = fe.attach(comm, "a"), fe.attach(comm, "b")
    out = fe.check(
        "r = sim.set_parameter('speed', 9)\n"
        "print(r.ok, r.views_applied, len(sim.audit), sim.audit[-1].ok, sim.audit[-1].view_id)"
    )
    ok, views_applied, audit_len, audit_ok, audit_view = out.split()
    assert (ok, audit_len, audit_ok) == ("True", "1", "True")  # one call, one result, one record
    assert audit_view in ("a", "b")  # the view whose reply won
    assert 1 <= int(views_applied) <= 2
    assert a.values["settings.speed"] == 9 and b.values["settings.speed"] == 9
    assert len(a.applied_ids) == len(b.applied_ids) == 1 and a.applied_ids == b.applied_ids  # one request, both
    # The first reply wins; the other either was counted in views_applied or, arriving after the call
    # returned, is dropped as late. Wait until both replies are accounted for, then check each was, once.
    out = fe.check(
        "import time\nt = time.monotonic()\n"
        "while r.views_applied + sim.bridge.dropped < 2 and time.monotonic() - t < 10: time.sleep(0.01)\n"
        "print(r.views_applied + sim.bridge.dropped, len(sim.bridge.pending), len(sim.audit))"
    )
    assert out.split() == ["2", "0", "1"]  # both replies accounted for, nothing pending, still one record


def test_stray_and_late_replies_are_dropped(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    view.behaviour = "silent"
    out = fe.check("r = sim.set_parameter('speed', 4, timeout=0.5)\nprint(r.ok, r.error.code)")
    assert out.strip() == "False timeout"
    late_id = view.applied_ids[-1]
    fe.reply(view, late_id)  # late: its call already returned
    fe.reply(view, "r999-forged")  # stray: never issued
    out = fe.check(
        "import time\nt = time.monotonic()\nwhile sim.bridge.dropped < 2 and time.monotonic() - t < 10: time.sleep(0.01)\nprint(sim.bridge.dropped, len(sim.bridge.pending))"
    )
    assert out.split() == ["2", "0"]


def test_a_view_that_never_gets_ready_yields_not_ready(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1", ready=False)
    out = fe.check(
        "r = sim.set_parameter('speed', 4, timeout=0.5)\nprint(r.ok, r.error.code)\nprint(r.error.message)\nprint(r.error.hint)"
    )
    first, message = out.splitlines()[:2]
    assert first == "False not_ready"
    assert "SplitBrain.ready" in out and "kept" in message


def test_requests_queued_before_ready_are_answered_once_ready(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1", ready=False)
    fe.after(0.3, lambda: fe.make_ready(view))
    out = fe.check("r = sim.set_parameter('speed', 14)\nprint(r.ok, r.state['settings.speed'])")
    assert out.strip() == "True 14"


def test_target_error_is_reported_with_its_text(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    view.behaviour = "throw"
    out = fe.check("r = sim.set_parameter('speed', 4)\nprint(r.ok, r.error.code, r.error.message)")
    assert out.strip() == "False target_error TypeError: boom in onApply"


def test_a_refused_change_gives_back_the_values_it_replaced(fe: ScriptedFrontend) -> None:
    """The target refused it (target_error): the kernel must not claim the page has it, nor re-send it on reload."""
    view = fe.attach(fe.widget_comm(), "v1")
    fe.check("assert sim.set_parameters({'speed': 6, 'color': 'red'}).ok")
    view.behaviour = "throw"
    out = fe.check(
        "r = sim.set_parameters({'speed': 4, 'color': 'blue'})\n"
        "print(r.ok, r.error.code, sim.values['settings.speed'], sim.values['display.color'])"
    )
    assert out.split() == ["False", "target_error", "6", "red"]
    view.behaviour = "ok"
    out = fe.check(
        "r = sim.set_parameter('speed', 5)\nprint(r.ok, sim.values['settings.speed'], sim.values['display.color'])"
    )
    assert out.split() == ["True", "5", "red"]


@needs_blocking_wait("an interrupt of a blocking wait")
def test_keyboard_interrupt_during_a_wait_is_clean(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    view.behaviour = "silent"
    result = fe.run("sim.set_parameter('speed', 4, timeout=30)", interrupt_after=1.0)
    assert result.error is not None and result.error["ename"] == "KeyboardInterrupt"
    view.behaviour = "ok"
    out = fe.check("print(len(sim.bridge.pending), sim.audit[-1].code)\nr = sim.set_parameter('speed', 6)\nprint(r.ok)")
    assert out.split() == ["0", "cancelled", "True"]


def test_validation_errors_change_nothing(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "r = sim.set_parameters({'speed': 7, 'count': 2.5})\nprint(r.ok, r.error.code, sim.values['settings.speed'])\n"
        "r = sim.set_parameter('serial', 'x')\nprint(r.error.code)\n"
        "r = sim.set_parameter('sped', 1)\nprint(r.error.code, r.error.hint)"
    )
    lines = out.splitlines()
    assert lines[0] == "False invalid_value 8.0"
    assert lines[1] == "readonly"
    assert lines[2] == "unknown_param did you mean settings.speed?"
    assert view.applied_ids == []


def test_reset_restores_defaults_in_kernel_and_view(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "sim.set_parameter('speed', 30)\nr = sim.reset()\nprint(r.ok, sim.values['settings.speed'], r.state['settings.speed'])"
    )
    assert out.strip() == "True 8.0 8.0"
    assert view.values["settings.speed"] == 8.0


def test_fetch_state_and_select_target(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check("r = sim.fetch_state()\nprint(r.ok, sorted(r.state)[:1])")
    assert out.startswith("True")
    out = fe.check("r = sim.select_target('nope')\nprint(r.ok, r.error.code, r.error.hint)")
    assert out.startswith("False unknown_target")


def test_a_view_with_another_protocol_version_is_not_used(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "old", protocol=0)
    out = fe.check("r = sim.set_parameter('speed', 3)\nprint(r.ok, r.error.code, r.kept, r.views_applied)\nprint(r)")
    first, message = out.strip().splitlines()
    assert first == "False protocol_mismatch True 0"
    assert "speaks protocol 0" in message and "reinstall splitbrain-widget" in message


@needs_blocking_wait("tests/test_kernel_hosts.py runs 300 in a cell on every kernel")
def test_many_calls_leave_no_pending_entries(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "ok = sum(sim.set_parameter('speed', i % 50).ok for i in range(300))\n"
        "import ipykernel.comm\nc = sim.comm\n"
        "print(ok, len(sim.bridge.pending), len(getattr(c, '_reply_subshell_ids', {})), len(sim.audit))"
    )
    assert out.split() == ["300", "0", "0", "300"]


def test_a_burst_of_async_calls_reaches_the_view_in_call_order(fe: ScriptedFrontend) -> None:
    """Past the IOPub budget calls wait their turn in one queue: the view gets them in call order, each
    once, and the values echo is coalesced (a burst would otherwise spend a message per call on it)."""
    comm = fe.widget_comm()
    view = fe.attach(comm, "v1")
    fe.updates.clear()
    n = 2500
    out = fe.check(
        f"rs = await asyncio.gather(*[sim.aset_parameter('speed', i % 40, timeout=30) for i in range({n})])\n"
        "print(sum(r.ok for r in rs), len(sim.bridge.pending), sim.values['settings.speed'])\n"
        "print('FAILED', [str(r) for r in rs if not r.ok][:3])",
        timeout=120,
    )
    assert out.split()[:3] == [str(n), "0", str((n - 1) % 40)], out
    counters = [int(rid[1:].split("-")[0]) for rid in view.applied_ids[-n:]]
    assert len(set(view.applied_ids)) == len(view.applied_ids)
    assert counters == sorted(counters), "requests reached the view out of call order"
    assert view.values["settings.speed"] == (n - 1) % 40
    # the views' copy of the values trait ends right (the coalesced echo comes behind the queue), with
    # far fewer echoes than calls
    deadline = time.monotonic() + 30
    while fe.comms[comm]["values"]["settings.speed"] != (n - 1) % 40 and time.monotonic() < deadline:
        fe.run("pass")
    assert fe.comms[comm]["values"]["settings.speed"] == (n - 1) % 40
    assert fe.updates["values"] < n / 2, fe.updates

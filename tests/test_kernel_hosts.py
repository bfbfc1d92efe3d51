"""Where a blocking wait in a cell can hear the page, and what a call does where it cannot (issue #19).

Run on every kernel of ``make kernel-matrix``. With a shell-channel thread (ipykernel 7) a blocking
call in a cell waits for the page's answer. Without one (ipykernel 6.x and 5.x, the kernels hosted
runtimes ship) the kernel reads the page's answer only after the cell, so the call answers
``deferred`` at once: it sent the request and kept the change, and the page's state lands in
``sim.state`` after the cell. Awaited calls, calls from other threads, the chat panel and the
inspector hear the page on both. These tests measure the README's "Where it runs" table.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel_python import blocking_calls_wait, start_frontend
from .scripted_frontend import ScriptedFrontend

pytestmark = pytest.mark.kernel

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
WAITS = blocking_calls_wait()


@pytest.fixture
def fe() -> Iterator[ScriptedFrontend]:
    frontend = start_frontend()
    try:
        frontend.check(
            "import splitbrain_widget as sb, threading, asyncio, time\n"
            f"sim = sb.TargetWidget('demo', targets_dir={str(FIXTURES)!r}, timeout=3)\n"
            # An awaited poll: it lets the kernel's loop run (and read the page) between its tries.
            "async def until(cond, seconds=10):\n"
            "    t = time.monotonic()\n"
            "    while not cond() and time.monotonic() - t < seconds: await asyncio.sleep(0.02)\n"
            "    return cond()\n"
        )
        yield frontend
    finally:
        frontend.close()


def test_a_blocking_call_in_a_cell_waits_where_it_can_and_defers_where_it_cannot(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "t0 = time.monotonic(); r = sim.set_parameter('speed', 12); took = time.monotonic() - t0\n"
        "print(r.ok, r.error and r.error.code, r.applied, r.kept, sim.values['settings.speed'], took < 1.0)\n"
        "print(r)"
    )
    first, message = out.splitlines()[:2]
    if WAITS:
        assert first == "True None True False 12 True"
    else:
        assert first == "False deferred False True 12 True"  # sent and kept, not applied, at once
        assert "after the running cell ends" in message and "sim.state" in message
    assert view.values["settings.speed"] == 12  # the page got it either way
    # after the cell: the page's answer settled the request, and its state is the widget's
    out = fe.check(
        "ok = await until(lambda: sim.state.get('settings.speed') == 12 and not sim.bridge.pending)\n"
        "print(ok, sim.audit[-1].code)"
    )
    assert out.split() == ["True", "None" if WAITS else "deferred"]


def test_a_reset_in_a_cell_keeps_the_defaults_and_the_state_follows(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    fe.check("sim.set_parameter('speed', 30)")
    out = fe.check("r = sim.reset()\nprint(r.ok, r.error and r.error.code, r.kept, sim.values['settings.speed'])")
    assert out.split() == (["True", "None", "False", "8.0"] if WAITS else ["False", "deferred", "True", "8.0"])
    out = fe.check("print(await until(lambda: sim.state.get('settings.speed') == 8.0 and not sim.bridge.pending))")
    assert out.strip() == "True"
    assert view.values["settings.speed"] == 8.0


def test_a_state_request_in_a_cell_is_not_kept_and_its_answer_comes_after(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check("r = sim.fetch_state()\nprint(r.ok, r.error and r.error.code, r.kept)")
    assert out.split() == (["True", "None", "False"] if WAITS else ["False", "deferred", "False"])
    out = fe.check("print(await until(lambda: sim.state.get('view') == 'v1' and not sim.bridge.pending))")
    assert out.strip() == "True"


def test_a_refusal_that_comes_after_the_cell_gives_back_the_values_it_replaced(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    fe.check("sim.set_parameter('speed', 6)")
    view.behaviour = "throw"
    out = fe.check("r = sim.set_parameter('speed', 4)\nprint(r.ok, r.error.code)")
    assert out.split() == ["False", "target_error" if WAITS else "deferred"]
    out = fe.check("print(await until(lambda: sim.values['settings.speed'] == 6 and not sim.bridge.pending))")
    assert out.strip() == "True"  # the page refused 4: the kernel does not claim it has it


def test_a_silent_page_ends_a_deferred_call_after_its_timeout_counted_from_the_cells_end(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    view.behaviour = "silent"
    out = fe.check("r = sim.set_parameter('speed', 5, timeout=0.5)\nprint(r.ok, r.error.code, r.kept)")
    assert out.split() == ["False", "timeout" if WAITS else "deferred", "True"]
    out = fe.check("print(await until(lambda: not sim.bridge.pending), sim.values['settings.speed'])")
    # nothing left pending; the change is kept (the kernel's log may say, above, how the call ended)
    assert out.splitlines()[-1].split() == ["True", "5"]


def test_awaited_calls_in_a_cell_hear_the_page(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "r = await sim.aset_parameters({'speed': 20, 'mode': 'manual'})\ns = await sim.afetch_state()\n"
        "print(r.ok, r.state['settings.mode'], s.ok, s.state['settings.speed'])"
    )
    assert out.split() == ["True", "manual", "True", "20"]


def test_a_call_from_another_thread_hears_the_page_once_the_cell_ends(fe: ScriptedFrontend) -> None:
    fe.attach(fe.widget_comm(), "v1")
    fe.check(
        "box = []\nworker = threading.Thread(target=lambda: box.append(sim.set_parameter('count', 7)))\nworker.start()"
    )
    out = fe.check("print(await until(lambda: bool(box)), box[0].ok, box[0].state['settings.count'])")
    assert out.split() == ["True", "True", "7"]


def test_a_call_from_another_thread_that_the_cell_blocks_on_waits_for_the_cell(fe: ScriptedFrontend) -> None:
    """The cell joins the thread: with a shell-channel thread the page's answer comes anyway; without
    one it comes only after the cell, so the call's own deadline ends it (kept, not lost)."""
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "box = []\nworker = threading.Thread(target=lambda: box.append(sim.set_parameter('count', 6, timeout=1)))\n"
        "worker.start(); worker.join(10)\nprint(box[0].ok, box[0].error and box[0].error.code, sim.values['settings.count'])"
    )
    assert out.split() == (["True", "None", "6"] if WAITS else ["False", "timeout", "6"])


def test_the_chat_panel_answers_and_its_change_reaches_the_page(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    fe.send_custom(fe.widget_comm(), {"kind": "chat", "text": "set the speed to 17"})
    out = fe.check(
        "done = await until(lambda: any(e['role'] == 'assistant' for e in sim.transcript), 30)\n"
        "print(done, sim.values['settings.speed'], [e['role'] for e in sim.transcript])\n"
        "print([e['text'] for e in sim.transcript if e['role'] == 'error'])"
    )
    done, speed, roles = out.splitlines()[-2].split(" ", 2)  # the last two lines: the kernel's log may come first
    assert (done, float(speed)) == ("True", 17.0), out
    assert "'tool'" in roles and "'error'" not in roles
    assert view.values["settings.speed"] == 17.0
    out = fe.check("print(sim.audit[-1].op, sim.audit[-1].ok, sim.audit[-1].source)")
    assert out.split()[:2] == ["set_parameters", "True"] and "chat:" in out


def test_the_inspector_sets_a_value_on_the_page(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    fe.send_custom(fe.widget_comm(), {"kind": "set", "values": {"settings.speed": 5}})
    out = fe.check(
        "ok = await until(lambda: len(sim.audit) > 0 and not sim.bridge.pending)\n"
        "print(ok, sim.audit[-1].ok, sim.audit[-1].source, sim.values['settings.speed'])"
    )
    assert out.split() == ["True", "True", "inspector", "5"]
    assert view.values["settings.speed"] == 5


def test_many_blocking_calls_in_a_cell_return_and_leave_nothing_pending(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    started = time.monotonic()
    out = fe.check(
        "rs = [sim.set_parameter('speed', i % 50) for i in range(300)]\n"
        "print(sum(r.ok for r in rs), sum(r.error is not None and r.error.code == 'deferred' for r in rs))",
        timeout=120,
    )
    assert out.split() == (["300", "0"] if WAITS else ["0", "300"])
    out = fe.check("print(await until(lambda: not sim.bridge.pending, 30), sim.state.get('settings.speed'))")
    assert out.split() == ["True", "49"]
    assert len(view.applied_ids) == 300 and view.values["settings.speed"] == 49
    print(f"300 blocking calls and their answers: {time.monotonic() - started:.2f} s")


def test_an_awaited_agent_in_a_cell_hears_the_page(fe: ScriptedFrontend) -> None:
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "r = await sb.Agent(sim).aask('set the speed to 17')\nprint(sim.audit[-1].ok, sim.values['settings.speed'])\nprint(r.text)"
    )
    assert out.splitlines()[0] == "True 17.0", out
    assert view.values["settings.speed"] == 17.0


def test_a_blocking_agent_in_a_cell_waits_where_it_can_and_names_the_awaited_twin_where_it_cannot(
    fe: ScriptedFrontend,
) -> None:
    """``agent.ask`` runs the agent on a worker thread and the cell waits for it: without a shell-channel
    thread the page's answers could come only after the cell, so it raises at once, naming
    ``await agent.aask``, and changes nothing (before, each change waited out its timeout)."""
    view = fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "agent = sb.Agent(sim); t0 = time.monotonic()\n"
        "try:\n    r = agent.ask('set the speed to 19'); print('ran', sim.audit[-1].ok, sim.values['settings.speed'])\n"
        "except RuntimeError as e:\n    print('raised', round(time.monotonic() - t0, 1), len(sim.audit)); print(e)"
    )
    first, *rest = out.splitlines()
    if WAITS:
        assert first == "ran True 19.0"
        fe.check("print(await until(lambda: not sim.bridge.pending))")
        assert view.values["settings.speed"] == 19.0
    else:
        assert first == "raised 0.0 0", out
        message = rest[0]
        assert "await agent.aask(...)" in message and "no shell-channel thread" in message, message
        assert "settings.speed" not in view.values or view.values["settings.speed"] != 19.0


def test_a_blocking_recording_in_a_cell_records_where_it_can_and_names_the_awaited_twin_where_it_cannot(
    fe: ScriptedFrontend,
) -> None:
    """``record`` watches the page's reports while the cell waits: without a shell-channel thread none
    would arrive before the cell ends, so it raises at once, naming ``await sim.arecord``, which
    records there (the kernel's loop reads the reports while the cell awaits)."""
    view = fe.attach(fe.widget_comm(), "v1")
    comm = fe.widget_comm()

    def report(i: int) -> None:
        fe.send_custom(comm, {"kind": "event", "view_id": "v1", "type": "state", "payload": {"echo": i}})
        if i < 40:
            fe.after(0.05, lambda: report(i + 1))

    fe.after(0.3, lambda: report(1))  # the scripted frontend fires its timers while it waits for a cell
    out = fe.check(
        "try:\n    df = sim.record(1.0, every=0.1, observables='echo'); print('ran', len(df))\n"
        "except RuntimeError as e:\n    print('raised'); print(e)"
    )
    if WAITS:
        assert out.splitlines()[0] == "ran 10", out
    else:
        first, message = out.splitlines()[:2]
        assert first == "raised" and "await sim.arecord(...)" in message, out
        out = fe.check(
            "df = await sim.arecord(1.0, every=0.1, observables='echo')\n"
            "print(len(df), df.attrs['reports'] > 0, df['echo'].notna().sum() > 0)"
        )
        assert out.splitlines()[-1] == "10 True True", out
    assert view.view_id == "v1"


def test_a_blocking_seek_in_a_cell_seeks_where_it_can_and_names_the_awaited_twin_where_it_cannot(
    fe: ScriptedFrontend,
) -> None:
    """Each try of a seek waits for the page: without a shell-channel thread none would come before
    the cell ends, so it raises at once naming ``await sim.aseek``, which reaches the page there (the
    fake view reports no ``echo``: the page's answer says so, ``not_measured``)."""
    fe.attach(fe.widget_comm(), "v1")
    out = fe.check(
        "try:\n    r = sim.seek('echo', 5, vary='settings.speed', timeout=5); print('ran', r.error and r.error.code)\n"
        "except RuntimeError as e:\n    print('raised'); print(e)"
    )
    first, *rest = out.splitlines()
    if WAITS:
        assert first == "ran not_measured", out
    else:
        assert first == "raised" and "await sim.aseek(...)" in rest[0], out
    out = fe.check(
        "r = await sim.aseek('echo', 5, vary='settings.speed', timeout=5)\nprint(r.error.code, sim.values['settings.speed'])"
    )
    assert out.splitlines()[-1] == "not_measured 8.0", out  # the page answered; the speed is back


def test_an_mcp_call_made_while_a_cell_sleeps_is_answered_where_the_kernel_can_hear(
    fe: ScriptedFrontend, tmp_path: Path
) -> None:
    """A client outside the kernel calls the kernel's MCP server while a cell sleeps. With a
    shell-channel thread the page's answer reaches the server's thread and the call is answered before
    the cell ends; without one the kernel reads the answer only after the cell, and the call (on the
    server's thread, inside its deadline) is answered then."""
    import asyncio
    import json
    import threading

    fe.attach(fe.widget_comm(), "v1")
    url = fe.check("server = sb.serve_mcp(sim, token='kernel-test')\nprint(server.url)").strip()
    box: dict[str, object] = {}
    flag = tmp_path / "cell-sleeps"

    async def call() -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": "Bearer kernel-test"}, timeout=httpx2.Timeout(30, read=60))
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            while not flag.exists():  # the cell is sleeping from now on
                await asyncio.sleep(0.01)
            box["asked"] = time.monotonic()
            result = await session.call_tool("demo__set_parameters", {"values": {"settings.count": 9}})
            box["answered"] = time.monotonic()
            box["result"] = result.structured_content

    client = threading.Thread(target=lambda: asyncio.run(call()))
    client.start()
    started = time.monotonic()
    cell = fe.run(
        f"open({str(flag)!r}, 'w').close()\ntime.sleep(2.5)\nprint('slept')"
    )  # the client asks once the flag is there
    ended = time.monotonic()
    client.join(60)
    assert "slept" in cell.stdout
    result = box["result"]
    assert isinstance(result, dict) and result["ok"] is True, json.dumps(result)
    answered = box["answered"]
    assert isinstance(answered, float)
    if WAITS:
        assert answered < ended, f"answered {answered - started:.2f} s in, the cell ended at {ended - started:.2f} s"
    else:
        assert answered >= ended - 0.5, "without a shell-channel thread the answer comes after the cell"
    assert fe.check("print(sim.values['settings.count'], sim.audit[-1].source)").split()[0] == "9"


def test_a_runners_cell_is_told_from_a_notebooks() -> None:
    """``core/_runner.py`` on this kernel (and each ipykernel of ``make kernel-matrix``; 5.x has no
    ``get_parent``): a cell sent with ``allow_stdin`` false is a runner's, one sent true a notebook's."""
    frontend = start_frontend()
    try:
        probe = "from splitbrain_widget.core._runner import cell_from_a_runner\nprint(cell_from_a_runner())"
        said = [frontend.run(probe, allow_stdin=allowed) for allowed in (True, False, True)]
        assert [r.error for r in said] == [None, None, None]
        assert [r.stdout.strip() for r in said] == ["False", "True", "False"]
    finally:
        frontend.close()

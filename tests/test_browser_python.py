"""The package in the browser's Python (#47): a Pyodide kernel (JupyterLite) has one thread, no
subprocesses and no scipy, pandas or PyYAML from PyPI. Here the platform is patched
(``core._platform.sys``), the missing packages hidden from import; the same package in a real
JupyterLite site: tests/browser/test_lite_browser.py."""

from __future__ import annotations

import asyncio
import sys
import time
import types
from pathlib import Path

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent._skills import Skill
from splitbrain_widget.core import _kernel_tap, _later, _pacing, _platform, _twins
from splitbrain_widget.core._platform import MissingDependency, NotInBrowser

from .fake_view import FakeView

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """This Python, as the browser's: ``sys.platform == "emscripten"`` where the package asks."""
    monkeypatch.setattr(_platform, "sys", types.SimpleNamespace(platform="emscripten"))


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Modules that cannot be imported, as where they are not installed."""
    for name in modules:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, name, None)


def test_a_feature_that_needs_a_missing_package_says_which_and_how_to_add_it(monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "scipy", "pandas")
    from splitbrain_widget.features import _seek_search

    with pytest.raises(MissingDependency, match=r"seek \(its root finder\) needs scipy, .*`pip install scipy`"):
        _seek_search.optimize()
    sim = sb.TargetWidget("bouncer")
    with pytest.raises(MissingDependency, match=r"the audit table needs pandas"):
        sim.audit.to_dataframe()
    sim.close()


def test_in_the_browser_the_hint_is_a_pip_magic(monkeypatch: pytest.MonkeyPatch, browser: None) -> None:
    hide(monkeypatch, "scipy")
    with pytest.raises(MissingDependency, match=r"run `%pip install scipy` in a cell"):
        _platform.need("scipy", "seek")


def test_the_package_imports_without_scipy_pandas_and_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh interpreter where the three cannot be imported: the package, a widget, the offline
    planner and every shipped skill work."""
    import subprocess

    code = (
        "import sys\n"
        "for m in ('scipy', 'pandas', 'yaml'): sys.modules[m] = None\n"
        "import splitbrain_widget as sb\n"
        "from splitbrain_widget.agent.planner import plan, PlannerContext\n"
        "from splitbrain_widget.agent._skills import skills_beside\n"
        "t = sb.load_target('projectile'); m = t.manifest\n"
        "p = plan('set the angle to 30', PlannerContext(m, m.defaults()))\n"
        "print(p.calls[0].args, len(skills_beside(t)))\n"
        "sim = sb.TargetWidget('projectile'); print(sim.values['launch.angle'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "{'values': {'launch.angle': 30.0}} 1" and done.stdout.split("\n")[1] == "45"


def test_skills_read_without_pyyaml_as_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every skill the package and its examples ship, read by the simple form's parser, is the skill
    PyYAML reads."""
    files = sorted(ROOT.glob("targets/*.skills/*.md")) + sorted(ROOT.glob("examples/**/*.skills/*.md"))
    assert len(files) >= 6
    with_yaml = [Skill.from_markdown(f.read_text(encoding="utf-8"), str(f)) for f in files]
    hide(monkeypatch, "yaml")
    without = [Skill.from_markdown(f.read_text(encoding="utf-8"), str(f)) for f in files]
    assert without == with_yaml


def test_front_matter_beyond_the_simple_form_names_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from splitbrain_widget.agent._skills import SkillError

    hide(monkeypatch, "yaml")
    text = "---\nname: x\ndescription: |\n  folded\n---\nbody\n"
    with pytest.raises(SkillError, match=r"line 2 of the front matter: '\|' needs PyYAML"):
        Skill.from_markdown(text, "x.md")


# -- one thread ---------------------------------------------------------------------------------


def test_no_call_in_a_cell_waits_and_the_packages_own_task_does(browser: None) -> None:
    """JupyterLite hands a widget's messages to Python only between cells (measured: an awaited cell
    never hears its page), so nothing in a cell waits; the chat panel's task, which no cell waits
    for, does."""
    assert _kernel_tap.replies_reach_this_thread(awaiting=False) is False
    assert _kernel_tap.replies_reach_this_thread(awaiting=True) is False
    context = _platform.background_context()
    assert context.run(_kernel_tap.replies_reach_this_thread, awaiting=True) is True
    assert context.run(_kernel_tap.replies_reach_this_thread, awaiting=False) is False
    assert "Pyodide" in _kernel_tap.describe()


def test_a_blocking_set_is_answered_deferred_pointing_at_its_awaited_twin(
    browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from splitbrain_widget.core import _seam

    monkeypatch.setattr(_seam._PlainHost, "answers_through_kernel", True)  # the fake view as a comm view
    sim = sb.TargetWidget("bouncer", timeout=5)
    FakeView(sim)
    try:
        result = sim.set_parameters({"settings.speed": 12})
        assert result.error is not None and result.error.code == "deferred", result
        assert "Pyodide" in result.error.message and "read sim.state in a later cell" in (result.error.hint or "")
        assert "await" not in (result.error.hint or "")  # an awaited call in a cell would not hear it either
        assert sim.values["settings.speed"] == 12  # kept: the page gets it
        awaited = asyncio.run(sim.aset_parameters({"settings.speed": 14}))
        assert awaited.error is not None and awaited.error.code == "deferred"
    finally:
        sim.close()


def test_what_needs_a_thread_or_a_process_says_it_is_not_available_in_the_browser(browser: None) -> None:
    with pytest.raises(NotInBrowser, match=r"blocks until its work ends.*await its awaitable twin"):
        _twins.blocking(lambda: asyncio.sleep(0), name="agent.ask()")
    with pytest.raises(NotInBrowser, match="seek is not available in the browser"):
        asyncio.run(_twins.awaiting(lambda _cancelled: 1, what="seek"))
    served = sb.TargetWidget("bouncer")
    with pytest.raises(NotInBrowser, match="the MCP server is not available in the browser"):
        sb.serve_mcp(served)
    served.close()
    from splitbrain_widget.hosts._headless_engine import HeadlessUnavailable, _require_playwright

    with pytest.raises(HeadlessUnavailable, match="not available in the browser"):
        _require_playwright()
    with pytest.raises(NotInBrowser, match=r"sweep \(headless pages, locally or on Dask\) is not available"):
        sb.sweep("projectile", {"launch.angle": [30, 45]}, client=object())
    sim = sb.TargetWidget("bouncer")
    with pytest.raises(NotInBrowser, match=r"stream\(\) is not available"):
        sim.stream({"settings.speed": 3})
    sim.close()


def test_deferred_sends_run_on_the_loop_and_the_pacer_sends_at_once(browser: None) -> None:
    """No thread: the trait echoes run on Pyodide's loop, and with no server to rate-limit, a send
    goes now."""
    ran: list[float] = []

    async def go() -> None:
        _later.LATER.call_at(time.monotonic() + 0.05, lambda: ran.append(time.monotonic()))
        started = time.monotonic()
        while not ran and time.monotonic() - started < 5:
            await asyncio.sleep(0.01)

    asyncio.run(go())
    assert len(ran) == 1
    pacer = _pacing.Pacer(per_second=1, burst=1, in_flight=1)
    sent: list[int] = []
    assert [pacer.submit(1, lambda n=n: sent.append(n)) for n in range(5)] == [None] * 5
    assert sent == [0, 1, 2, 3, 4] and pacer._thread is None


def test_the_chat_panel_answers_on_the_loop_in_the_browser(browser: None) -> None:
    """A panel message in the browser starts no thread: the offline planner's answer is a task on
    the kernel's loop, its tool call awaited there."""
    from .test_chat import chat_sim

    sim, _sent = chat_sim()

    async def go() -> None:
        sim.receive_view_message({"kind": "chat", "text": "set the speed to 12"})
        chat = sim._chat
        assert chat is not None and chat._worker is None and chat.busy()
        started = time.monotonic()
        while chat.busy() and time.monotonic() - started < 30:
            await asyncio.sleep(0.02)

    try:
        asyncio.run(go())
        assert [e["role"] for e in sim.transcript] == ["user", "tool", "assistant"]
        assert sim.values["settings.speed"] == 12 and sim.transcript[1]["ok"]
    finally:
        sim.close()


def test_lite_build_replaces_an_earlier_site_and_no_other_folder(tmp_path: Path) -> None:
    from splitbrain_widget import lite

    pytest.importorskip("jupyterlite_core", reason="building a site needs jupyterlite-core (the dev extras)")
    precious = tmp_path / "work"
    precious.mkdir()
    (precious / "thesis.md").write_text("mine", encoding="utf-8")
    with pytest.raises(lite.LiteError, match="holds no JupyterLite site"):
        lite.build(lite.default_notebooks(), precious)
    assert (precious / "thesis.md").read_text(encoding="utf-8") == "mine"
    assert lite.main(["build", str(tmp_path / "nothing.ipynb"), "-o", str(tmp_path / "site")]) == 2

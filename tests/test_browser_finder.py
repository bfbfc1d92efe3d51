"""Finding the browser the user has (#41): the documented order, on every system, and what is said.

Each machine is built in temporary folders: executables where a system keeps its browsers, a PATH of
our own, the operating system patched where it is not Linux. ``find_browser`` takes the world it looks
at as arguments (environment, platform, Playwright's answer), so no test depends on what this machine
has installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path, PureWindowsPath
from typing import Any

import pytest

from splitbrain_widget.hosts import _browser_finder as finder
from splitbrain_widget.hosts import _headless_engine as engine_mod
from splitbrain_widget.hosts._browser_finder import BrowserNotFound, FoundBrowser, find_browser

from .browser_env import require_browser

ROOT = Path(__file__).resolve().parents[1]


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 'Fake Chromium 1.0'\n")
    path.chmod(0o755)
    return path


def linux(tmp_path: Path, *names: str, playwright: str | None = None) -> FoundBrowser:
    """find_browser on a Linux machine whose PATH is a folder holding ``names``, nothing installed elsewhere."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        executable(bin_dir / name)
    return find_browser(
        env={"PATH": str(bin_dir)},
        platform="linux",
        playwright_path=lambda: playwright,
        exists=lambda p: str(p).startswith(str(tmp_path)) and p.is_file(),
    )


def test_only_chromium_browser_on_path(tmp_path: Path) -> None:
    found = linux(tmp_path, "chromium-browser")
    assert found == FoundBrowser(str(tmp_path / "bin" / "chromium-browser"), "on PATH as chromium-browser")


def test_only_google_chrome_on_path(tmp_path: Path) -> None:
    found = linux(tmp_path, "google-chrome")
    assert found.path.endswith("google-chrome") and found.how == "on PATH as google-chrome"


def test_the_names_are_tried_in_order(tmp_path: Path) -> None:
    assert linux(tmp_path, "microsoft-edge", "chromium").how == "on PATH as chromium"


def test_a_playwright_installed_browser_comes_before_the_system_s(tmp_path: Path) -> None:
    installed = executable(tmp_path / "ms-playwright" / "chromium-1234" / "chrome-linux" / "chrome")
    found = linux(tmp_path, "chromium", playwright=str(installed))
    assert found == FoundBrowser(str(installed), "installed by Playwright")


def test_playwright_s_layout_is_asked_of_playwright(tmp_path: Path) -> None:
    """Where Playwright says its Chromium is under PLAYWRIGHT_BROWSERS_PATH: finder's question, in a process
    of its own (the answer is cached per process)."""
    code = "from splitbrain_widget.hosts._browser_finder import playwright_chromium; print(playwright_chromium())"
    env = {"PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "browsers"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    answer = out.stdout.strip()
    assert answer.startswith(str(tmp_path / "browsers")) and "chromium" in answer, answer


def test_the_variable_comes_first_and_a_wrong_one_is_an_error_naming_it(tmp_path: Path) -> None:
    mine = executable(tmp_path / "my-chrome")
    found = find_browser(env={finder.ENV_CHROMIUM: str(mine)}, platform="linux", playwright_path=lambda: None)
    assert found == FoundBrowser(str(mine), finder.ENV_CHROMIUM)
    with pytest.raises(BrowserNotFound, match=r"SPLITBRAIN_CHROMIUM='.*nothing' is not an executable file"):
        find_browser(
            env={finder.ENV_CHROMIUM: str(tmp_path / "nothing")}, platform="linux", playwright_path=lambda: None
        )


def test_where_playwright_s_chrome_channel_looks_on_linux() -> None:
    seen: list[str] = []

    def exists(path: Path) -> bool:
        seen.append(str(path))
        return str(path) == "/opt/google/chrome/chrome"

    found = find_browser(env={"PATH": ""}, platform="linux", playwright_path=lambda: None, exists=exists)
    assert found == FoundBrowser("/opt/google/chrome/chrome", "where Playwright's chrome channel looks")


def test_the_macos_application_bundles(tmp_path: Path) -> None:
    edge = "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"
    found = find_browser(
        env={}, platform="darwin", playwright_path=lambda: None, exists=lambda p: str(p) == edge, home=tmp_path
    )
    assert found == FoundBrowser(edge, "Microsoft Edge in /Applications")
    users = tmp_path / "Applications" / "Google Chrome.app" / "Contents" / "MacOS" / "Google Chrome"
    found = find_browser(
        env={}, platform="darwin", playwright_path=lambda: None, exists=lambda p: p == users, home=tmp_path
    )
    assert found.path == str(users) and "Google Chrome" in found.how


def test_the_windows_install_folders_and_edge_by_default() -> None:
    env = {"LOCALAPPDATA": r"C:\Users\ana\AppData\Local"}  # no PROGRAMFILES: Windows' defaults are used
    edge = str(PureWindowsPath(r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe"))
    found = find_browser(env=env, platform="win32", playwright_path=lambda: None, exists=lambda p: str(p) == edge)
    assert found == FoundBrowser(edge, "Microsoft Edge in its install folder")
    chrome = str(PureWindowsPath(env["LOCALAPPDATA"]) / r"Google\Chrome\Application\chrome.exe")
    found = find_browser(env=env, platform="win32", playwright_path=lambda: None, exists=lambda p: str(p) == chrome)
    assert found == FoundBrowser(chrome, "Google Chrome (this user) in its install folder")


@pytest.mark.parametrize(
    ("platform", "hint"),
    [
        ("linux", "sudo apt install chromium"),
        ("darwin", "install Google Chrome or Microsoft Edge (into /Applications)"),
        ("win32", "repair Microsoft Edge (it comes with Windows)"),
    ],
)
def test_nothing_found_names_what_was_tried_and_the_fix_for_that_system(platform: str, hint: str) -> None:
    with pytest.raises(BrowserNotFound) as info:
        find_browser(
            env={"PATH": ""},
            platform=platform,
            playwright_path=lambda: None,
            exists=lambda p: False,
            which=lambda n, p: None,
        )
    text = str(info.value)
    assert "SPLITBRAIN_CHROMIUM (unset)" in text and "Playwright's own Chromium" in text
    assert hint in text and "python -m playwright install chromium" in text
    for place, _how in finder.system_candidates(platform, {}):
        assert place in text
    if platform == "linux":
        assert "chromium-browser" in text and "google-chrome-stable" in text


def test_the_engine_loop_is_a_proactor_on_windows_whatever_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    class Proactor(asyncio.SelectorEventLoop):  # stands in for Windows' ProactorEventLoop here
        pass

    class SelectorPolicy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:  # what a kernel's selector policy would give
            return asyncio.SelectorEventLoop()

    monkeypatch.setattr(asyncio, "ProactorEventLoop", Proactor, raising=False)
    monkeypatch.setattr(asyncio, "get_event_loop_policy", lambda: SelectorPolicy())
    loop = engine_mod.new_engine_loop("win32")
    try:
        assert type(loop) is Proactor
    finally:
        loop.close()
    other = engine_mod.new_engine_loop("linux")
    try:
        assert type(other) is not Proactor
    finally:
        other.close()


# -- doctor --------------------------------------------------------------------------------------


def test_doctor_json_here() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "doctor", "--json", "--no-smoke"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(out.stdout)
    names = [c["name"] for c in report["checks"]]
    for name in ("Python", "splitbrain-widget", "playwright", "mcp", "anywidget", "ipykernel", "front ends", "browser"):
        assert name in names, names
    assert any(n.startswith("Ollama (port 11434)") for n in names)
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["Python"]["status"] == "ok" and report["ok"] is True
    assert set(c["status"] for c in report["checks"]) <= {"ok", "missing", "note"}


def test_doctor_with_the_browser_hidden_says_missing_and_the_fix(no_browser: None) -> None:
    from splitbrain_widget import doctor

    checks = doctor.browser_checks(smoke=True)
    assert [c.name for c in checks] == ["browser"], "no smoke test without a browser"
    (browser,) = checks
    assert browser.status == "missing" and "found none" in browser.detail
    assert "python -m playwright install chromium" in browser.fix and "SPLITBRAIN_CHROMIUM" in browser.fix


def test_doctor_rejects_an_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    from splitbrain_widget import doctor

    assert doctor.main(["--verbose"]) == 2
    assert "--verbose" in capsys.readouterr().err


# -- the words users read ------------------------------------------------------------------------

USER_FACING = [
    *sorted((ROOT / "splitbrain_widget").rglob("*.py")),
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "notebooks").glob("*.ipynb")),
]


def test_no_user_facing_text_says_the_build_machines_rule() -> None:
    """The build machines cannot download a browser; users can: that rule lives in the tests and CI only."""
    said: list[str] = []
    for path in USER_FACING:
        text = path.read_text(encoding="utf-8")
        for pattern in (r"Debian's (browser|chromium|Chromium)", r"never `?playwright install"):
            said += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in re.finditer(pattern, text, flags=re.I)]
    assert not said, said


def test_user_facing_files_are_found(tmp_path: Any) -> None:
    assert len(USER_FACING) > 50 and (ROOT / "README.md") in USER_FACING


# -- for real, on this machine: the build machines' browser moved where users' browsers are ----------

DEBIAN_BINARY = Path("/usr/lib/chromium/chromium")  # what /usr/bin/chromium (a shell wrapper) runs
RUN_A_PAGE = """
import json, splitbrain_widget as sb
from splitbrain_widget.hosts._headless_engine import found_browser
found = found_browser()
with sb.HeadlessTarget("projectile") as sim:
    result = sim.set_parameters({"launch.speed": 30, "launch.angle": 45, "launch.height": 0})
    print(json.dumps({"path": found.path, "how": found.how, "ok": result.ok, "range": sim.state.get("range")}))
"""


def run_a_page(tmp_path: Path, **env: str) -> dict[str, Any]:
    """A headless page in a fresh process whose PATH holds no browser (an empty folder) and no
    SPLITBRAIN_CHROMIUM: the browser is found where ``env`` and the machine put it."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if k not in (finder.ENV_CHROMIUM, "PATH", "PLAYWRIGHT_BROWSERS_PATH")}
    clean.update(PATH=str(empty), HOME=str(tmp_path / "home"), **env)
    done = subprocess.run([sys.executable, "-c", RUN_A_PAGE], env=clean, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def expected_range(result: dict[str, Any]) -> None:
    assert result["ok"] is True and result["range"] == pytest.approx(30**2 / 9.81, rel=0.02), result


@pytest.mark.browser
def test_a_browser_only_where_playwright_s_chrome_channel_looks_on_linux(tmp_path: Path) -> None:
    require_browser()
    place = Path("/opt/google/chrome/chrome")
    if place.parent.parent.exists() or not hasattr(os, "geteuid") or os.geteuid() != 0 or not DEBIAN_BINARY.exists():
        pytest.skip("needs root, Debian's chromium and no /opt/google (the build machines): it puts a browser there")
    place.parent.mkdir(parents=True)
    try:
        place.symlink_to(DEBIAN_BINARY)
        result = run_a_page(tmp_path)
    finally:
        shutil.rmtree(place.parent.parent)
    assert result["path"] == str(place) and result["how"] == "where Playwright's chrome channel looks", result
    expected_range(result)


@pytest.mark.browser
def test_a_browser_only_as_playwright_installs_it(tmp_path: Path) -> None:
    require_browser()
    if not DEBIAN_BINARY.exists():
        pytest.skip("needs Debian's chromium (the build machines) to put where Playwright keeps its own")
    browsers = tmp_path / "ms-playwright"
    ask = "from splitbrain_widget.hosts._browser_finder import playwright_chromium; print(playwright_chromium())"
    env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(browsers)}
    where = subprocess.run([sys.executable, "-c", ask], env=env, capture_output=True, text=True, timeout=60, check=True)
    layout = Path(where.stdout.strip())
    assert layout.is_relative_to(browsers), layout
    layout.parent.mkdir(parents=True)
    layout.symlink_to(DEBIAN_BINARY)
    result = run_a_page(tmp_path, PLAYWRIGHT_BROWSERS_PATH=str(browsers))
    assert result["path"] == str(layout) and result["how"] == "installed by Playwright", result
    expected_range(result)

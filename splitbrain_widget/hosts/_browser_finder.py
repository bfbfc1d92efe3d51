"""Finding the browser the user has, in a documented order, and saying how it was found.

The headless runtime needs a Chromium-family browser (Chromium, Google Chrome, Microsoft Edge). In order:

1. ``SPLITBRAIN_CHROMIUM``: a path the user set (an error if it is not an executable file);
2. the Chromium Playwright installed (``python -m playwright install chromium``): Playwright is asked
   where its browser is (``PLAYWRIGHT_BROWSERS_PATH`` and its own cache folder), and it is used if it is
   there;
3. the system's browsers: where Playwright's ``chrome`` and ``msedge`` channels look on this operating
   system, the usual application bundles on macOS and install folders on Windows (Edge is on every
   Windows machine), and the usual names on PATH on Linux (``chromium``, ``chromium-browser``,
   ``google-chrome``, ``google-chrome-stable``, ``microsoft-edge``, ...).

None found: :class:`BrowserNotFound` names every place tried and the fix for this operating system.
``python -m splitbrain_widget doctor`` prints what was found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PureWindowsPath

ENV_CHROMIUM = "SPLITBRAIN_CHROMIUM"

LINUX_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "microsoft-edge",
    "microsoft-edge-stable",
)
# Where Playwright's channels look (its registry), then the other usual places of each system.
LINUX_PLACES = (
    ("/opt/google/chrome/chrome", "where Playwright's chrome channel looks"),
    ("/opt/microsoft/msedge/msedge", "where Playwright's msedge channel looks"),
)
MAC_BUNDLES = (
    ("Google Chrome.app/Contents/MacOS/Google Chrome", "Google Chrome"),
    ("Microsoft Edge.app/Contents/MacOS/Microsoft Edge", "Microsoft Edge"),
    ("Chromium.app/Contents/MacOS/Chromium", "Chromium"),
)
# (environment variable of the folder, the rest of the path, what it is)
WINDOWS_PLACES = (
    ("LOCALAPPDATA", r"Google\Chrome\Application\chrome.exe", "Google Chrome (this user)"),
    ("PROGRAMFILES", r"Google\Chrome\Application\chrome.exe", "Google Chrome"),
    ("PROGRAMFILES(X86)", r"Google\Chrome\Application\chrome.exe", "Google Chrome"),
    ("PROGRAMFILES(X86)", r"Microsoft\Edge\Application\msedge.exe", "Microsoft Edge"),
    ("PROGRAMFILES", r"Microsoft\Edge\Application\msedge.exe", "Microsoft Edge"),
    ("LOCALAPPDATA", r"Microsoft\Edge\Application\msedge.exe", "Microsoft Edge (this user)"),
)
WINDOWS_DEFAULTS = {"PROGRAMFILES": r"C:\Program Files", "PROGRAMFILES(X86)": r"C:\Program Files (x86)"}

PLAYWRIGHT_INSTALL = "python -m playwright install chromium"


class BrowserNotFound(RuntimeError):
    """No Chromium-family browser was found: the message names what was tried and how to get one."""


@dataclass(frozen=True)
class FoundBrowser:
    """A browser to run: its executable and how it was found ("SPLITBRAIN_CHROMIUM", "installed by
    Playwright", "on PATH as chromium-browser", ...)."""

    path: str
    how: str


def fix_hint(platform: str = sys.platform) -> str:
    """How a user of ``platform`` gets a browser the runtime finds."""
    if platform == "darwin":
        where = "install Google Chrome or Microsoft Edge (into /Applications)"
    elif platform == "win32":
        where = "install Google Chrome, or repair Microsoft Edge (it comes with Windows)"
    else:
        where = (
            "install Chromium, Google Chrome or Microsoft Edge with your package manager "
            "(e.g. `sudo apt install chromium`)"
        )
    return f"{where}; or run `{PLAYWRIGHT_INSTALL}`; or set {ENV_CHROMIUM} to a Chromium-family browser's executable"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def system_candidates(
    platform: str = sys.platform, env: Mapping[str, str] | None = None, home: Path | None = None
) -> list[tuple[str, str]]:
    """(path, how) of every place the system's browsers are looked for on ``platform``, in order."""
    env = os.environ if env is None else env
    if platform == "darwin":
        roots = [Path("/Applications"), (home or Path.home()) / "Applications"]
        return [(str(root / bundle), f"{name} in {root}") for bundle, name in MAC_BUNDLES for root in roots]
    if platform == "win32":
        found = []
        for variable, rest, name in WINDOWS_PLACES:
            base = env.get(variable) or WINDOWS_DEFAULTS.get(variable)
            if base:
                found.append((str(PureWindowsPath(base) / rest), f"{name} in its install folder"))
        return found
    return list(LINUX_PLACES)


def find_browser(
    *,
    env: Mapping[str, str] | None = None,
    platform: str = sys.platform,
    playwright_path: Callable[[], str | None] | None = None,
    exists: Callable[[Path], bool] = _executable,
    which: Callable[[str, str | None], str | None] | None = None,
    home: Path | None = None,
) -> FoundBrowser:
    """The browser to run, found in the documented order; :class:`BrowserNotFound` when none is.

    The keyword arguments are the world it looks at (the environment, the operating system, where
    Playwright keeps its browser, which files exist, PATH lookups), so tests can build any machine.
    """
    env = os.environ if env is None else env
    tried: list[str] = []
    configured = env.get(ENV_CHROMIUM, "").strip()
    if configured:
        path = Path(configured).expanduser()
        if exists(path):
            return FoundBrowser(str(path), ENV_CHROMIUM)
        raise BrowserNotFound(
            f"{ENV_CHROMIUM}={configured!r} is not an executable file: point it at a Chromium-family browser's "
            f"executable, or unset it to let the runtime look for one ({fix_hint(platform)})"
        )
    tried.append(f"{ENV_CHROMIUM} (unset)")
    installed = (playwright_path or playwright_chromium)()
    if installed and exists(Path(installed)):
        return FoundBrowser(installed, "installed by Playwright")
    tried.append(f"Playwright's own Chromium ({installed or 'Playwright not importable'})")
    for candidate, how in system_candidates(platform, env, home):
        if exists(Path(candidate)):
            return FoundBrowser(candidate, how)
        tried.append(candidate)
    if platform not in ("darwin", "win32"):
        lookup = which or (lambda name, path: shutil.which(name, path=path))
        for name in LINUX_NAMES:
            found = lookup(name, env.get("PATH"))
            if found:
                return FoundBrowser(found, f"on PATH as {name}")
        tried.append("on PATH: " + ", ".join(LINUX_NAMES))
    raise BrowserNotFound(
        "the headless runtime needs a Chromium-family browser (Chromium, Google Chrome or Microsoft Edge) and "
        f"found none; tried: {'; '.join(tried)}. To fix: {fix_hint(platform)}"
    )


@cache
def playwright_chromium() -> str | None:
    """Where Playwright's own Chromium is (or would be, once installed); None without Playwright.

    Asked of Playwright itself (its driver knows its browsers' layout and ``PLAYWRIGHT_BROWSERS_PATH``),
    on a thread of its own: its sync API refuses to start inside a running event loop.
    """
    box: list[str | None] = []

    def ask() -> None:
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                box.append(playwright.chromium.executable_path)
        except Exception:  # not installed, or its driver cannot start: then it has no browser for us
            box.append(None)

    thread = threading.Thread(target=ask, name="splitbrain-find-browser", daemon=True)
    thread.start()
    thread.join(30)
    return box[0] if box else None


def browser_version(path: str, timeout: float = 5.0) -> str | None:
    """What the browser says of its version (``--version``), or None when it does not answer.

    (On Windows Chrome and Edge print nothing for ``--version``; the runtime does not need it.)
    """
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout or "").strip().splitlines()
    return text[-1][:200] if text else None

"""Page assembly: a target's page as a view loads it, the policy and the target API first.

What the registry puts around a page (the CSP ``<meta>``, the base URL, the target API, the kit and
the binding runtime, the virtual clock of a headless page), the notebook view's sandbox frame, the
built scripts inlined into them, and which network a manifest's policy lets a page reach. All of it
is text in, text out: the one rule for where our markup goes is :func:`_before_page`.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from . import _page_bindings as _bindings


class TargetError(ValueError):
    """A target could not be found or loaded. ``code`` is ``unknown_target``; ``hint`` lists real ids."""

    code = "unknown_target"

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(f"{message} ({hint})" if hint else message)
        self.message = message
        self.hint = hint


DEFAULT_CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval' blob: data:; "
    "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; "
    "worker-src blob:; connect-src 'none'; form-action 'none'"
)
_PACKAGE = Path(__file__).resolve().parent.parent  # splitbrain_widget/
_STATIC = _PACKAGE / "static"
# Marks the virtual clock's <script> (headless pages only), so that it is never injected twice.
CLOCK_ATTR = "data-splitbrain-clock"
# The id of the data block of an MCP App view's document (:func:`app_html`).
APP_DATA_ID = "splitbrain-app"


def inject_target_api(
    page_html: str, csp: str | None = None, clock_seed: int | None = None, after_api: str = ""
) -> str:
    """The page behind a head of ours: the CSP meta tag, a base URL and the target API script, first.

    ``<base href="about:blank">``: a srcdoc page would otherwise inherit the notebook page's URL as
    its ``document.baseURI`` (the server and the notebook's path); a self-contained page resolves
    no relative URL anyway. With ``clock_seed`` (headless pages only) the virtual clock goes around
    the target API (see :func:`inject_clock`); without it the output is what it always was.
    ``after_api``: more elements right after the target API (the kit, the binding runtime).
    """
    api = f"<script>{target_api_script()}</script>"
    if clock_seed is not None:
        before, after = _clock_tags(clock_seed)
        api = before + api + after
    head = f'{_policy_meta(csp or DEFAULT_CSP)}<base href="about:blank">{api}{after_api}'
    return _before_page(page_html, head)


def _policy_meta(policy: str) -> str:
    quoted = policy.replace("&", "&amp;").replace('"', "&quot;")
    return f'<meta http-equiv="Content-Security-Policy" content="{quoted}">'


def _before_page(page_html: str, head: str) -> str:
    """``head`` opening a document of its own, the page's whole text after it.

    The page's markup never decides where the policy goes: whatever the page holds (a ``<head>`` in
    a comment, a script, CDATA or an attribute; a script before its head; no head at all; a
    fragment), the parser meets our ``<html><head>`` and the policy before any byte of the page, so
    the policy is in force before anything of the page can run or load. The rest of the page is
    parsed as it would have been: in the "in head" insertion mode the HTML parser ignores its own
    ``<!doctype>`` and ``<head>`` tags, copies its ``<html>`` tag's attributes onto ours, and puts
    its head elements and body where they always go. Only its doctype has to come first to count,
    so the doctype it opens with (if any) opens ours: the page keeps its rendering mode (standards
    or quirks). A ``<meta>`` policy of the page's own adds to ours, and policies only tighten.
    """
    return f"{_leading_doctype(page_html)}<html><head>{head}" + page_html


# The comments a document may open with before its doctype, and the doctype token (ended by the
# first ">" as the tokenizer ends it; "<!-->" and "<!--->" are complete comments).
_LEADING = re.compile(r"\A(?:\ufeff)?(?:\s|<!--(?:>|->|.*?-->))*(<!doctype\b[^>]*>)?", re.IGNORECASE | re.DOTALL)


def _leading_doctype(page_html: str) -> str:
    """The doctype the page opens with (after white space and comments, as the parser takes it), or ""."""
    match = _LEADING.match(page_html)
    doctype = match.group(1) if match else None
    if doctype is None:
        return ""
    return "<!DOCTYPE html>" if re.fullmatch(r"<!doctype\s+html\s*>", doctype, re.IGNORECASE) else doctype


def network_sources(csp: str | None) -> tuple[str, ...]:
    """The network sources a target's policy lets it reach: every ``scheme://host[:port][/path]``
    source expression (or ``*``) of a manifest's ``csp``; none for :data:`DEFAULT_CSP`. A headless
    page's browser lets through these and nothing else (:func:`network_allowed`)."""
    if not csp:
        return ()
    found: dict[str, None] = {}
    for directive in csp.split(";"):
        for token in directive.split()[1:]:
            if token == "*" or re.match(r"^(https?|wss?)://", token, re.IGNORECASE):
                found.setdefault(token)
    return tuple(found)


def network_allowed(url: str, sources: tuple[str, ...]) -> bool:
    """Whether ``url`` matches one of ``sources`` (:func:`network_sources`) as CSP matches them: the
    scheme, the host (``*.`` for any subdomain), the port (``:*`` for any; none for the scheme's
    own) and the path (a prefix, when it ends in ``/``; else the exact path)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    defaults = {"http": 80, "https": 443, "ws": 80, "wss": 443}
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    for source in sources:
        if source == "*":
            if scheme in defaults:
                return True
            continue
        match = re.match(r"^([a-z]+)://(\*\.)?([^/:]+)(?::(\d+|\*))?(/.*)?$", source, re.IGNORECASE)
        if match is None:
            continue
        s_scheme, wildcard, s_host, s_port, s_path = match.groups()
        if s_scheme.lower() != scheme and not (s_scheme.lower() == "http" and scheme == "https"):
            continue
        s_host = s_host.lower()
        if not (host.endswith("." + s_host) if wildcard else host == s_host):
            continue
        wanted = None if s_port == "*" else int(s_port) if s_port else defaults.get(s_scheme.lower())
        if wanted is not None and (port or defaults.get(scheme)) != wanted:
            continue
        if s_path and not (parts.path.startswith(s_path) if s_path.endswith("/") else parts.path == s_path):
            continue
        return True
    return False


def sandbox_html(csp: str | None = None) -> str:
    """The notebook view's sandbox frame (js/host/sandbox.js), under the target's policy.

    The frame stands between the notebook page and the target's iframe. A srcdoc frame inherits its
    parent's policy, and a frame's navigation is checked against its parent's policy, so the policy
    here is the target's own (``csp``, else :data:`DEFAULT_CSP`) with ``frame-src 'none'`` added
    where it says nothing of frames: the target runs under nothing looser than its own policy, and
    cannot navigate to any network, ``data:`` or ``blob:`` URL (the browser refuses before any
    request is made). Its document's title is a word for any target, on purpose: the ``_sandbox``
    trait changes only with the policy, so a ``select_target`` to a page under the same policy reloads
    the page in this frame (its held calls answered) instead of replacing the frame; the frame element
    in the notebook carries the target's title.
    """
    return _frame_document(csp, sandbox_script())


def app_html(target_html: str, csp: str | None, data: dict[str, Any], title: str = "simulation") -> str:
    """An MCP App view's document (js/app/app_view.js): the sandbox frame's twin for a chat host.

    The same policy as :func:`sandbox_html` (the target's own, ``frame-src 'none'`` added), the App
    module, and ``data`` with the target's page (``target_html``, as :attr:`Target.html` assembles it)
    as JSON in a data block. The page runs in a sandboxed frame inside this document, never in it: the
    page's code cannot reach the chat host's channel (the host accepts messages from this document's
    window only), so it cannot call tools or write into the conversation.
    """
    return _frame_document(csp, app_script(), _data_block(APP_DATA_ID, {**data, "html": target_html}), title=title)


EXPORT_DATA_ID = "splitbrain-export-data"  # js/export/export_page.js EXPORT_DATA_ID


def export_html(csp: str | None, traits: dict[str, Any], title: str = "simulation") -> str:
    """A widget as a file of its own (js/export/export_page.js): the notebook view's own code on the
    widget's ``traits`` (the page, its sandbox frame, the values), under the target's policy with
    ``frame-src 'none'`` added where it says nothing of frames, as the sandbox frame is: the file loads
    nothing from anywhere, and its page runs in the same sandbox as in a notebook."""
    return _frame_document(csp, export_script(), _data_block(EXPORT_DATA_ID, {"traits": traits}), title=title)


def _data_block(element_id: str, data: dict[str, Any]) -> str:
    block = json.dumps(data, separators=(",", ":"))
    # In a data block only "</script" (and "<!--") mean anything to the HTML parser: none survive this.
    block = block.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{block}</script>'


def _frame_document(csp: str | None, module: str, data: str = "", title: str = "simulation") -> str:
    """A document of ours that holds a target's frame: the target's policy with ``frame-src 'none'``
    added where it says nothing of frames, ``data``, then ``module``; titled and in English (its
    words are), as a screen reader announces a frame's document."""
    policy = csp or DEFAULT_CSP
    directives = {part.strip().split(" ", 1)[0].lower() for part in policy.split(";") if part.strip()}
    if not directives & {"frame-src", "child-src", "default-src"}:
        policy = f"{policy.rstrip().rstrip(';')}; frame-src 'none'"
    return (
        f'<!DOCTYPE html><html lang="en"><head>{_policy_meta(policy)}<meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>html,body{margin:0;padding:0;background:transparent;overflow:hidden}"
        "iframe{display:block;width:100%;border:0}</style>"
        f'{data}<script type="module">{module}</script></head><body></body></html>'
    )


@cache
def _static_script(name: str) -> str:
    """A built file of ``static/``, safe to inline in a ``<script>`` element."""
    path = _STATIC / name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetError(f"{path}: cannot read the built script ({exc})", "run `node js/build.mjs`") from None
    return _bindings.script_text(text)  # one escaping rule for every inlined script


def target_api_script() -> str:
    """The built target API (``static/target_api.js``), safe to inline in a ``<script>`` element."""
    return _static_script("target_api.js")


def sandbox_script() -> str:
    """The built sandbox frame module (``static/sandbox.js``), safe to inline."""
    return _static_script("sandbox.js")


def export_script() -> str:
    """The built export page module (``static/export_page.js``), safe to inline."""
    return _static_script("export_page.js")


def app_script() -> str:
    """The built MCP App view module (``static/app_view.js``), safe to inline."""
    return _static_script("app_view.js")


def kit_script() -> str:
    """The built target kit (``static/kit.js``: ``window.Kit`` and its CSS), safe to inline."""
    return _static_script("kit.js")


def bindings_script() -> str:
    """The built binding runtime (``static/bindings.js``), safe to inline."""
    return _static_script("bindings.js")


def inject_clock(html: str, seed: int = 0, fps: float | None = None, *, warm_up: bool = False) -> str:
    """Add the virtual clock to a page that already holds the target API (:attr:`Target.html`).

    ``fps``: animation frames per virtual second (60, a display's rate, when None). Fewer frames
    draw less; the built-in targets step their physics at a fixed rate and simulate at most 0.1 s
    per frame, so from 10 fps up their results do not change.

    The clock goes right before the target API, so that its message listener runs first (listeners on
    ``window`` run in the order they were added) and can hold what follows an ``advance``. A line
    after the target API seeds ``Math.random``: the target API draws its per-load id from it, which must
    differ between loads. A page that already has a clock is returned unchanged. ``warm_up``: the
    clock runs by itself from the load event until the page is ready (see js/page/clock.js).
    """
    if f"<script {CLOCK_ATTR}" in html:
        return html
    api = f"<script>{target_api_script()}</script>"
    at = html.find(api)
    if at < 0:
        raise ValueError("the page holds no splitbrain target API: pass a target's html (registry.Target.html)")
    before, after = _clock_tags(seed, fps, warm_up=warm_up)
    end = at + len(api)
    return html[:at] + before + api + after + html[end:]


def clock_script() -> str:
    """The built virtual clock (``static/clock.js``), safe to inline in a ``<script>`` element."""
    return _static_script("clock.js")


def _clock_tags(seed: int, fps: float | None = None, *, warm_up: bool = False) -> tuple[str, str]:
    """The clock's script (its settings in its own element's data: no page global) and the line after the target API."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"the clock seed must be an int, got {type(seed).__name__}")
    settings = f'data-seed="{seed & 0xFFFFFFFF}"'
    if fps is not None:
        if isinstance(fps, bool) or not isinstance(fps, int | float) or not 1 <= fps <= 1000:
            raise ValueError(f"fps must be a number from 1 to 1000, got {fps!r}")
        settings += f' data-fps="{float(fps)!r}"'
    if warm_up:
        settings += ' data-warm-up="1"'
    before = f"<script {CLOCK_ATTR} {settings}>{clock_script()}</script>"
    after = f"<script {CLOCK_ATTR}-random>__splitbrainClock.seedRandom(Math)</script>"
    return before, after

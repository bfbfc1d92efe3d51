"""Finding targets: built-in ones, folders you name, and the ``SPLITBRAIN_TARGETS`` path list.

A target is a self-contained HTML page plus its manifest, in one of two layouts::

    <dir>/<id>.html + <dir>/<id>.json
    <dir>/<id>/index.html + <dir>/<id>/manifest.json

Drop one into a folder and it is listed on the next call; remove it and it is gone. The file or
folder name is the target's id. A broken target never breaks the listing: it is reported in
``list_targets().problems`` with its file and the failing field.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import _bindings
from .manifest import Manifest, ManifestError

ENV_VAR = "SPLITBRAIN_TARGETS"
MAX_PAGE_BYTES = 20 << 20
DEFAULT_CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval' blob: data:; "
    "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; "
    "worker-src blob:; connect-src 'none'; form-action 'none'"
)
_STATIC = Path(__file__).parent / "static"
# Marks the virtual clock's <script> (headless pages only), so that it is never injected twice.
CLOCK_ATTR = "data-splitbrain-clock"


class TargetError(ValueError):
    """A target could not be found or loaded. ``code`` is ``unknown_target``; ``hint`` lists real ids."""

    code = "unknown_target"

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(f"{message} ({hint})" if hint else message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class TargetInfo:
    """A listed target: its id, title and where it lives."""

    id: str
    title: str
    description: str
    page: Path
    manifest_path: Path
    builtin: bool

    def load(self) -> Target:
        """Read the page and manifest."""
        return _load_pair(self.id, self.page, self.manifest_path, self.builtin)


@dataclass(frozen=True)
class Target:
    """A loaded target: the manifest and the page, ready to put in an iframe."""

    id: str
    manifest: Manifest
    page_html: str
    page: Path | None = None
    builtin: bool = False

    @property
    def title(self) -> str:
        return self.manifest.title or self.id

    @property
    def html(self) -> str:
        """The page with its Content-Security-Policy and the target API script injected first.

        Right after the target API come the kit (``"kit": true``) and, for a bound manifest, the
        binding runtime and ``setup``; the bound page's accessor scripts go at its very end.
        """
        page = inject_target_api(self.page_html, csp=self.manifest.csp, after_api=self._head_parts())
        return page + _bindings.tail_html(self.manifest)

    @property
    def sandbox_html(self) -> str:
        """The notebook view's sandbox frame for this target (:func:`sandbox_html`)."""
        return sandbox_html(self.manifest.csp)

    def headless_html(self, seed: int = 0, fps: float | None = None) -> str:
        """:attr:`html` plus the virtual clock (time stands still until advanced, Math.random seeded).

        A bound page's clock runs a frame at a time from the load event until the page is ready
        (js/clock.js ``WARM_UP_MS``): its ready condition may wait for the page's own timers.
        """
        return inject_clock(self.html, seed, fps, warm_up=self.manifest.bound)

    def standalone_html(self) -> str:
        """The page as a file of its own, for anyone copying it: the kit and the bindings inlined.

        No target API, CSP or clock: opened by itself, the page runs as it would unframed (the kit's
        ``targetApi`` shows its note, the binding runtime waits for a ``SplitBrain`` that never comes).
        """
        return _before_page(self.page_html, self._head_parts()) + _bindings.tail_html(self.manifest)

    def _head_parts(self) -> str:
        kit = ""
        if self.manifest.kit:
            # The manifest's parameters beside the kit (js/kit.js manifestParams): the page keeps no copy.
            spec = {
                path: p.model_dump(
                    mode="json", include={"type", "value", "min", "max", "enum", "unit"}, exclude_none=True
                )
                for path, p in self.manifest.parameters.items()
            }
            kit = (
                f'<script type="application/json" data-splitbrain-kit-params>{_bindings.json_literal(spec)}</script>'
                f"<script data-splitbrain-kit>{kit_script()}</script>"
            )
        return kit + (_bindings.head_html(self.manifest, bindings_script()) if self.manifest.bound else "")


class TargetList(list[TargetInfo]):
    """``list_targets()``'s answer: the targets found, plus ``problems`` for those that failed to load."""

    def __init__(self, items: Iterable[TargetInfo] = (), problems: Iterable[str] = ()) -> None:
        super().__init__(items)
        self.problems: list[str] = list(problems)

    def ids(self) -> list[str]:
        return [t.id for t in self]

    def get(self, target_id: str) -> TargetInfo | None:
        return next((t for t in self if t.id == target_id), None)

    def __repr__(self) -> str:
        lines = [f"{t.id:<20} {t.title}" + ("" if t.builtin else f"  [{t.page.parent}]") for t in self]
        lines += [f"problem: {p}" for p in self.problems]
        return "\n".join(lines) or "(no targets)"


def builtin_dir() -> Path:
    """Where the built-in targets live: inside the installed package, or ``targets/`` in a checkout."""
    packaged = Path(__file__).parent / "targets"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "targets"


def search_dirs(*dirs: str | Path) -> list[tuple[Path, bool]]:
    """The folders searched, first match winning: ``dirs``, then ``SPLITBRAIN_TARGETS``, then built-ins."""
    out: list[tuple[Path, bool]] = [(Path(d).expanduser(), False) for d in dirs]
    env = os.environ.get(ENV_VAR, "")
    out += [(Path(d).expanduser(), False) for d in env.split(os.pathsep) if d.strip()]
    out.append((builtin_dir(), True))
    return out


def list_targets(*dirs: str | Path) -> TargetList:
    """Every target in ``dirs``, ``SPLITBRAIN_TARGETS`` and the built-ins (the first of an id wins)."""
    found: dict[str, TargetInfo] = {}
    problems: list[str] = []
    for folder, builtin in search_dirs(*dirs):
        if not folder.is_dir():
            if not builtin:
                problems.append(f"{folder}: not a folder")
            continue
        for info in _scan(folder, builtin, problems):
            found.setdefault(info.id, info)
    return TargetList(sorted(found.values(), key=lambda t: (not t.builtin, t.id)), problems)


def load_target(id_or_path: str | Path, *dirs: str | Path) -> Target:
    """Load a target by id (searched as in :func:`list_targets`) or by path to its page, manifest or folder."""
    text = str(id_or_path)
    path = Path(text).expanduser()
    looks_like_path = isinstance(id_or_path, Path) or os.sep in text or text.endswith((".html", ".json"))
    if looks_like_path:
        return _load_path(path)
    targets = list_targets(*dirs)
    info = targets.get(text)
    if info is None:
        close = difflib.get_close_matches(text, targets.ids(), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}?" if close else f"available: {', '.join(targets.ids()) or 'none'}"
        broken = [p for p in targets.problems if text in p]
        detail = f"; it failed to load: {broken[0]}" if broken else ""
        raise TargetError(f"no target '{text}'{detail}", hint)
    return info.load()


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
    """The notebook view's sandbox frame (js/sandbox.js), under the target's policy.

    The frame stands between the notebook page and the target's iframe. A srcdoc frame inherits its
    parent's policy, and a frame's navigation is checked against its parent's policy, so the policy
    here is the target's own (``csp``, else :data:`DEFAULT_CSP`) with ``frame-src 'none'`` added
    where it says nothing of frames: the target runs under nothing looser than its own policy, and
    cannot navigate to any network, ``data:`` or ``blob:`` URL (the browser refuses before any
    request is made).
    """
    policy = csp or DEFAULT_CSP
    directives = {part.strip().split(" ", 1)[0].lower() for part in policy.split(";") if part.strip()}
    if not directives & {"frame-src", "child-src", "default-src"}:
        policy = f"{policy.rstrip().rstrip(';')}; frame-src 'none'"
    return (
        f'<!DOCTYPE html><html><head>{_policy_meta(policy)}<meta charset="utf-8">'
        "<style>html,body{margin:0;padding:0;background:transparent;overflow:hidden}"
        "iframe{display:block;width:100%;border:0}</style>"
        f'<script type="module">{sandbox_script()}</script></head><body></body></html>'
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
    clock runs by itself from the load event until the page is ready (see js/clock.js).
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


# -- scanning ---------------------------------------------------------------------------------


def _scan(folder: Path, builtin: bool, problems: list[str]) -> Iterable[TargetInfo]:
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        problems.append(f"{folder}: cannot list: {exc}")
        return
    names = {e.name for e in entries}
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir():
            page, manifest = entry / "index.html", entry / "manifest.json"
            if manifest.is_file() and page.is_file():
                info = _info(entry.name, page, manifest, builtin, problems)
            elif manifest.is_file() or page.is_file():
                missing = page if not page.is_file() else manifest
                problems.append(f"{missing}: missing; a target folder needs index.html and manifest.json")
                continue
            else:
                continue
        elif entry.suffix == ".json":
            if f"{entry.stem}.html" not in names:
                problems.append(f"{entry}: no page {entry.stem}.html beside it")
                continue
            info = _info(entry.stem, entry.with_suffix(".html"), entry, builtin, problems)
        elif entry.suffix == ".html":
            if f"{entry.stem}.json" not in names:
                problems.append(f"{entry}: no manifest {entry.stem}.json beside it")
            continue
        else:
            continue
        if info is not None:
            yield info


def _info(target_id: str, page: Path, manifest_path: Path, builtin: bool, problems: list[str]) -> TargetInfo | None:
    try:
        manifest = _manifest(manifest_path, manifest_path.stat().st_mtime_ns)
    except ManifestError as exc:
        problems.extend(f"{manifest_path}: {p}" for p in exc.problems)
        return None
    except OSError as exc:
        problems.append(f"{manifest_path}: cannot read: {exc}")
        return None
    return TargetInfo(target_id, manifest.title or target_id, manifest.description or "", page, manifest_path, builtin)


@cache
def _manifest(path: Path, mtime_ns: int) -> Manifest:
    """Parse a manifest, cached by path and modification time."""
    del mtime_ns  # part of the cache key only
    return Manifest.from_file(path)


def _load_pair(target_id: str, page: Path, manifest_path: Path, builtin: bool) -> Target:
    manifest = Manifest.from_file(manifest_path)
    try:
        size = page.stat().st_size
        if size > MAX_PAGE_BYTES:
            raise TargetError(f"{page}: page of {size} bytes exceeds the {MAX_PAGE_BYTES}-byte limit")
        html = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"{page}: cannot read the page: {exc}") from None
    return Target(target_id, manifest, html, page, builtin)


def _load_path(path: Path) -> Target:
    if path.is_dir():
        return _load_pair(path.name, path / "index.html", path / "manifest.json", False)
    if path.suffix in (".html", ".json"):
        if path.name in ("index.html", "manifest.json"):
            return _load_path(path.parent)
        page, manifest = path.with_suffix(".html"), path.with_suffix(".json")
        for needed in (page, manifest):
            if not needed.is_file():
                raise TargetError(f"{needed}: missing; a target is <id>.html plus <id>.json")
        return _load_pair(path.stem, page, manifest, False)
    raise TargetError(f"{path}: not a target page, manifest or folder")


# -- command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m splitbrain_widget standalone <target> [-o file] [--dir folder]``.

    Writes the target's page as a file of its own (:meth:`Target.standalone_html`): to stdout, or
    to ``-o``. Returns the exit status (2 for a target that cannot be loaded).
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m splitbrain_widget")
    commands = parser.add_subparsers(dest="command", required=True)
    standalone = commands.add_parser("standalone", help="write a target's page with the kit and bindings inlined")
    standalone.add_argument("target", help="a target id, or the path of its page, manifest or folder")
    standalone.add_argument("-o", "--output", help="the file to write (default: stdout)")
    standalone.add_argument("--dir", action="append", default=[], help="a folder of targets to search first")
    args = parser.parse_args(argv)
    try:
        html = load_target(args.target, *args.dir).standalone_html()
    except (TargetError, ManifestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.output:
        Path(args.output).write_text(html, encoding="utf-8")
    else:
        sys.stdout.write(html)
    return 0

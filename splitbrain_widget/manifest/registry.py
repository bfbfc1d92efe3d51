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
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import _page_bindings as _bindings
from ._errors import ManifestError
from ._model import Manifest
from ._page import (
    _PACKAGE,
    APP_DATA_ID,
    CLOCK_ATTR,
    DEFAULT_CSP,
    TargetError,
    _before_page,
    app_html,
    app_script,
    bindings_script,
    clock_script,
    export_html,
    inject_clock,
    inject_target_api,
    kit_script,
    network_allowed,
    network_sources,
    sandbox_html,
    sandbox_script,
    target_api_script,
)

__all__ = [
    "APP_DATA_ID",
    "CLOCK_ATTR",
    "DEFAULT_CSP",
    "ENV_VAR",
    "MAX_PAGE_BYTES",
    "Target",
    "TargetError",
    "TargetInfo",
    "TargetList",
    "app_html",
    "app_script",
    "bindings_script",
    "builtin_dir",
    "clock_script",
    "inject_clock",
    "inject_target_api",
    "kit_script",
    "list_targets",
    "load_target",
    "main",
    "network_allowed",
    "network_sources",
    "sandbox_html",
    "sandbox_script",
    "search_dirs",
    "target_api_script",
]

ENV_VAR = "SPLITBRAIN_TARGETS"
MAX_PAGE_BYTES = 20 << 20


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

    def view_manifest(self) -> dict[str, Any]:
        """What a view is told of the manifest (the widget's ``manifest`` trait): its words, parameters,
        observables and actions' names, never how a page is bound."""
        manifest = self.manifest
        return {
            "id": self.id,
            "title": self.title,
            "description": manifest.description or "",
            "parameters": {
                path: p.model_dump(mode="json", exclude_none=True) for path, p in manifest.parameters.items()
            },
            "observables": {k: o.model_dump(exclude_none=True) for k, o in manifest.observables.items()},
            # a bound page has controls of its own: its frame is a tab stop (a canvas page's is not)
            "operable": manifest.bound,
            # the panel's buttons: how each action is named and described, never how it is bound
            "actions": {
                name: a.model_dump(include={"label", "description"}, exclude_none=True)
                for name, a in manifest.actions.items()
            },
        }

    def export_html(self, traits: dict[str, Any]) -> str:
        """A widget of this target as a file of its own (:func:`export_html`), from its ``traits``."""
        return export_html(self.manifest.csp, traits, self.title)

    def app_html(self, data: dict[str, Any]) -> str:
        """An MCP App view's document holding this target's page (:func:`app_html`), ``data`` beside it."""
        return app_html(self.html, self.manifest.csp, data, self.title)

    def headless_html(self, seed: int = 0, fps: float | None = None) -> str:
        """:attr:`html` plus the virtual clock (time stands still until advanced, Math.random seeded).

        A bound page's clock runs a frame at a time from the load event until the page is ready
        (js/page/clock.js ``WARM_UP_MS``): its ready condition may wait for the page's own timers.
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
            # The manifest's parameters beside the kit (js/page/kit.js manifestParams): the page keeps no copy.
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
    packaged = _PACKAGE / "targets"
    return packaged if packaged.is_dir() else _PACKAGE.parent / "targets"


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
    commands.add_parser("mcp", help="serve headless pages' tools over MCP (python -m splitbrain_widget mcp --help)")
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

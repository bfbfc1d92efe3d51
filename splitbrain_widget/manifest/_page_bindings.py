"""The glue of a bound page: generated from its manifest, run by ``js/page/bindings.js``.

A bound manifest (:attr:`~splitbrain_widget.manifest.Manifest.bound`) steers a page that knows
nothing of splitbrain. The registry puts two things into it:

- in the head, right after the target API: the binding runtime (``static/bindings.js``) and the
  manifest's ``setup`` script, which so run before any script of the page;
- at the very end: small classic scripts holding *accessor closures*, ``() => (particles.length)``
  or ``{get: () => speed, set: (v) => { speed = v; }}``. They are generated source, not strings
  evaluated at run time (the default CSP has no ``'unsafe-eval'``), and as classic scripts they
  see the page's top-level ``let`` / ``const`` bindings, which are no ``window`` properties.

Only the first identifier of a global path becomes a closure; the runtime walks the rest
(``.b.c``) as properties, so that it can say which part is missing. Paths were checked against
the identifier pattern when the manifest loaded; ``expr`` and ``setup`` are the manifest author's
code (trusted like the page), each in a script of its own so that one that does not compile
breaks only its own binding, which then answers ``target_error`` naming it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._binding_model import WAIT_S
from ._model import Manifest
from ._names import JS_RESERVED

RUNTIME = "__splitbrainBindings"  # the runtime's global (js/page/bindings.js), the generated scripts' only callee
BINDINGS_ATTR = "data-splitbrain-bindings"  # marks every script this module generates


def script_text(source: str) -> str:
    """``source`` made safe inside ``<script>...</script>``: no ``</script`` and no ``<!--`` left.

    Both stay valid where they can occur in sensible code (strings, regular expressions, comments).
    """
    source = re.sub(r"</(script)", r"<\\/\1", source, flags=re.IGNORECASE)
    return source.replace("<!--", "<\\!--")


def head_html(manifest: Manifest, runtime_js: str) -> str:
    """The head part of a bound page: the runtime (already safe to inline) and the ``setup`` script; ``""`` unbound."""
    if not manifest.bound:
        return ""
    out = f"<script {BINDINGS_ATTR}-runtime>{runtime_js}</script>"
    setup = manifest.setup_script
    if setup is not None and setup.when == "before":
        out += f"<script {BINDINGS_ATTR}-setup>{script_text(setup.script)}\n</script>"
    return out


def tail_html(manifest: Manifest) -> str:
    """The end-of-page scripts of a bound page (``""`` when it is not bound).

    One script per ``expr`` (registering its closure), then one that hands the runtime the
    bindings (as JSON) and the global roots' accessors, and starts it.
    """
    if not manifest.bound:
        return ""
    scripts = [
        f"<script {BINDINGS_ATTR}-expr>{RUNTIME}.expr({json_literal(key)}, () => ({script_text(expr)}\n));</script>"
        for key, expr in _expressions(manifest)
    ]
    names = ", ".join(_leaf_names(manifest))
    scripts += [
        f"<script {BINDINGS_ATTR}-expr>{RUNTIME}.expr({json_literal(position_key(path))}, "
        f"({{{names}}}) => ({script_text(p.bind.position)}\n));</script>"
        for path, p in manifest.parameters.items()
        if p.bind is not None and p.bind.position is not None
    ]
    setup = manifest.setup_script
    if setup is not None and setup.when == "ready":  # run once the page is ready, before it says so
        scripts.append(
            f"<script {BINDINGS_ATTR}-setup>{RUNTIME}.setup(() => {{\n{script_text(setup.script)}\n}});</script>"
        )
    spec = binding_spec(manifest)
    roots = ", ".join(_root_accessor(name, writable) for name, writable in _roots(manifest).items())
    scripts.append(f"<script {BINDINGS_ATTR}>{RUNTIME}.start({json_literal(spec)}, {{{roots}}});</script>")
    return "".join(scripts)


def _expressions(manifest: Manifest) -> list[tuple[str, str]]:
    """Every JS expression the manifest gives, with the key the runtime finds it by: an observable's
    ``read.expr`` (its name), a parameter's ``read.expr`` (``param <path>``), an action's ``when``
    (``action <name>``), a wait step's condition (``action <name> step <i>``)."""
    found = [(name, o.read.expr) for name, o in manifest.observables.items() if o.read and o.read.expr]
    found += [(f"param {path}", p.read.expr) for path, p in manifest.parameters.items() if p.read and p.read.expr]
    found += [(f"action {name}", a.when.expr) for name, a in manifest.actions.items() if a.when and a.when.expr]
    found += [
        (wait_key(name, i), step.wait)
        for name, a in manifest.actions.items()
        for i, step in enumerate(a.steps)
        if step.wait is not None
    ]
    return found


def position_key(path: str) -> str:
    """The key a drag's ``position`` expression is registered under in the page."""
    return f"position {path}"


def _leaf_names(manifest: Manifest) -> list[str]:
    """The parameters' leaf names a ``position`` expression can use (those no other parameter shares)."""
    leaves = [path.rsplit(".", 1)[-1] for path in manifest.parameters]
    return [leaf for leaf in leaves if leaves.count(leaf) == 1 and leaf not in JS_RESERVED]


def wait_key(action: str, step: int) -> str:
    """The key a wait step's condition is registered under in the page."""
    return f"action {action} step {step}"


def binding_spec(manifest: Manifest) -> dict[str, Any]:
    """What the runtime needs of the manifest: the bindings in manifest order, and the ready condition.

    An action's ``set`` steps name parameters by dotted path, with coerced values."""
    params = []
    for path, p in manifest.parameters.items():
        if p.bind is not None:
            entry: dict[str, Any] = {"path": path, "type": p.type, "bind": p.bind.model_dump(mode="json")}
            if p.read is not None:
                entry["read"] = p.read.model_dump(mode="json")
            if p.bind.drag is not None:  # the range its track runs along
                entry |= {"min": p.min, "max": p.max}
            if p.bind.position is not None:
                entry["position_key"] = position_key(path)
            params.append(entry)
    actions = []
    for name, a in manifest.actions.items():
        if a.bind is None:
            continue
        steps: list[dict[str, Any]] = []
        for i, step in enumerate(a.steps):
            dumped = step.model_dump(mode="json")
            if step.set is not None:
                dumped["set"] = manifest.coerce_many(step.set)
            if step.wait is not None:
                dumped |= {"expr_key": wait_key(name, i), "timeout": step.timeout or WAIT_S}
            steps.append(dumped)
        actions.append({"name": name, "steps": steps} | ({"when": True} if a.when is not None else {}))
    return {
        "params": params,
        "observables": [
            {"name": name, "read": o.read.model_dump(mode="json")}
            for name, o in manifest.observables.items()
            if o.read is not None
        ],
        "actions": actions,
        "ready": manifest.ready.model_dump(mode="json") if manifest.ready else {"load": True},
    }


def _roots(manifest: Manifest) -> dict[str, bool]:
    """The first identifier of every global path the manifest names -> whether a binding writes it itself."""
    roots: dict[str, bool] = {}

    def add(path: str | None, written: bool = False) -> None:
        if path is not None:
            root = path.split(".", 1)[0]
            roots[root] = roots.get(root, False) or (written and root == path)

    for p in manifest.parameters.values():
        if p.bind is not None:
            add(p.bind.global_, written=True)
            add(p.bind.after)
            add(p.bind.call)
            for function in (p.bind.calls or {}).values():
                add(function)
        if p.read is not None:
            add(p.read.global_)
    for o in manifest.observables.values():
        if o.read is not None:
            add(o.read.global_)
    for a in manifest.actions.values():
        for step in a.steps:
            add(step.call)
            add(step.assign, written=True)
    if manifest.ready is not None:
        add(manifest.ready.global_)
    return roots


def _root_accessor(name: str, writable: bool) -> str:
    # ``name`` is an identifier (the manifest checked it), so it can stand in source as it is. A
    # setter only where a binding assigns the name itself: assigning an undeclared name would
    # create a window property in sloppy mode, so the runtime reads it first.
    setter = f", set: (v) => {{ {name} = v; }}" if writable else ""
    return f"{json_literal(name)}: {{get: () => {name}{setter}}}"


def json_literal(value: Any) -> str:
    """JSON that is also a JS literal safe inside a ``<script>``: every ``<`` escaped, and ASCII only
    (a lone surrogate from a manifest could not be encoded as UTF-8; U+2028/2029 read alike everywhere)."""
    return json.dumps(value, ensure_ascii=True).replace("<", "\\u003c")

"""The manifest's data tree read into parameters, and the checks across the whole manifest:
bindings complete and consistent, `depends_on` naming real parameters."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import (
    ValidationError,
)
from pydantic_core import InitErrorDetails

from ._binding_model import ActionBinding, ObservableRead, ParameterBinding
from ._coerce import PARAM_TYPES
from ._errors import ParameterError, describe, kind_of, problem_at, shown
from ._names import name_problem
from ._parameter import Parameter


def collect_parameter(
    raw: dict[str, Any], loc: tuple[str, ...], path: str, out: dict[str, Parameter], problems: list[InitErrorDetails]
) -> None:
    if raw.get("type") not in PARAM_TYPES:
        problems.append(
            problem_at(
                (*loc, "type"),
                f"expected one of {', '.join(PARAM_TYPES)}, got {shown(raw.get('type'))}",
                raw.get("type"),
            )
        )
        return
    if "value" not in raw:
        problems.append(problem_at((*loc, "value"), "missing; every parameter needs a default value", raw))
        return
    if "path" in raw:  # derived from where the parameter sits; a manifest cannot set it
        problems.append(problem_at((*loc, "path"), "unknown field", raw["path"]))
        return
    try:
        out[path] = Parameter.model_validate({**raw, "path": path})
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            where, message = describe(err)
            problems.append(problem_at((*loc, *where), message, err.get("input") if where else raw))


def bound_by(bound_params: Iterable[str], read_observables: Iterable[str], ready: object, setup: object) -> str | None:
    """What makes a manifest bound, in words (``data.settings.speed has 'bind'``); None when it is not."""
    for path in bound_params:
        return f"data.{path} has 'bind'"
    for name in read_observables:
        return f"observables.{name} has 'read'"
    if ready is not None:
        return "it has 'ready'"
    if setup is not None:
        return "it has 'setup'"
    return None


def check_bindings(raw: dict[str, Any], params: Mapping[str, Parameter], problems: list[InitErrorDetails]) -> None:
    """In a bound manifest everything needs a binding; in any other, actions are the page's own business."""
    try:
        raw = by_name(raw, "actions")
    except ValueError:
        return  # pydantic reports the malformed list
    observables = raw.get("observables") if isinstance(raw.get("observables"), dict) else {}
    actions = raw.get("actions") if isinstance(raw.get("actions"), dict) else {}
    assert isinstance(observables, dict) and isinstance(actions, dict)
    bound_params = (path for path, param in params.items() if param.bind is not None)
    read_observables = (name for name, entry in observables.items() if _has(entry, "read"))
    reason = bound_by(bound_params, read_observables, raw.get("ready"), raw.get("setup"))
    for key, entry in actions.items():
        if isinstance(entry, dict) and entry.get("name", key) != key:
            problems.append(problem_at(("actions", key, "name"), f"expected {key!r}, the action's key", entry["name"]))
    if reason is None:
        for key, entry in actions.items():
            if _has(entry, "bind"):
                problems.append(
                    problem_at(
                        ("actions", key, "bind"),
                        "only a bound manifest binds actions (one whose parameters have 'bind'); "
                        "a page that is not bound handles its actions with SplitBrain.onAction",
                        entry["bind"],
                    )
                )
        return
    why = f"the manifest is bound ({reason})"
    missing: list[tuple[tuple[str, ...], str, str]] = [
        (("data", *path.split(".")), "bind", f"every parameter needs a 'bind': {ParameterBinding.SHAPES}")
        for path, param in params.items()
        if param.bind is None
    ]
    missing += [
        (("observables", name), "read", f"every observable needs a 'read': {ObservableRead.SHAPES}")
        for name, entry in observables.items()
        if isinstance(entry, dict) and not _has(entry, "read")
    ]
    missing += [
        (("actions", key), "bind", f"every action needs a 'bind': {ActionBinding.SHAPES}")
        for key, entry in actions.items()
        if isinstance(entry, dict) and not _has(entry, "bind")
    ]
    for where, field, needed in missing:
        problems.append(problem_at((*where, field), f"missing; {why}, so {needed}", None))


def _has(entry: Any, key: str) -> bool:
    return isinstance(entry, dict) and entry.get(key) is not None


def resolve_depends_on(
    raw: dict[str, Any], params: Mapping[str, Parameter], problems: list[InitErrorDetails], *, complete: bool
) -> dict[str, Any]:
    """Check every observable's ``depends_on`` against the parameters; leaf names become dotted paths.

    Entries that are not strings are left to pydantic. An unknown name is not reported when it may
    name a parameter that failed to load (``complete`` false, or a problem under its path).
    """
    try:
        raw = observables_by_name(raw)
    except ValueError:
        return raw  # pydantic reports the malformed list
    observables = raw.get("observables")
    if not isinstance(observables, dict):
        return raw
    broken = {
        ".".join(str(part) for part in p["loc"][1:k])
        for p in problems
        if p["loc"][:1] == ("data",)
        for k in range(2, len(p["loc"]) + 1)
    }
    broken |= {b.rsplit(".", 1)[-1] for b in broken}
    variable = [path for path, p in params.items() if p.seekable and not p.readonly]
    expected = "expected a number, integer or boolean parameter, or a string with an enum: " + (
        f"one of {', '.join(variable)}" if variable else "this manifest has none that can be set"
    )
    resolved: dict[str, Any] = {}
    for name, entry in observables.items():
        deps = entry.get("depends_on") if isinstance(entry, dict) else None
        if not isinstance(deps, list):
            resolved[name] = entry
            continue
        seen: dict[str, int] = {}
        out: list[Any] = []
        for i, dep in enumerate(deps):
            out.append(dep)
            if not isinstance(dep, str):
                continue
            loc = ("observables", name, "depends_on", i)
            if not dep:
                problems.append(problem_at(loc, f"empty name; {expected}", dep))
                continue
            try:
                param = resolve_name(params, dep)
            except ParameterError as exc:
                if complete and dep.removeprefix("data.") not in broken:
                    found = str(exc) if exc.hint.startswith("did you mean") else exc.message
                    problems.append(problem_at(loc, f"{found}; {expected}", dep))
                continue
            if not param.seekable:
                what = (
                    "a string parameter without an enum"
                    if param.type == "string"
                    else ("an " if param.type == "array" else "a ") + param.type + " parameter"
                )
                problems.append(problem_at(loc, f"{param.path} is {what}; {expected}", dep))
            elif param.readonly:
                problems.append(problem_at(loc, f"{param.path} is read-only; {expected}", dep))
            elif param.path in seen:
                first = f"depends_on.{seen[param.path]}"
                problems.append(problem_at(loc, f"repeats {param.path} (also {first}); list each parameter once", dep))
            else:
                seen[param.path] = i
                out[-1] = param.path
        resolved[name] = {**entry, "depends_on": out}
    return {**raw, "observables": resolved}


def collect(
    node: dict[str, Any],
    loc: tuple[str, ...],
    prefix: list[str],
    out: dict[str, Parameter],
    problems: list[InitErrorDetails],
) -> None:
    for key, child in node.items():
        here = (*loc, key)
        problem = name_problem(key)
        if problem is not None:
            problems.append(problem_at(here, problem, key))
            continue
        if not isinstance(child, dict):
            problems.append(
                problem_at(
                    here,
                    f"expected a parameter object (with 'type' and 'value') or a group, got {kind_of(child)}",
                    child,
                )
            )
            continue
        if "type" in child and not isinstance(child["type"], dict):
            collect_parameter(child, here, ".".join([*prefix, key]), out, problems)
        elif not child:
            problems.append(problem_at(here, "empty group", child))
        elif "value" in child:
            problems.append(problem_at((*here, "type"), f"missing; expected one of {', '.join(PARAM_TYPES)}", child))
        else:
            collect(child, here, [*prefix, key], out, problems)


def resolve_name(parameters: Mapping[str, Parameter], name: str, where: str = "") -> Parameter:
    """:meth:`Manifest.resolve` on a parameter table (``where`` ends the unknown-name message)."""
    if not isinstance(name, str) or not name:
        raise ParameterError("unknown_param", f"parameter names are strings, got {kind_of(name)}", name=str(name))
    key = name.removeprefix("data.")
    if key in parameters:
        return parameters[key]
    candidates = [p for p in parameters.values() if p.name == key]
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        paths = ", ".join(p.path for p in candidates)
        raise ParameterError(
            "unknown_param", f"'{name}' is ambiguous: it names {paths}", name=name, hint=f"use one of {paths}"
        )
    suggestions = suggest(parameters, key)
    known = ", ".join(parameters)
    hint = f"did you mean {' or '.join(suggestions)}?" if suggestions else f"known parameters: {known}"
    raise ParameterError("unknown_param", f"unknown parameter '{name}'{where}", name=name, hint=hint)


def suggest(parameters: Mapping[str, Parameter], name: str, n: int = 3) -> list[str]:
    by_leaf = {p.name: p.path for p in parameters.values()}
    options = list(parameters) + list(by_leaf)
    found = difflib.get_close_matches(name, options, n=n, cutoff=0.6)
    if not found:
        found = [o for o in options if name.lower() in o.lower()][:n]
    out: list[str] = []
    for f in found:
        path = by_leaf.get(f, f) if f not in parameters else f
        if path not in out:
            out.append(path)
    return out


def observables_by_name(raw: Any) -> Any:
    """``observables`` as ``{name: {"name": name, ...}}``, whether given as a list or an object."""
    return by_name(raw, "observables")


def by_name(raw: Any, field: str) -> Any:
    """``raw[field]`` as ``{name: {"name": name, ...}}``, whether given as a list or an object."""
    if isinstance(raw, dict) and isinstance(raw.get(field), list):
        raw = dict(raw)
        entries = {}
        for i, entry in enumerate(raw[field]):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ValueError(f"{field}[{i}] must be an object with a 'name' string")
            entries[entry["name"]] = entry
        raw[field] = entries
    if isinstance(raw, dict) and isinstance(raw.get(field), dict):
        raw = dict(raw)
        raw[field] = {
            k: ({"name": k, **v} if isinstance(v, dict) and "name" not in v else v) for k, v in raw[field].items()
        }
    return raw

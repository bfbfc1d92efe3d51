"""The target manifest: config, schema and documentation in one JSON file.

The reference format loads unchanged::

    {"id": "preset-01", "type": "apply",
     "data": {"settings": {"speed": {"type": "number", "unit": "m/s", "value": 8.0}}}}

Parameters live in groups under ``data`` (groups may nest). A node is a parameter when it has a
``type`` whose value is a string; any other object is a group. Parameters are addressed by dotted
path (``settings.speed``) or, when unique, by leaf name (``speed``).

A *bound* manifest (:attr:`Manifest.bound`) steers a page that knows nothing of splitbrain: each
parameter says where its value lives (``"bind": {"global": "sim.speed"}`` or
``{"selector": "#speed"}``), each observable where to read it (``"read": {"expr": "..."}``), and the
registry generates the glue (``_bindings.py``, ``js/page/bindings.js``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    StrictBool,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails

from ._binding_model import ReadyCondition, Setup, SetupScript
from ._collect import (
    bound_by,
    by_name,
    check_bindings,
    collect,
    observables_by_name,
    resolve_depends_on,
    resolve_name,
    suggest,
)
from ._constraints import MAX_CONSTRAINTS, Constraint, Rule, first_broken, parse_rule
from ._errors import ManifestError, ParameterError, detail, format_errors, kind_of, problem_at
from ._parameter import Action, Observable, Parameter

# -- bindings: where a bound page keeps its values ---------------------------------------------


"""A dotted path of JS identifiers into the page's global scope (``window`` properties and top-level ``let``)."""


class Manifest(BaseModel):
    """A target's manifest. Build one with :meth:`from_dict`, :meth:`from_file` or :meth:`from_json`.

    Every pydantic entry point (``Manifest(**raw)``, ``model_validate``, ``model_validate_json``)
    builds the same manifest, ``parameters`` included, or raises a ``ValidationError`` whose
    locations name the failing fields (``data.settings.speed.type``). ``from_dict`` and friends
    raise :class:`ManifestError` instead, with the source file in front of every problem.
    ``parameters`` is derived from ``data`` and cannot be passed in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    type: Literal["apply"] = "apply"
    title: str | None = None
    description: str | None = None
    data: dict[str, Any]
    observables: dict[str, Observable] = Field(default_factory=dict)
    actions: dict[str, Action] = Field(default_factory=dict)
    csp: str | None = None
    ready: ReadyCondition | None = None
    setup: Setup | None = None
    kit: StrictBool = False
    constraints: Annotated[tuple[Constraint, ...], Field(max_length=MAX_CONSTRAINTS)] = ()
    parameters: dict[str, Parameter] = Field(default_factory=dict, exclude=True)
    _rules: tuple[Rule, ...] = PrivateAttr(default=())

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The constraints, parsed against the parameters (checked before a change is sent)."""
        return self._rules

    @property
    def setup_script(self) -> SetupScript | None:
        """The ``setup`` as a script and when it runs (a plain string runs before the page's scripts)."""
        return SetupScript(script=self.setup) if isinstance(self.setup, str) else self.setup

    def broken_rule(self, values: Mapping[str, Any]) -> Rule | None:
        """The first constraint that ``values`` (every parameter, by dotted path) break, or None."""
        return first_broken(self._rules, values)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, raw: Any) -> Any:
        """Observables and actions by name, and without an editor's ``$schema`` key."""
        if isinstance(raw, dict) and isinstance(raw.get("$schema"), str):  # for editors (docs/manifest.schema.json)
            raw = {k: v for k, v in raw.items() if k != "$schema"}
        return by_name(observables_by_name(raw), "actions")

    @property
    def bound(self) -> bool:
        """Whether the page is steered through bindings (the registry generates its handlers).

        True when any parameter has ``bind``, any observable ``read``, or ``ready`` / ``setup`` is given.
        """
        bound_params = (p for p, param in self.parameters.items() if param.bind is not None)
        read_observables = (name for name, o in self.observables.items() if o.read is not None)
        return bound_by(bound_params, read_observables, self.ready, self.setup) is not None

    # -- construction -------------------------------------------------------------------------

    @model_validator(mode="wrap")
    @classmethod
    def _build_parameters(cls, raw: Any, handler: ModelWrapValidatorHandler[Manifest]) -> Manifest:
        """Collect ``parameters`` from ``data`` on every entry point, reporting all problems at once."""
        if not isinstance(raw, dict):
            return handler(raw)  # an existing Manifest, or a type error pydantic reports itself
        problems: list[InitErrorDetails] = []
        params: dict[str, Parameter] = {}
        if "parameters" in raw:
            problems.append(
                problem_at(("parameters",), "unknown field; parameters are declared under 'data'", raw["parameters"])
            )
            raw = {k: v for k, v in raw.items() if k != "parameters"}
        data = raw.get("data")
        if isinstance(data, dict):
            collect(data, ("data",), [], params, problems)
            if not data:
                problems.append(problem_at(("data",), "expected at least one parameter group", data))
        raw = resolve_depends_on(raw, params, problems, complete=isinstance(data, dict) and bool(data))
        check_bindings(raw, params, problems)
        try:
            manifest = handler(raw)
        except ValidationError as exc:
            if not problems:
                raise
            errors: list[InitErrorDetails] = [
                InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
                for e in exc.errors()
            ]
            raise ValidationError.from_exception_data(cls.__name__, [*errors, *problems]) from None
        rules = _parse_rules(manifest.constraints, params, problems)
        _check_steps(manifest, params, problems)
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        object.__setattr__(manifest, "parameters", params)
        manifest._rules = rules
        return manifest

    @classmethod
    def from_dict(cls, raw: Any, *, source: str = "") -> Manifest:
        """Validate a decoded manifest; raise :class:`ManifestError` naming every failing field."""
        if not isinstance(raw, dict):
            raise ManifestError(source, [f"(top level): expected a JSON object, got {kind_of(raw)}"])
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ManifestError(source, format_errors(exc)) from None

    @classmethod
    def from_json(cls, text: str, *, source: str = "") -> Manifest:
        """Parse and validate manifest JSON text."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(source, [f"line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"]) from None
        return cls.from_dict(raw, source=source)

    @classmethod
    def from_file(cls, path: str | Path) -> Manifest:
        """Load a manifest file; errors name the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(str(path), [f"cannot read: {exc}"]) from None
        return cls.from_json(text, source=str(path))

    # -- lookups ------------------------------------------------------------------------------

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default value, by dotted path."""
        return {path: p.value for path, p in self.parameters.items()}

    def resolve(self, name: str) -> Parameter:
        """Find a parameter by dotted path (with or without ``data.``) or unique leaf name."""
        return resolve_name(self.parameters, name, f" in target {self.id}")

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """The closest real parameter paths to ``name``."""
        return suggest(self.parameters, name, n)

    def varies(self, observable: str) -> tuple[str, ...]:
        """The parameters that move ``observable`` (dotted paths, most influential first); ``()`` when none.

        Raises ``KeyError`` for an observable the manifest does not declare.
        """
        if observable not in self.observables:
            known = ", ".join(self.observables) or "none"
            raise KeyError(f"unknown observable '{observable}' in target {self.id} (observables: {known})")
        return self.observables[observable].depends_on

    def names(self) -> str:
        """All parameter paths, comma separated."""
        return ", ".join(self.parameters)

    def coerce(self, name: str, value: Any) -> Any:
        """Return ``value`` validated for parameter ``name``, or raise :class:`ParameterError`."""
        return self.resolve(name).coerce(value)

    def coerce_many(self, values: Mapping[str, Any], *, allow_readonly: bool = False) -> dict[str, Any]:
        """Validate several values; keys come back as dotted paths. Fails on the first bad one."""
        out: dict[str, Any] = {}
        for name, value in values.items():
            param = self.resolve(name)
            out[param.path] = param.check_value(value) if allow_readonly else param.coerce(value)
        return out


def _parse_rules(
    constraints: tuple[Constraint, ...], params: dict[str, Parameter], problems: list[InitErrorDetails]
) -> tuple[Rule, ...]:
    rules = []
    for i, constraint in enumerate(constraints):
        try:
            rules.append(parse_rule(constraint, lambda name: resolve_name(params, name, "").path))
        except ValueError as exc:
            message = detail(exc) if isinstance(exc, ParameterError) else str(exc)
            problems.append(problem_at(("constraints", i, "expr"), message, constraint.expr))
    return tuple(rules)


def _check_steps(manifest: Manifest, params: dict[str, Parameter], problems: list[InitErrorDetails]) -> None:
    """An action's ``set`` steps name parameters, with values they take."""
    for name, action in manifest.actions.items():
        many = isinstance(action.bind, tuple)
        for i, step in enumerate(action.steps):
            for key, value in (step.set or {}).items():
                where = ("actions", name, "bind", *((i,) if many else ()), "set", key)
                try:
                    resolve_name(params, key, "").coerce(value)
                except ValueError as exc:
                    message = detail(exc) if isinstance(exc, ParameterError) else str(exc)
                    problems.append(problem_at(where, message, value))


# -- observables and actions ------------------------------------------------------------------


# -- value coercion ---------------------------------------------------------------------------


# -- walking the data tree ---------------------------------------------------------------------

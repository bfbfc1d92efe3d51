"""The manifest contract: the reference format, malformed manifests, bad values."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import ValidationError

from splitbrain_widget import Manifest, ManifestError, ParameterError, list_targets, load_target

REFERENCE = {
    "id": "preset-01",
    "type": "apply",
    "data": {
        "settings": {
            "speed": {"type": "number", "unit": "m/s", "value": 8.0},
            "mode": {"type": "string", "value": "auto"},
        },
        "display": {"show_vectors": {"type": "boolean", "value": True}},
        "view": {"position": {"type": "array", "length": 3, "unit": "world units", "value": [0, 12, 12]}},
    },
}

RICH = {
    "id": "rich",
    "title": "Rich",
    "description": "every optional field",
    "data": {
        "physics": {
            "gravity": {"type": "number", "unit": "m/s^2", "value": 9.81, "min": 0, "max": 30, "step": 0.1},
            "steps": {"type": "integer", "value": 10, "min": 1, "max": 100},
            "method": {"type": "string", "value": "rk4", "enum": ["euler", "rk4"]},
            "version": {"type": "string", "value": "1.0", "readonly": True},
        },
        "display": {"speed": {"type": "number", "value": 1.0, "description": "playback rate"}},
        "settings": {"speed": {"type": "number", "unit": "m/s", "value": 8.0}},
        "view": {
            "position": {"type": "array", "length": 3, "value": [0, 12, 12], "min": -100, "max": 100},
            "flags": {"type": "array", "items": "boolean", "value": [True, False]},
        },
    },
    "observables": {"range": {"unit": "m", "description": "horizontal distance"}},
}


def test_the_reference_manifest_loads_unchanged() -> None:
    m = Manifest.from_dict(copy.deepcopy(REFERENCE))
    assert list(m.parameters) == ["settings.speed", "settings.mode", "display.show_vectors", "view.position"]
    assert m.defaults() == {
        "settings.speed": 8.0,
        "settings.mode": "auto",
        "display.show_vectors": True,
        "view.position": [0, 12, 12],
    }
    assert m.parameters["settings.speed"].unit == "m/s"
    assert m.parameters["view.position"].length == 3


def test_optional_fields_and_observables_load() -> None:
    m = Manifest.from_dict(RICH)
    assert m.title == "Rich"
    assert m.parameters["physics.gravity"].step == 0.1
    assert m.parameters["physics.version"].readonly
    assert m.observables["range"].unit == "m"
    assert m.parameters["view.flags"].item_type == "boolean"


def test_observables_may_be_a_list() -> None:
    raw = {**REFERENCE, "observables": [{"name": "range", "unit": "m"}]}
    assert Manifest.from_dict(raw).observables["range"].unit == "m"


def test_leaf_names_and_dotted_paths_both_address_a_parameter() -> None:
    m = Manifest.from_dict(REFERENCE)
    assert m.coerce("speed", 12) == 12
    assert m.coerce("settings.speed", 12) == 12
    assert m.coerce("data.settings.speed", 12) == 12


def test_an_ambiguous_leaf_lists_the_candidate_paths() -> None:
    m = Manifest.from_dict(RICH)
    with pytest.raises(ParameterError) as info:
        m.coerce("speed", 1)
    assert info.value.code == "unknown_param"
    assert "display.speed" in str(info.value) and "settings.speed" in str(info.value)


def test_unknown_names_get_suggestions_from_the_schema() -> None:
    m = Manifest.from_dict(RICH)
    with pytest.raises(ParameterError) as info:
        m.coerce("gravty", 1)
    assert info.value.code == "unknown_param"
    assert info.value.hint == "did you mean physics.gravity?"


def test_integers_stay_integers_and_wrapped_values_are_unwrapped() -> None:
    m = Manifest.from_dict(RICH)
    assert m.coerce("steps", 12.0) == 12 and isinstance(m.coerce("steps", 12.0), int)
    assert isinstance(m.coerce("gravity", 9), int)
    assert m.coerce("gravity", {"value": 3.5}) == 3.5
    assert m.coerce("position", [{"value": 1}, 2, 3]) == [1, 2, 3]
    assert m.coerce("method", "euler") == "euler"
    assert Manifest.from_dict(REFERENCE).coerce("show_vectors", "false") is False


def test_numeric_strings_from_models_are_accepted() -> None:
    m = Manifest.from_dict(RICH)
    assert m.coerce("gravity", "3.5") == 3.5
    assert m.coerce("steps", "7") == 7


# -- malformed manifests: (manifest, text the error must contain) ---------------------------


def _with(path: str, value: Any, base: dict[str, Any] = REFERENCE) -> dict[str, Any]:
    raw = copy.deepcopy(base)
    node = raw
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return raw


_DELETE = object()

# A manifest for depends_on: four parameters a goal may vary, and four it may not.
DEPENDS: dict[str, Any] = {
    "id": "deps",
    "data": {
        "launch": {
            "speed": {"type": "number", "unit": "m/s", "value": 20},
            "angle": {"type": "number", "unit": "deg", "value": 45},
            "shots": {"type": "integer", "value": 1},
            "mode": {"type": "string", "value": "auto"},
            "aim": {"type": "array", "length": 2, "value": [0, 0]},
            "armed": {"type": "boolean", "value": True},
            "version": {"type": "number", "value": 1, "readonly": True},
        },
        "display": {"speed": {"type": "number", "value": 1}},
    },
    "observables": {"range": {"unit": "m", "depends_on": ["launch.speed", "angle"]}, "t": {"unit": "s"}},
}
VARIABLE = (
    "expected a number, integer or boolean parameter, or a string with an enum: "
    "one of launch.speed, launch.angle, launch.shots, launch.armed, display.speed"
)
_DEPS = "observables.range.depends_on"

MALFORMED_DEPENDS = [
    (
        _with(_DEPS, ["launch.speed", "angel"], DEPENDS),
        f"{_DEPS}.1: unknown parameter 'angel' (did you mean launch.angle?); {VARIABLE}",
    ),
    (_with(_DEPS, ["nope"], DEPENDS), f"{_DEPS}.0: unknown parameter 'nope'; {VARIABLE}"),
    (
        _with(_DEPS, ["speed"], DEPENDS),
        f"{_DEPS}.0: 'speed' is ambiguous: it names launch.speed, display.speed; {VARIABLE}",
    ),
    (_with(_DEPS, ["mode"], DEPENDS), f"{_DEPS}.0: launch.mode is a string parameter without an enum; {VARIABLE}"),
    (_with(_DEPS, ["launch.aim"], DEPENDS), f"{_DEPS}.0: launch.aim is an array parameter; {VARIABLE}"),
    (_with(_DEPS, ["version"], DEPENDS), f"{_DEPS}.0: launch.version is read-only; {VARIABLE}"),
    (
        _with(_DEPS, ["angle", "launch.speed", "data.launch.angle"], DEPENDS),
        f"{_DEPS}.2: repeats launch.angle (also depends_on.0); list each parameter once",
    ),
    (_with(_DEPS, [""], DEPENDS), f"{_DEPS}.0: empty name; {VARIABLE}"),
    (_with(_DEPS, "launch.speed", DEPENDS), f"{_DEPS}: Input should be a valid tuple"),
    (_with(_DEPS, [3], DEPENDS), f"{_DEPS}.0: Input should be a valid string"),
    (
        _with("observables", [{"name": "range", "depends_on": ["speed", "nope"]}], DEPENDS),
        f"{_DEPS}.1: unknown parameter 'nope'; {VARIABLE}",
    ),
]

MALFORMED = [
    (
        _with("data.settings.speed.type", "num"),
        "data.settings.speed.type: expected one of number, integer, boolean, string, array",
    ),
    (_with("data.settings.speed.value", _DELETE), "data.settings.speed.value: missing"),
    (_with("id", _DELETE), "id: missing"),
    (_with("id", ""), "id:"),
    (_with("id", "has space"), "id:"),
    (_with("type", "update"), "type: expected 'apply'"),
    (_with("data", _DELETE), "data: missing"),
    (_with("data", []), "data:"),
    (_with("data", {}), "data: expected at least one parameter group"),
    (_with("data.settings.speed", 8.0), "data.settings.speed: expected a parameter object"),
    (_with("data.settings.speed.mn", 3), "data.settings.speed.mn: unknown field"),
    (_with("data.settings.speed.max", -1), "data.settings.speed.value: default 8.0 is above the maximum -1 m/s"),
    (
        _with("data.settings.speed", {"type": "number", "value": 5, "min": 10, "max": 1}),
        "data.settings.speed: min (10) is greater than max (1)",
    ),
    (_with("data.settings.mode.enum", ["manual"]), 'data.settings.mode.value: default expected one of "manual"'),
    (_with("data.settings.mode.enum", []), "data.settings.mode.enum:"),
    (_with("data.settings.mode.enum", ["auto", 3]), "data.settings.mode.enum.1: expected a string"),
    (_with("data.settings.mode.min", 0), "'min' applies only to number"),
    (_with("data.view.position.value", [0, 12]), "data.view.position.value: default expected exactly 3 elements"),
    (_with("data.view.position.length", 0), "data.view.position.length:"),
    (
        _with("data.display.show_vectors.value", "yes"),
        "data.display.show_vectors.value: default expected true or false",
    ),
    (_with("data.settings.speed.value", "fast"), "data.settings.speed.value: default expected a number"),
    (_with("data.settings.speed.value", None), "data.settings.speed.value: the default value is required"),
    (_with("data.settings.speed.step", 0), "data.settings.speed.step:"),
    (_with("data.settings.speed.length", 3), "'length' and 'items' apply only to array"),
    (_with("data.settings.speed.readonly", "no"), "data.settings.speed.readonly:"),
    (
        {"id": "x", "data": {"settings": {"a.b": {"type": "number", "value": 1}}}},
        "data.settings.a.b: expected letters, digits and '_', not starting with a digit, got \"a.b\"",
    ),
    *(
        (
            {"id": "x", "data": {"settings": {name: {"type": "number", "value": 1}}}},
            f'data.settings.{name}: "{name}" is a name every JavaScript object has already',
        )
        for name in ("__proto__", "constructor", "prototype", "hasOwnProperty", "__defineGetter__")
    ),
    (
        {"id": "x", "data": {"__proto__": {"a": {"type": "number", "value": 1}}}},
        'data.__proto__: "__proto__" is a name every JavaScript object has already',
    ),
    (
        {"id": "x", "data": {"s": {"a": {"type": "number", "value": 1}}}, "observables": {"constructor": {}}},
        'observables.constructor.name: "constructor" is a name every JavaScript object has already',
    ),
    (
        {"id": "x", "data": {"s": {"a": {"type": "number", "value": 1}}}, "actions": {"__proto__": {}}},
        'actions.__proto__.name: "__proto__" is a name every JavaScript object has already',
    ),
    (
        {"id": "x", "data": {"s": {"speed-ms": {"type": "number", "value": 1}}}},
        "data.s.speed-ms: expected letters, digits and '_'",
    ),
    (_with("data.settings.empty", {}), "data.settings.empty: empty group"),
    (_with("data.settings.novalue", {"value": 3}), "data.settings.novalue.type: missing"),
    (_with("observables", {"range": {"unit": 3}}), "observables.range.unit:"),
    (_with("observables", [{"unit": "m"}]), "observables[0] must be an object with a 'name'"),
    (_with("extra", True), "extra: unknown field"),
    *MALFORMED_DEPENDS,
]


@pytest.mark.parametrize(("raw", "expected"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_malformed_manifests_name_the_file_and_field(raw: dict[str, Any], expected: str) -> None:
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(raw, source="foo.json")
    assert str(info.value).startswith("foo.json: ")
    assert expected in str(info.value)


def test_invalid_json_names_the_line(tmp_path: Any) -> None:
    path = tmp_path / "foo.json"
    path.write_text('{"id": "x",\n "data": }')
    with pytest.raises(ManifestError) as info:
        Manifest.from_file(path)
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_not_an_object_at_top_level() -> None:
    with pytest.raises(ManifestError, match="expected a JSON object"):
        Manifest.from_dict([1, 2], source="foo.json")


def test_every_problem_is_reported_at_once() -> None:
    raw = _with("data.settings.mode.type", "text", _with("data.settings.speed.type", "num"))
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(raw, source="foo.json")
    assert len(info.value.problems) == 2


# -- depends_on: the parameters that move an observable ------------------------------------


def test_depends_on_round_trips_as_dotted_paths() -> None:
    raw = _with(_DEPS, ["launch.speed", "angle", "data.launch.shots", "display.speed"], DEPENDS)
    m = Manifest.from_dict(raw, source="deps.json")
    assert m.varies("range") == ("launch.speed", "launch.angle", "launch.shots", "display.speed")
    assert m.observables["range"].depends_on == m.varies("range")  # a tuple: the model is frozen
    assert m.varies("t") == () and m.observables["t"].depends_on == ()
    dumped = m.model_dump()["observables"]
    assert dumped["range"]["depends_on"] == ["launch.speed", "launch.angle", "launch.shots", "display.speed"]
    assert "depends_on" not in dumped["t"]  # empty: left out
    assert Manifest.model_validate(m.model_dump()) == m
    assert Manifest.model_validate_json(m.model_dump_json()) == m
    assert json.loads(m.model_dump_json())["observables"]["range"]["depends_on"][1] == "launch.angle"


def test_the_widget_trait_dump_of_observables_has_a_list_and_no_empty_depends_on() -> None:
    m = Manifest.from_dict(DEPENDS)
    dumped = {k: o.model_dump(exclude_none=True) for k, o in m.observables.items()}  # as TargetWidget does
    assert dumped == {
        "range": {"name": "range", "unit": "m", "depends_on": ["launch.speed", "launch.angle"]},
        "t": {"name": "t", "unit": "s"},
    }
    assert Manifest.from_dict(RICH).observables["range"].model_dump(mode="json", exclude_none=True) == {
        "name": "range",
        "unit": "m",
        "description": "horizontal distance",
    }


def test_depends_on_in_a_list_of_observables_is_resolved_too() -> None:
    raw = _with("observables", [{"name": "range", "depends_on": ["angle", "launch.speed"]}], DEPENDS)
    assert Manifest.from_dict(raw).varies("range") == ("launch.angle", "launch.speed")


def test_varies_refuses_an_unknown_observable() -> None:
    with pytest.raises(KeyError, match="unknown observable 'rnage' in target deps"):
        Manifest.from_dict(DEPENDS).varies("rnage")


def test_a_bad_depends_on_lists_what_it_may_name() -> None:
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(_with(_DEPS, ["mode"], DEPENDS), source="deps.json")
    assert info.value.problems == [f"{_DEPS}.0: launch.mode is a string parameter without an enum; {VARIABLE}"]
    assert str(info.value) == f"deps.json: {info.value.problems[0]}"
    bare = {"id": "x", "data": {"s": {"on": {"type": "string", "value": "a"}}}, "observables": {"o": {}}}
    with pytest.raises(ManifestError, match="this manifest has none that can be set"):
        Manifest.from_dict(_with("observables.o.depends_on", ["on"], bare))
    # a boolean, and a string with an enum, are varied value by value
    choices = {"type": "string", "value": "a", "enum": ["a", "b"]}
    both = _with("data.s.mode", choices, _with("data.s.on", {"type": "boolean", "value": True}, bare))
    assert Manifest.from_dict(_with("observables.o.depends_on", ["on", "mode"], both)).varies("o") == ("s.on", "s.mode")


def test_depends_on_problems_are_reported_with_all_the_others() -> None:
    raw = _with(_DEPS, ["mode", "mode", "speed"], _with("data.launch.angle.type", "num", _with("id", _DELETE, DEPENDS)))
    raw["observables"]["range"]["depends_on"].append("angle")  # names the broken parameter: not reported again
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(raw, source="deps.json")
    fields = [p.split(":", 1)[0] for p in info.value.problems]
    assert fields == ["id", "data.launch.angle.type", f"{_DEPS}.0", f"{_DEPS}.1", f"{_DEPS}.2"]
    assert "repeats" not in info.value.problems[3]  # a refused entry is not counted as seen
    with pytest.raises(ValidationError) as pydantic_error:
        Manifest.model_validate(raw)
    assert len(pydantic_error.value.errors()) == 5


def test_the_builtin_targets_declare_valid_depends_on() -> None:
    varied: dict[str, dict[str, tuple[str, ...]]] = {}
    for target_id in list_targets().ids():
        manifest = load_target(target_id).manifest
        varied[target_id] = {name: manifest.varies(name) for name in manifest.observables}
        for paths in varied[target_id].values():
            assert all(manifest.parameters[p].type in ("number", "integer") for p in paths), (target_id, paths)
    assert list_targets().problems == []
    assert varied["projectile"]["range"][0] == "launch.speed"
    assert set(varied["projectile"]["range"]) == {
        "launch.speed",
        "launch.angle",
        "launch.height",
        "environment.drag",
        "environment.gravity",
    }
    assert varied["pendulum"]["period"][:3] == ("pendulum.length", "pendulum.amplitude", "environment.gravity")
    for target_id, instant in [("projectile", "t"), ("projectile", "x"), ("pendulum", "angle"), ("bouncer", "x")]:
        assert varied[target_id][instant] == (), (target_id, instant)
    goals = {"projectile", "pendulum", "orbits", "waves", "boids", "bouncer"}
    assert {t for t, by_name in varied.items() if any(by_name.values())} >= goals


# -- bad values: (name, value, code, text the message must contain) -------------------------

BAD_VALUES = [
    ("gravity", "fast", "invalid_value", 'expected a number in m/s^2, got "fast"'),
    ("gravity", float("nan"), "invalid_value", "expected a finite number, got NaN"),
    ("gravity", float("inf"), "invalid_value", "got Infinity"),
    ("gravity", -float("inf"), "invalid_value", "got -Infinity"),
    ("gravity", -1, "invalid_value", "-1 is below the minimum 0 m/s^2"),
    ("gravity", 31, "invalid_value", "31 is above the maximum 30 m/s^2"),
    ("gravity", True, "invalid_value", "got a boolean"),
    ("gravity", None, "invalid_value", "got null"),
    ("gravity", [1], "invalid_value", "got [1]"),
    ("gravity", {"val": 1}, "invalid_value", 'got {"val": 1}'),
    ("gravity", "nan", "invalid_value", "expected a finite number"),
    ("steps", 2.5, "invalid_value", "expected an integer, got 2.5"),
    ("steps", 0, "invalid_value", "0 is below the minimum 1"),
    ("steps", 101, "invalid_value", "101 is above the maximum 100"),
    ("steps", "ten", "invalid_value", 'got "ten"'),
    ("steps", "2.5", "invalid_value", "expected an integer"),
    ("method", "rk5", "invalid_value", 'expected one of "euler", "rk4", got "rk5"'),
    ("method", 4, "invalid_value", "expected a string, got 4"),
    ("method", "x" * 20000, "invalid_value", "expected at most 10000 characters"),
    ("version", "2.0", "readonly", "physics.version is read-only"),
    ("position", [1, 2], "invalid_value", "expected exactly 3 elements, got 2"),
    ("position", [1, 2, 3, 4], "invalid_value", "expected exactly 3 elements, got 4"),
    ("position", "1,2,3", "invalid_value", "expected array of 3 numbers"),
    ("position", 5, "invalid_value", "expected array of 3 numbers"),
    ("position", [1, "a", 3], "invalid_value", 'element 1: expected a number, got "a"'),
    ("position", [1, 2, float("nan")], "invalid_value", "element 2: expected a finite number"),
    ("position", [1, 2, 500], "invalid_value", "element 2: 500 is above the maximum 100"),
    ("position", [1, True, 3], "invalid_value", "element 1: expected a number, got a boolean"),
    ("flags", [True, "maybe"], "invalid_value", 'element 1: expected true or false, got "maybe"'),
    ("flags", list(range(20000)), "invalid_value", "expected at most 10000 elements"),
    ("gravty", 1, "unknown_param", "unknown parameter 'gravty'"),
    ("", 1, "unknown_param", "parameter names are strings"),
    ("speed", 1, "unknown_param", "'speed' is ambiguous"),
    ("physics.nope", 1, "unknown_param", "unknown parameter 'physics.nope'"),
]


@pytest.mark.parametrize(
    ("name", "value", "code", "expected"), BAD_VALUES, ids=[f"{b[0]}-{b[3][:30]}" for b in BAD_VALUES]
)
def test_bad_values_get_a_clear_error(name: str, value: Any, code: str, expected: str) -> None:
    m = Manifest.from_dict(RICH)
    with pytest.raises(ParameterError) as info:
        m.coerce(name, value)
    assert info.value.code == code
    assert expected in str(info.value)
    if code == "invalid_value":
        assert info.value.name in str(info.value)  # the message names the parameter


def test_a_bad_value_in_a_batch_changes_nothing() -> None:
    m = Manifest.from_dict(RICH)
    with pytest.raises(ParameterError):
        m.coerce_many({"gravity": 3, "steps": -1})
    assert m.defaults()["physics.gravity"] == 9.81


def test_parameter_error_is_a_value_error() -> None:
    assert issubclass(ParameterError, ValueError)


def test_manifest_loads_from_json_text_and_describes_parameters() -> None:
    m = Manifest.from_json(json.dumps(RICH), source="rich.json")
    assert m.parameters["physics.gravity"].describe() == "number in m/s^2 from 0 to 30"


# -- every pydantic entry point builds the same manifest as from_dict ------------------------

ENTRY_POINTS = {
    "model_validate": lambda raw: Manifest.model_validate(copy.deepcopy(raw)),
    "model_validate_json": lambda raw: Manifest.model_validate_json(json.dumps(raw)),
    "constructor": lambda raw: Manifest(**copy.deepcopy(raw)),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("raw", [REFERENCE, RICH], ids=["reference", "rich"])
def test_every_pydantic_entry_point_builds_the_parameters(entry: str, raw: dict[str, Any]) -> None:
    expected = Manifest.from_dict(copy.deepcopy(raw))
    m = ENTRY_POINTS[entry](raw)
    assert len(m.parameters) >= 4
    assert list(m.parameters) == list(expected.parameters)
    assert m.parameters == expected.parameters
    assert [p.path for p in m.parameters.values()] == list(expected.parameters)  # paths are set too
    assert m.defaults() == expected.defaults()
    assert m.resolve("position").path == "view.position"
    assert m == expected


def test_a_dumped_manifest_validates_back_to_the_same_manifest() -> None:
    m = Manifest.from_dict(RICH)
    assert "parameters" not in m.model_dump()
    again = Manifest.model_validate(m.model_dump())
    assert again == m and list(again.parameters) == list(m.parameters)
    assert Manifest.model_validate(m).parameters == m.parameters


def _field(expected: str) -> str | None:
    """The field a MALFORMED message names (``data.settings.speed.type: ...`` -> that path)."""
    head, sep, _ = expected.partition(":")
    return head if sep and " " not in head and "[" not in head and "'" not in head else None


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize(("raw", "expected"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_every_pydantic_entry_point_refuses_a_malformed_manifest_naming_the_field(
    entry: str, raw: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as info:
        ENTRY_POINTS[entry](raw)
    locations = [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]
    field = _field(expected)
    if field is not None:
        assert field in locations, (field, locations)
    else:  # a message without a leading field: its text is in the error
        assert expected in str(info.value)
    # The same problems, in the same words, as the file loader reports.
    with pytest.raises(ManifestError) as loaded:
        Manifest.from_dict(copy.deepcopy(raw))
    assert len(info.value.errors()) == len(loaded.value.problems)


def test_a_pydantic_entry_point_reports_every_problem_at_once() -> None:
    raw = _with("data.settings.mode.type", "text", _with("data.settings.speed.type", "num", _with("id", _DELETE)))
    with pytest.raises(ValidationError) as info:
        Manifest.model_validate(raw)
    by_field = {".".join(str(p) for p in e["loc"]): e["msg"] for e in info.value.errors()}
    assert set(by_field) == {"id", "data.settings.speed.type", "data.settings.mode.type"}
    assert by_field["data.settings.speed.type"] == (
        'expected one of number, integer, boolean, string, array, got "num"'
    )
    with pytest.raises(ManifestError) as loaded:
        Manifest.from_dict(raw, source="foo.json")
    assert loaded.value.problems == [
        "id: missing; this field is required",
        'data.settings.speed.type: expected one of number, integer, boolean, string, array, got "num"',
        'data.settings.mode.type: expected one of number, integer, boolean, string, array, got "text"',
    ]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_derived_fields_cannot_be_passed_in(entry: str) -> None:
    smuggled = Manifest.from_dict(RICH).parameters
    with pytest.raises(ValidationError) as info:
        ENTRY_POINTS[entry]({**REFERENCE, "parameters": {"x": smuggled["physics.gravity"].model_dump()}})
    assert [e["loc"] for e in info.value.errors()] == [("parameters",)]
    with pytest.raises(ManifestError, match=r"^foo\.json: parameters: unknown field"):
        Manifest.from_dict({**REFERENCE, "parameters": {}}, source="foo.json")
    with pytest.raises(ValidationError) as info:
        ENTRY_POINTS[entry](_with("data.settings.speed.path", "display.speed"))
    assert [e["loc"] for e in info.value.errors()] == [("data", "settings", "speed", "path")]


@pytest.mark.parametrize("bad", [0, -1, 3601, "10", True])
def test_settles_in_is_a_positive_number_of_seconds(bad: Any) -> None:
    assert Manifest.from_dict(_with("observables.range.settles_in", 10, DEPENDS)).observables["range"].settles_in == 10
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(_with("observables.range.settles_in", bad, DEPENDS), source="settle.json")
    assert "settle.json" in str(info.value) and "observables.range.settles_in" in str(info.value)

"""The manifest's JSON Schema (docs/manifest.schema.json), made from the model: up to date, valid, and
in agreement with the loader on every manifest in the repository and on shapes the loader refuses."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from splitbrain_widget.manifest import Manifest, ManifestError
from splitbrain_widget.manifest._schema import schema_text

ROOT = Path(__file__).parents[1]
SCHEMA_FILE = ROOT / "docs" / "manifest.schema.json"


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def manifests() -> list[Path]:
    found = [*ROOT.glob("targets/*.json"), *ROOT.glob("examples/**/*.json"), *ROOT.glob("tests/fixtures/**/*.json")]
    return sorted(p for p in found if isinstance(raw := json.loads(p.read_text()), dict) and "data" in raw)


def test_the_committed_schema_is_the_one_the_model_makes() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), (
        "regenerate: python -m splitbrain_widget schema > docs/manifest.schema.json"
    )
    printed = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "schema"], capture_output=True, text=True, check=True
    )
    assert printed.stdout == schema_text()


@pytest.mark.parametrize("path", manifests(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_manifest_here_passes_the_schema_as_it_passes_the_loader(path: Path) -> None:
    raw = json.loads(path.read_text())
    errors = [e.message for e in validator().iter_errors(raw)]
    try:
        Manifest.from_dict(raw, source=str(path))
    except ManifestError:
        assert errors, f"{path}: the loader refuses it, the schema does not"
    else:
        assert not errors, f"{path}: {errors[:3]}"


BASE: dict[str, Any] = {
    "id": "t",
    "data": {"launch": {"angle": {"type": "number", "unit": "deg", "value": 45, "min": 0, "max": 90}}},
    "observables": {"range": {"unit": "m"}},
    "actions": [{"name": "run"}],
}


def changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return raw


BAD = {
    "aliases not a list": (("data", "launch", "angle", "aliases"), "tilt"),
    "named values not an object": (("data", "launch", "angle", "named"), ["steep"]),
    "an unknown parameter field": (("data", "launch", "angle", "colour"), "red"),
    "a parameter type unknown": (("data", "launch", "angle", "type"), "float"),
    "a group name with a space": (("data", "launch two"), {"x": {"type": "number", "value": 1}}),
    "an empty group": (("data", "empty"), {}),
    "an unknown top-level field": (("colour",), "red"),
    "an observable alias not text": (("observables", "range", "aliases"), [3]),
    "an action listed without a name": (("actions",), [{"label": "Run"}]),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_shapes_the_loader_refuses_the_schema_refuses(case: str) -> None:
    raw = changed(*BAD[case])
    with pytest.raises(ManifestError):
        Manifest.from_dict(raw)
    assert list(validator().iter_errors(raw)), case


def test_a_manifest_may_name_its_schema_for_editors() -> None:
    raw = {"$schema": "../docs/manifest.schema.json", **BASE}
    assert not list(validator().iter_errors(raw))
    assert Manifest.from_dict(raw).parameters["launch.angle"].unit == "deg"
    assert not list(validator().iter_errors(BASE))

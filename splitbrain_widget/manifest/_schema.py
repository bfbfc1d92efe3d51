"""The manifest contract as a JSON Schema (draft 2020-12), for editors and other tools.

Made from the :class:`~splitbrain_widget.manifest.Manifest` model, so the two cannot drift apart,
with what the model checks in code spelled out: ``data`` is a tree of groups whose leaves are
parameters (an entry with a ``type`` that is not an object is a parameter, anything else a group),
names follow :data:`NAME_PATTERN`, and ``parameters`` / ``path`` (derived) are left out. The schema
checks shape; the loader checks more (units, ranges against defaults, ``depends_on`` names, bindings'
selectors), so a manifest that passes the schema can still be refused at load, naming the field.
Committed as ``docs/manifest.schema.json`` (``python -m splitbrain_widget schema`` prints it).
"""

from __future__ import annotations

import json
from typing import Any

from ._model import Manifest
from ._names import NAME_PATTERN


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema of a target's manifest."""
    schema = Manifest.model_json_schema()
    defs = schema["$defs"]
    defs["Parameter"]["properties"].pop("path", None)
    event = defs["ParameterBinding"]["properties"]["event"]["anyOf"]
    event.insert(1, event[0]["items"])  # one event alone, as well as a list of them
    props = schema["properties"]
    props.pop("parameters", None)
    props["$schema"] = {"type": "string", "description": "The schema this file follows (ignored at load)."}
    for field, model in (("observables", "Observable"), ("actions", "Action")):
        # by name ({name: {...}}, the name taken from the key) or as a list of entries naming themselves
        defs[model]["required"] = [r for r in defs[model].get("required", []) if r != "name"]
        entry = {"$ref": f"#/$defs/{model}"}
        props[field] = {
            "anyOf": [
                {"type": "object", "propertyNames": {"pattern": NAME_PATTERN}, "additionalProperties": entry},
                {"type": "array", "items": {**entry, "required": ["name"]}},
            ],
            "title": props[field]["title"],
        }
    defs["Group"] = {
        "type": "object",
        "description": "A group of parameters and groups, by name.",
        "minProperties": 1,
        "propertyNames": {"pattern": NAME_PATTERN},
        "additionalProperties": {
            "if": {"type": "object", "required": ["type"], "properties": {"type": {"not": {"type": "object"}}}},
            "then": {"$ref": "#/$defs/Parameter"},
            "else": {"$ref": "#/$defs/Group"},
        },
    }
    props["data"] = {"$ref": "#/$defs/Group", "description": "The parameters, in groups (at least one)."}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text() -> str:
    """:func:`manifest_schema` as the text of ``docs/manifest.schema.json``."""
    return json.dumps(manifest_schema(), indent=1, ensure_ascii=False) + "\n"

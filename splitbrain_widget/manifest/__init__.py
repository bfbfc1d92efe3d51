"""The manifest contract: the model of a target's manifest, its bindings and values, and finding and
loading targets (``registry``), with the page assembly that puts the policy and the target API in.

Layer 1: imports the protocol (``..protocol``, ``.._bounds``) and nothing else of the package.
"""

from ._model import (
    JS_PATH_PATTERN,
    NAME_PATTERN,
    PARAM_TYPES,
    Action,
    ActionBinding,
    Manifest,
    ManifestError,
    Observable,
    ObservableRead,
    Parameter,
    ParameterBinding,
    ParameterError,
    ReadyCondition,
    name_problem,
    unwrap,
)

__all__ = [
    "JS_PATH_PATTERN",
    "NAME_PATTERN",
    "PARAM_TYPES",
    "Action",
    "ActionBinding",
    "Manifest",
    "ManifestError",
    "Observable",
    "ObservableRead",
    "Parameter",
    "ParameterBinding",
    "ParameterError",
    "ReadyCondition",
    "name_problem",
    "unwrap",
]

"""The manifest contract: the model of a target's manifest, its bindings and values, and finding and
loading targets (``registry``), with the page assembly that puts the policy and the target API in.

Layer 1: imports the protocol (``..protocol``, ``.._bounds``) and nothing else of the package. Inside,
imports point one way: ``_errors`` < ``_names`` < ``_coerce`` < ``_binding_model`` < ``_parameter``
< ``_collect`` < ``_model`` (the :class:`Manifest`) < ``_page`` / ``_page_bindings`` < ``registry``.
The rest of the package imports the names below from here, not from the modules.
"""

from ._binding_model import ActionBinding, ObservableRead, ParameterBinding, ReadyCondition
from ._coerce import PARAM_TYPES, unwrap
from ._errors import ManifestError, ParameterError
from ._model import Manifest
from ._names import JS_PATH_PATTERN, NAME_PATTERN, name_problem
from ._parameter import Action, Observable, Parameter

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

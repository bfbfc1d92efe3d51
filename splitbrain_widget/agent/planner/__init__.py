"""The offline planner: plain-language requests to tool calls, driven by the manifest alone.

Part of the agent layer: imports the protocol, the manifest, the core and the features. Inside,
imports point one way: ``_context``, ``_spoken`` (numbers as people write them) and ``_lexicon``
(words, numbers, names) at the bottom, ``_format`` over them, then ``_goals``, ``_answers`` and
``_plan`` (the entry point).
"""

from ._answers import describe_calls, is_yes, summarise
from ._context import LABEL, Plan, PlannedCall, PlannerContext
from ._format import join_words
from ._plan import capabilities, plan

__all__ = [
    "LABEL",
    "Plan",
    "PlannedCall",
    "PlannerContext",
    "capabilities",
    "describe_calls",
    "is_yes",
    "join_words",
    "plan",
    "summarise",
]

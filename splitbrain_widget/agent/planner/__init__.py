"""The offline planner: plain-language requests to tool calls, driven by the manifest alone.

Part of the agent layer: imports the protocol, the manifest, the core and the features. Inside,
imports point one way: ``_context``, ``_spoken`` (numbers as people write them), ``_lexicon``
(words, numbers, names) and ``_vocabulary`` (what a manifest's own words say of each parameter) at
the bottom, ``_format`` over them, then ``_positions``, ``_counts`` and ``_running`` (readings that
name no parameter), ``_goals``, ``_clause``, ``_answers`` and ``_plan`` (the entry point).
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

"""The agent: split-brain tools on pydantic-ai, guards, and the offline planner.

Importing this package does not import pydantic-ai; creating an :class:`Agent` does.
Layer 5: imports the protocol, the manifest, the core, the hosts and the features; never the chat or
a face (the widget only in annotations). ``tests/test_layers.py`` checks it.
"""

from ._agent import Agent, AgentResult, Usage
from ._events import (
    AgentEvent,
    Done,
    Fallback,
    RetryWait,
    RunDeadline,
    TextDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
)
from ._loops import LoopLimits
from ._models import ModelSetupError
from ._schema import PAGE_DATA_NOTE
from ._serve import (
    Caller,
    input_schema,
    manifest_for_callers,
    offers,
    readable_observables,
    run_tool,
    scope_of,
    specs_for,
    state_for_callers,
)
from ._skills import Skill, SkillError
from ._tools import TOOLS, Scope, ToolSpec, split_picture, tool_specs

__all__ = [
    "PAGE_DATA_NOTE",
    "TOOLS",
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Caller",
    "Done",
    "Fallback",
    "LoopLimits",
    "ModelSetupError",
    "RetryWait",
    "RunDeadline",
    "Scope",
    "Skill",
    "SkillError",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallStarted",
    "ToolSpec",
    "Usage",
    "input_schema",
    "manifest_for_callers",
    "offers",
    "readable_observables",
    "run_tool",
    "scope_of",
    "specs_for",
    "split_picture",
    "state_for_callers",
    "tool_specs",
]

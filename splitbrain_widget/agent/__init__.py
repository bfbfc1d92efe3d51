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
    TextDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
)
from ._loops import LoopLimits
from ._models import ModelSetupError
from ._skills import Skill, SkillError

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Done",
    "Fallback",
    "LoopLimits",
    "ModelSetupError",
    "RetryWait",
    "Skill",
    "SkillError",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallStarted",
    "Usage",
]

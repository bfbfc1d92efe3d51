"""One agent's run state, shared by the model, the toolsets and the guards; what a run records; how it stops.

A :class:`RunState` lives as long as its agent: ``Runtime.run`` sets the per-run fields afresh,
``Runtime.forget`` clears the conversation's (the skills loaded, a plan waiting for a "yes").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core._audit import CallSource
from . import _reads, _retry, planner
from ._events import AgentEvent
from ._history import CHARS_PER_TOKEN, DEFAULT_WINDOW
from ._loops import LoopDetector, LoopLimits
from ._model_chain import StickyChain
from ._skills import Skill, SkillBook
from ._tools import Scope

if TYPE_CHECKING:
    from ..widget import TargetWidget


class RunStopped(Exception):
    """The loop detector's hard limit ended the run."""


@dataclass
class ToolCallRecord:
    """One tool call of a run: what the model asked, and what came back."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool


@dataclass
class RunState:
    sim: TargetWidget
    emit: Callable[[AgentEvent], None]
    loop_limits: LoopLimits
    max_retries: int
    backoff: tuple[float, ...] = _retry.BACKOFF_S
    store: dict[str, str] = field(default_factory=dict)
    plan: planner.Plan | None = None
    truncated_ids: set[str] = field(default_factory=set)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    loops: LoopDetector = field(default_factory=LoopDetector)
    skip_wait: asyncio.Event | None = None
    loop: asyncio.AbstractEventLoop | None = None
    stop_reason: str | None = None
    retries_this_step: int = 0
    chain: StickyChain | None = None
    compactions: int = 0
    vision: bool = False  # the model is offered ``snapshot``: it takes images
    window: int = DEFAULT_WINDOW
    chars_per_token: float = CHARS_PER_TOKEN  # lowered when a server counts more tokens than the estimate
    reserve: int = 0  # tokens kept free for the answer (the output cap)
    overhead: int = 0  # tokens every request sends besides the history (instructions, tool schemas)
    sent_chars: int = 0  # the last request's characters (overhead and history), to check against its count
    overflowed: bool = False  # this run hit the context limit once and compacted to retry
    refit: bool = False  # the next attempt sends the history compacted after an overflow
    request: str = ""  # the text this run answers
    source: CallSource | None = None  # who asked: the audit's source of every call this run makes
    book: SkillBook = field(default_factory=SkillBook)
    loaded_skills: list[str] = field(default_factory=list)  # loaded in this run, in order
    ever_loaded: set[str] = field(default_factory=set)  # loaded in this conversation (the history has them)
    # a plan the offline planner asked the user to confirm, with the target and values it was made for
    pending: tuple[planner.Plan, str, dict[str, Any]] | None = None

    def skills(self) -> tuple[Skill, ...]:
        """The skills of the active target (the given ones first; one that does not fit it is left out)."""
        return tuple(self.book.usable(self.sim.target))

    def scope(self) -> Scope:
        manifest = _reads.seen_manifest(self.sim)
        return Scope(manifest, _target_ids(self.sim), self.skills(), clock=self.sim.can_advance, pictures=self.vision)

    def planner_context(self) -> planner.PlannerContext:
        from ..manifest.registry import list_targets

        targets = [(t.id, t.title) for t in list_targets(*self.sim.targets_dirs)]
        return planner.PlannerContext(self.sim.schema, dict(self.sim.values), targets)


def _target_ids(sim: TargetWidget) -> list[str]:
    from ..manifest.registry import list_targets

    return list_targets(*sim.targets_dirs).ids()

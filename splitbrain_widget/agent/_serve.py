"""One tool call for a caller outside the agent's run (the MCP server): the same table, approval,
audit source and page-data marking as the agent's toolset (:mod:`._toolsets`), without pydantic-ai."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..core._audit import call_source
from ..manifest.registry import list_targets
from ..protocol import ToolResult
from . import _approval, _reads
from ._skills import Skill, SkillBook
from ._tools import BY_NAME, Scope, ToolContext, execute, for_model, tool_specs

if TYPE_CHECKING:
    from ..widget import TargetWidget
    from ._tools import ToolSpec


@dataclass
class Caller:
    """Who calls, and what their calls keep between them: the audit source (``"mcp: <client>"``), the
    store of big page results (``read_stored_result`` reads it) and the skills they loaded."""

    source: str
    store: dict[str, str] = field(default_factory=dict)
    loaded: list[str] = field(default_factory=list)


def _usable(sim: TargetWidget, skills: tuple[Skill, ...]) -> tuple[Skill, ...]:
    """The skills given that fit ``sim``'s target, then its target's own."""
    return tuple(SkillBook(skills).usable(sim.target))


class _TargetIds(Sequence[str]):
    """The ids of the targets a widget can select, listed (the folders scanned) when first read: most
    MCP calls never read them."""

    def __init__(self, dirs: tuple[str, ...]) -> None:
        self._dirs = dirs
        self._ids: list[str] | None = None

    def _listed(self) -> list[str]:
        if self._ids is None:
            self._ids = [t.id for t in list_targets(*self._dirs)]
        return self._ids

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._listed()[index]

    def __len__(self) -> int:
        return len(self._listed())


def scope_of(sim: TargetWidget, skills: tuple[Skill, ...] = ()) -> Scope:
    """The scope the tools are offered in for ``sim``'s callers from outside (an MCP client): its
    manifest, the targets it can select, the skills that fit its target, whether it has a page clock;
    and pictures (an MCP tool result carries image content)."""
    targets = _TargetIds(tuple(str(d) for d in sim.targets_dirs))
    manifest = _reads.seen_manifest(sim)
    return Scope(manifest, targets, _usable(sim, skills), clock=sim.can_advance, pictures=True)


def state_for_callers(sim: TargetWidget) -> dict[str, Any]:
    """``sim``'s last state as an agent or MCP client may read it (the lesson's ``observables``: an
    MCP state resource). Raises :class:`~splitbrain_widget.LessonError` where the lesson cannot be read."""
    return _reads.only(sim.state, sim.schema, _reads.readable(sim)) or {}


def manifest_for_callers(sim: TargetWidget) -> dict[str, Any]:
    """``sim``'s manifest as an agent or MCP client may read it: only the observables the lesson lets
    them read (an MCP manifest resource). Raises :class:`~splitbrain_widget.LessonError` as
    :func:`state_for_callers`."""
    names = _reads.readable(sim)
    body = dict(sim.manifest)
    if names is not None:
        body["observables"] = {k: v for k, v in (body.get("observables") or {}).items() if k in names}
    return body


def readable_observables(sim: TargetWidget) -> list[str] | None:
    """The observables of ``sim`` its callers may read (an App view keeps the model's context to
    them); None: every one. Raises :class:`~splitbrain_widget.LessonError` as :func:`state_for_callers`."""
    names = _reads.readable(sim)
    return None if names is None else sorted(names)


def offers(sim: TargetWidget, name: str, skills: tuple[Skill, ...] = ()) -> bool:
    """Whether the tool ``name`` of the table is offered for ``sim`` (as :func:`specs_for` would list it)."""
    tool = BY_NAME.get(name)
    return tool is not None and tool.offered(scope_of(sim, skills))


def input_schema(sim: TargetWidget, name: str, skills: tuple[Skill, ...] = ()) -> dict[str, Any] | None:
    """The exact input schema of the tool ``name`` for ``sim``, where it is offered (one tool's, not
    every tool's: an MCP server checks a call's ``Mcp-Param-*`` headers against it)."""
    tool = BY_NAME.get(name)
    if tool is None:
        return None
    scope = scope_of(sim, skills)
    return tool.parameters(scope) if tool.offered(scope) else None


def specs_for(sim: TargetWidget, skills: tuple[Skill, ...] = ()) -> list[ToolSpec]:
    """The tools of :data:`._tools.TOOLS` offered for ``sim``, with their exact schemas."""
    return tool_specs(scope_of(sim, skills))


async def run_tool(
    sim: TargetWidget,
    name: str,
    arguments: dict[str, Any],
    caller: Caller,
    *,
    skills: tuple[Skill, ...] = (),
    progress: Callable[[str], None] | None = None,
    ask: _approval.Ask | None = None,
) -> dict[str, Any]:
    """Run one tool of the table for ``caller`` and return what a model reads: the approval policy
    first (``ask`` answers an "ask"; the chat panel where None), then the call, audited with the
    caller's source, its page data marked and bounded (:func:`._tools.for_model`)."""
    tool = BY_NAME.get(name)
    if tool is None:
        return ToolResult.failure("internal_error", f"no tool named {name!r}").for_model()
    with call_source(caller.source):
        if tool.needs_approval:
            denied = await _approval.verdict(sim, name, arguments, ask)
            if denied is not None:
                return denied.for_model()
        context = ToolContext(sim, caller.store, progress or (lambda _label: None), _usable(sim, skills), caller.loaded)
        try:
            outcome = await execute(context, name, arguments)
        except Exception as exc:  # a bug of ours must reach the caller as a result, as the agent's does
            outcome = ToolResult.failure("internal_error", f"{name} failed inside splitbrain_widget: {exc!r}")
    return for_model(outcome, caller.store) if isinstance(outcome, ToolResult) else outcome

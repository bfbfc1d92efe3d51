"""A lesson policy: what a teacher lets agents and MCP clients do, for every widget of a lesson.

One small file (TOML or JSON; the schema is ``docs/lesson.schema.json``), found in this order:

1. the path in ``SPLITBRAIN_LESSON`` (set by a JupyterHub's spawner or the teacher's shell);
2. ``splitbrain/lesson.toml`` (or ``.json``) in a Jupyter config directory (``jupyter --paths``;
   the system ones, such as ``/etc/jupyter``, are out of a student's reach, ``~/.jupyter`` is not);
3. ``lesson.toml`` beside the notebook (the kernel's working directory);
4. the notebook's own metadata, ``splitbrain.lesson`` (the saved file named by ``JPY_SESSION_NAME``,
   which jupyter_server sets for the kernels it starts).

3 and 4 are conveniences, not controls: a student can edit them.

It applies to every caller that is not the student's own Python code (the built-in agent, the chat
panel, MCP clients and App views), on the one path their tool calls take (the approval verdict,
:mod:`splitbrain_widget.agent._approval`): a refused call is ``denied`` with a message naming the
lesson's rule. A file that does not parse is one :class:`LessonError` naming the file, the field
and what was expected, and nothing runs under it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV_VAR = "SPLITBRAIN_LESSON"
NOTEBOOK_VAR = "JPY_SESSION_NAME"  # the notebook's path, as jupyter_server tells its kernels
MAX_NOTEBOOK_BYTES = 16 * 1024 * 1024
FILE_NAMES = ("lesson.toml", "lesson.json")
MAX_LESSON_BYTES = 256 * 1024


class LessonError(ValueError):
    """The lesson policy cannot be read: the message names the file, the field and what was expected."""


class LessonRefused(PermissionError):
    """The lesson does not allow this (agents off, no MCP server): the message names the rule."""


class _Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ParameterRule(_Rules):
    """One parameter agents may change: within ``min``..``max`` (in the manifest's unit) where given,
    and only once the student approved where ``approval`` is true."""

    min: float | None = None
    max: float | None = None
    approval: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> ParameterRule:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min:g} is above max {self.max:g}")
        return self


class TargetRules(_Rules):
    """What agents may do on one target: change the parameters listed and run the actions listed,
    and read the observables listed (every one of each, where its list is left out)."""

    parameters: dict[str, ParameterRule] | None = None
    actions: list[str] | None = None
    observables: list[str] | None = Field(
        default=None,
        description="what agents and MCP clients may read of what the page measures (every observable where "
        "left out); the parameters' values they always read",
    )


class AgentRules(_Rules):
    enabled: bool = Field(default=True, description="whether agents (the built-in agent and the chat panel) run")
    models: Literal["offline", "local", "any"] | list[str] = Field(
        default="any",
        description="'offline' (the built-in planner only), 'local' (it and servers on this machine), 'any', "
        "or the providers allowed (['openai', 'anthropic']; the offline planner always is)",
    )
    max_requests: int | None = Field(default=None, gt=0, description="model requests per answer, at most")
    max_seconds: float | None = Field(default=None, gt=0, description="seconds per answer, at most")


class McpRules(_Rules):
    enabled: bool = Field(default=True, description="whether the MCP server may start")
    apps: bool = Field(default=True, description="whether targets may be served as MCP Apps")


class LogRules(_Rules):
    """Where the lesson log goes: a JSON-lines file (relative to the notebook's folder) with its
    bound, the notebook's own metadata when it is saved, or both."""

    path: str | None = Field(default=None, min_length=1, description="the JSON-lines file of the records")
    max_bytes: int = Field(default=5_000_000, gt=0, description="rotated (kept as <path>.1) past this size")
    notebook: bool = Field(
        default=False,
        description="also keep the records in the notebook's metadata (splitbrain.lesson_log) when it is saved",
    )

    @model_validator(mode="after")
    def _somewhere(self) -> LogRules:
        if self.path is None and not self.notebook:
            raise ValueError("a [log] needs a path, notebook = true, or both")
        return self


class LessonPolicy(_Rules):
    """What a lesson lets agents and MCP clients do, and where what they did is logged."""

    agents: AgentRules = AgentRules()
    mcp: McpRules = McpRules()
    log: LogRules | None = None
    targets: dict[str, TargetRules] = Field(default_factory=dict, description="target id -> its rules")


class Lesson:
    """A policy in force and the file it came from (``source``)."""

    def __init__(self, policy: LessonPolicy, source: str) -> None:
        self.policy = policy
        self.source = source

    def __repr__(self) -> str:
        return f"<Lesson from {self.source}: {self.summary()}>"

    def summary(self) -> str:
        """What the lesson allows, in one line (``sb.lesson()``, the chat panel)."""
        policy = self.policy
        agents = policy.agents
        parts = [f"agents {'on' if agents.enabled else 'off'}"]
        if agents.enabled and agents.models != "any":
            parts.append(f"models {agents.models if isinstance(agents.models, str) else ', '.join(agents.models)}")
        if agents.enabled and agents.max_requests is not None:
            parts.append(f"at most {agents.max_requests} requests an answer")
        if agents.enabled and agents.max_seconds is not None:
            parts.append(f"at most {agents.max_seconds:g} s an answer")
        parts += [
            f"MCP server {'allowed' if policy.mcp.enabled else 'off'}",
            f"MCP Apps {'allowed' if policy.mcp.apps else 'off'}",
        ]
        if policy.log is not None:
            where = [w for w in (policy.log.path, "the notebook" if policy.log.notebook else None) if w]
            parts.append(f"logged to {' and '.join(where)}")
        for target_id, rules in policy.targets.items():
            said = []
            if rules.parameters is not None:
                said.append(
                    "parameters "
                    + (", ".join(_described(path, rule) for path, rule in rules.parameters.items()) or "none")
                )
            if rules.actions is not None:
                said.append("actions " + (", ".join(rules.actions) or "none"))
            if rules.observables is not None:
                said.append("reads " + (", ".join(rules.observables) or "no observable"))
            parts.append(f"{target_id}: {'; '.join(said) or 'anything'}")
        return "; ".join(parts)

    def rule(self, text: str) -> str:
        """``text`` as a refusal names it: the lesson's words and where they come from."""
        return f"the lesson ({self.source}) {text}"

    def refusal(self, target_id: str, paths: list[str], values: dict[str, Any], action: str | None) -> str | None:
        """Why the lesson refuses a call that changes ``paths`` (to ``values`` where known) or runs
        ``action`` on ``target_id``; None where it allows it."""
        rules = self.policy.targets.get(target_id)
        if rules is None:
            return None
        if action is not None and rules.actions is not None and action not in rules.actions:
            allowed = ", ".join(rules.actions) or "none"
            return self.rule(f"does not let agents run '{action}' (actions allowed: {allowed})")
        if rules.parameters is None:
            return None
        for path in paths:
            rule = rules.parameters.get(path)
            if rule is None:
                allowed = ", ".join(rules.parameters) or "none"
                return self.rule(f"does not let agents change '{path}' (parameters allowed: {allowed})")
            value = values.get(path)
            if isinstance(value, int | float) and not isinstance(value, bool) and not _within(value, rule):
                return self.rule(f"allows '{path}' within {_bounds(rule)}, not {value:g}")
        return None

    def model_refusal(self, model: Any, base_url: str | None) -> str | None:
        """Why the lesson does not allow ``model`` (a name such as ``"openai:gpt-4o"``, or a model
        object), served at ``base_url``; None where it does."""
        allowed = self.policy.agents.models
        name = model if isinstance(model, str) else type(model).__name__
        if allowed == "any" or name == "offline":
            return None
        provider = name.partition(":")[0] if isinstance(model, str) else ""
        if allowed == "local" and (name == "local" or provider == "ollama" or _loopback(base_url)):
            return None
        if isinstance(allowed, list) and provider in allowed:
            return None
        said = {"offline": "the offline planner only", "local": "the offline planner and models on this machine"}
        what = said.get(allowed, "") if isinstance(allowed, str) else "the offline planner and " + ", ".join(allowed)
        return self.rule(f"allows {what}, not {name}")

    def bounded(self, requests: int | None, seconds: float | None) -> tuple[int | None, float | None]:
        """An answer's request and time bounds, no wider than the lesson's."""
        rules = self.policy.agents
        if rules.max_requests is not None:
            requests = rules.max_requests if requests is None else min(requests, rules.max_requests)
        if rules.max_seconds is not None:
            seconds = rules.max_seconds if seconds is None else min(seconds, rules.max_seconds)
        return requests, seconds

    def readable(self, target_id: str) -> frozenset[str] | None:
        """The observables of ``target_id`` agents may read; None: every one."""
        rules = self.policy.targets.get(target_id)
        return None if rules is None or rules.observables is None else frozenset(rules.observables)

    def needs_approval(self, target_id: str, paths: list[str]) -> list[str]:
        """The ``paths`` the lesson puts under the student's approval."""
        rules = self.policy.targets.get(target_id)
        if rules is None or rules.parameters is None:
            return []
        return [p for p in paths if (rule := rules.parameters.get(p)) is not None and rule.approval]

    def seek_refusal(self, target_id: str, paths: list[str]) -> str | None:
        """Why the lesson refuses a seek that varies ``paths``: one it narrows (the seek would try
        values across the manifest's range)."""
        rules = self.policy.targets.get(target_id)
        for path in paths:
            rule = rules.parameters.get(path) if rules is not None and rules.parameters is not None else None
            if rule is not None and (rule.min is not None or rule.max is not None):
                return self.rule(f"narrows '{path}' to {_bounds(rule)}: a seek would try values outside it")
        return None


def _described(path: str, rule: ParameterRule) -> str:
    bounds = f" {_bounds(rule)}" if rule.min is not None or rule.max is not None else ""
    return f"{path}{bounds}{' (approval)' if rule.approval else ''}"


def lesson() -> Lesson | None:
    """The lesson policy in force (``sb.lesson()``): where it comes from and what it allows, or None.

    Raises :class:`LessonError` where its file cannot be read (the error names the file and field)."""
    return current_lesson()


def require(allowed: Callable[[LessonPolicy], bool], refusal: str) -> None:
    """Raise :class:`LessonRefused` (``refusal``, named with the lesson's file) where a lesson is in
    force and does not allow it; :class:`LessonError` where its file cannot be read."""
    lesson = current_lesson()
    if lesson is not None and not allowed(lesson.policy):
        raise LessonRefused(lesson.rule(refusal))


def _loopback(url: str | None) -> bool:
    from urllib.parse import urlparse

    host = urlparse(url).hostname if url else None
    return host in ("127.0.0.1", "localhost", "::1")


def _within(value: float, rule: ParameterRule) -> bool:
    return (rule.min is None or value >= rule.min) and (rule.max is None or value <= rule.max)


def _bounds(rule: ParameterRule) -> str:
    low = "" if rule.min is None else f"{rule.min:g}"
    high = "" if rule.max is None else f"{rule.max:g}"
    return f"{low}..{high}"


# -- finding and reading ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def _config_dirs() -> list[Path]:
    """The Jupyter config directories' ``splitbrain`` folders (listed once; the files in them are
    looked for on every call, so a policy put there mid-session applies)."""
    try:
        from jupyter_core.paths import jupyter_config_path
    except ImportError:  # no Jupyter here: only the variable and the working directory
        return []
    return [Path(d) / "splitbrain" for d in jupyter_config_path()]


def lesson_path(cwd: str | Path | None = None) -> Path | None:
    """The file the lesson comes from, in the order of precedence; None where there is none."""
    named = os.environ.get(ENV_VAR, "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise LessonError(f"{ENV_VAR}={named}: no such file (expected a lesson policy, .toml or .json)")
        return path
    for folder in [*_config_dirs(), Path(cwd) if cwd is not None else Path.cwd()]:
        for name in FILE_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def current_lesson(cwd: str | Path | None = None) -> Lesson | None:
    """The lesson in force now (read again when its file changes), or None."""
    path = lesson_path(cwd)
    notebook = _notebook(cwd) if path is None else None
    chosen = path or notebook
    if chosen is None:
        return None
    try:
        stat = chosen.stat()
    except OSError as exc:
        raise LessonError(f"{chosen}: cannot read the lesson policy: {exc.strerror}") from None
    if path is not None:
        return _read(path.resolve(), stat.st_mtime_ns, stat.st_size)
    return _from_notebook(chosen.resolve(), stat.st_mtime_ns, stat.st_size)


def _notebook(cwd: str | Path | None) -> Path | None:
    """The notebook this kernel runs for, where jupyter_server said (``JPY_SESSION_NAME``)."""
    named = os.environ.get(NOTEBOOK_VAR, "").strip()
    if not named.endswith(".ipynb"):
        return None
    path = Path(named).expanduser()
    for candidate in (path, (Path(cwd) if cwd is not None else Path.cwd()) / path.name):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=4)
def _from_notebook(path: Path, mtime_ns: int, size: int) -> Lesson | None:
    del mtime_ns  # part of the cache key only
    if size > MAX_NOTEBOOK_BYTES:
        return None  # too big to read on every call; a lesson belongs in a file of its own then
    source = f"{path} (metadata splitbrain.lesson)"
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata") or {}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None  # a notebook being written, or not one: no lesson of its own
    data = (metadata.get("splitbrain") or {}).get("lesson") if isinstance(metadata, dict) else None
    return None if data is None else Lesson(validated(data, source), source)


@lru_cache(maxsize=16)
def _read(path: Path, mtime_ns: int, size: int) -> Lesson:
    del mtime_ns  # part of the cache key only
    if size > MAX_LESSON_BYTES:
        raise LessonError(f"{path}: {size:,} bytes, more than the {MAX_LESSON_BYTES:,} a lesson policy may have")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(f"{path}: cannot read the lesson policy: {exc}") from None
    return Lesson(parse(text, str(path), toml=path.suffix.lower() != ".json"), str(path))


def parse(text: str, source: str, *, toml: bool = True) -> LessonPolicy:
    """A lesson policy from its text (TOML, else JSON); :class:`LessonError` names ``source`` and the field."""
    try:
        if toml:
            import tomllib

            data: Any = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError both are
        kind = "TOML" if toml else "JSON"
        raise LessonError(f"{source}: not valid {kind}: {exc}") from None
    return validated(data, source)


def validated(data: Any, source: str) -> LessonPolicy:
    """A lesson policy from its parsed fields; :class:`LessonError` names ``source`` and the field."""
    try:
        return LessonPolicy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "the file"
            got = error.get("input")
            shown = "" if error["type"] in ("missing", "extra_forbidden") or isinstance(got, dict) else f", got {got!r}"
            problems.append(f"field '{where}': {error['msg']}{shown}")
        raise LessonError(f"{source}: " + "; ".join(problems)) from None


def schema_text() -> str:
    """The lesson policy's JSON Schema (``docs/lesson.schema.json``)."""
    schema = LessonPolicy.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "splitbrain-widget lesson policy"
    return json.dumps(schema, indent=2) + "\n"

"""Skills: guides from the notebook's author that the agent loads only when it needs them (issue #20).

A skill is a Markdown file with a YAML front matter::

    ---
    name: projectile-tutor
    description: Tutor the projectile lesson without giving the formula first
    when: [predict, range, angle]         # words of a request it fits (a phrase: all its words)
    targets: [projectile]                 # the targets it applies to (default: every target)
    confirm_before: [launch.angle]        # the offline planner asks before changing these
    confirm_question: What do you predict will happen to the range?
    ---
    Ask the student to predict the range before you change the angle...

It lives beside a target (``<id>.skills/*.md`` next to ``<id>.json``, or ``skills/*.md`` in a folder
target), in a folder the user names (``Agent(sim, skills="lessons/")``) or inline
(``Agent(sim, skills=[Skill(...), "---\\nname: ...", Path("tutor.md")])``). The system prompt lists
each skill of the active target (name, description, when); ``load_skill`` returns a body. A body is
data from a file, bounded in size, and handed to the model as the author's instructions: it adds
text, never a tool or a wider range (the tools validate every call as before).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import _front_matter

if TYPE_CHECKING:
    from ..manifest import Manifest
    from ..manifest.registry import Target

log = logging.getLogger("splitbrain_widget")

MAX_SKILL_BYTES = 32_000  # a skill file, front matter included
MAX_BODY_CHARS = 16_000  # what load_skill hands the model
MAX_SKILLS = 40  # listed in one system prompt
SKILL_NOTE = (
    "instructions from the notebook's author or the target's own files (trusted, unlike page data): follow "
    "them, within what the tools allow; they add no tool and widen no range"
)
_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillError(ValueError):
    """A skill file or definition is malformed; the message names the file and the field."""


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    description: str = Field(min_length=1, max_length=300)
    when: list[str] = Field(default_factory=list, max_length=40)
    targets: list[str] = Field(default_factory=list, max_length=100)
    confirm_before: list[str] = Field(default_factory=list, max_length=100)
    confirm_question: str | None = Field(default=None, max_length=300)

    @field_validator("when", "targets", "confirm_before", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        """``when: predict, range`` (a string) is the list ``[predict, range]``."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


@dataclass(frozen=True)
class Skill:
    """A guide the agent may load: its front matter, its body and where it came from."""

    name: str
    description: str
    body: str
    when: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    confirm_before: tuple[str, ...] = ()
    confirm_question: str | None = None
    source: str = "<inline>"

    def __post_init__(self) -> None:
        for name in ("when", "targets", "confirm_before"):  # a string is a comma list, as in a front matter
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, tuple(part.strip() for part in value.split(",") if part.strip()))
        fields = {
            "name": self.name,
            "description": self.description,
            "when": list(self.when),
            "targets": list(self.targets),
            "confirm_before": list(self.confirm_before),
            "confirm_question": self.confirm_question,
        }
        _validated(fields, self.source)
        if len(self.body) > MAX_BODY_CHARS:
            raise SkillError(
                f"{self.source}: the body has {len(self.body):,} characters, more than the {MAX_BODY_CHARS:,} "
                "a skill may hand the model: split it into several skills"
            )

    @classmethod
    def from_markdown(cls, text: str, source: str = "<inline>") -> Skill:
        """Parse a skill: ``---``, YAML front matter, ``---``, then the Markdown body."""
        match = _FENCE.match(text.lstrip("\ufeff"))
        if match is None:
            raise SkillError(
                f"{source}: expected a front matter first: a line '---', the fields (name, description, "
                "when, targets, confirm_before) and a line '---', then the body"
            )
        try:
            fields = _front_matter.read(match.group(1))  # YAML, as wherever Markdown carries it
        except _front_matter.FrontMatterError as exc:
            raise SkillError(f"{source}: {exc}") from None
        if not isinstance(fields, dict):
            raise SkillError(f"{source}: the front matter must be fields (name: ..., description: ...)")
        front = _validated(fields, source)
        return cls(
            name=front.name,
            description=front.description.strip(),
            body=text[match.end() :].strip(),
            when=tuple(front.when),
            targets=tuple(front.targets),
            confirm_before=tuple(front.confirm_before),
            confirm_question=front.confirm_question,
            source=source,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> Skill:
        """Read one skill file (at most MAX_SKILL_BYTES); parsed again only when it changed (every
        MCP call looks up its target's skills)."""
        file = Path(path).expanduser()
        try:
            stat = file.stat()
        except OSError as exc:
            raise SkillError(f"{file}: cannot read the skill: {exc}") from None
        if stat.st_size > MAX_SKILL_BYTES:
            raise SkillError(f"{file}: {stat.st_size:,} bytes, more than the {MAX_SKILL_BYTES:,} a skill file may have")
        return _skill_file(file, stat.st_mtime_ns, stat.st_size)

    def applies_to(self, target_id: str) -> bool:
        return not self.targets or target_id in self.targets

    def fits(self, request: str) -> bool:
        """The offline planner's rule: a ``when`` phrase whose words all appear in the request
        (case and a plural ``s`` aside)."""
        words = {_stem(w) for w in re.findall(r"[\w'-]+", request.lower())}
        return any(
            phrase_words and all(_stem(w) in words for w in phrase_words)
            for phrase_words in (re.findall(r"[\w'-]+", phrase.lower()) for phrase in self.when)
        )

    def listing(self) -> str:
        """The skill as the system prompt lists it."""
        when = f" (when: {', '.join(self.when)})" if self.when else ""
        return f"- {self.name} — {self.description}{when}"


@lru_cache(maxsize=256)
def _skill_file(file: Path, mtime_ns: int, size: int) -> Skill:
    """A skill file parsed, cached by path, modification time and size (a Skill is immutable)."""
    del mtime_ns, size  # part of the cache key only
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(f"{file}: cannot read the skill: {exc}") from None
    return Skill.from_markdown(text, str(file))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _validated(fields: dict[str, Any], source: str) -> _FrontMatter:
    try:
        return _FrontMatter.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "front matter"
            got = error.get("input")
            shown = f", got {got!r}" if error["type"] != "missing" and not isinstance(got, dict) else ""
            problems.append(f"field '{where}': {error['msg']}{shown}")
        raise SkillError(f"{source}: " + "; ".join(problems)) from None


def skills_in(folder: str | Path) -> list[Skill]:
    """Every ``*.md`` skill in ``folder`` (not recursive), by file name."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise SkillError(f"{path}: not a folder of skills (*.md files)")
    # hidden files (an editor's backup, macOS's ._x.md) are no skills
    return [Skill.from_file(file) for file in sorted(path.glob("*.md")) if not file.name.startswith(".")]


def skills_beside(target: Target) -> list[Skill]:
    """The skills a target ships: ``<id>.skills/*.md`` beside its page, ``skills/`` in a folder target."""
    page = target.page
    if page is None:
        return []
    folder = page.parent / "skills" if page.name == "index.html" else page.parent / f"{page.stem}.skills"
    return skills_in(folder) if folder.is_dir() else []


def given(skills: str | Path | Skill | Iterable[str | Path | Skill] | None) -> list[Skill]:
    """What ``Agent(sim, skills=...)`` names: a folder, a file, a skill, Markdown text, or a list of those."""
    if skills is None:
        return []
    items: Iterable[Any] = [skills] if isinstance(skills, str | Path | Skill) else skills
    out: list[Skill] = []
    for i, item in enumerate(items):
        if isinstance(item, Skill):
            out.append(item)
        elif isinstance(item, str) and item.lstrip("\ufeff \t\r\n").startswith("---"):
            out.append(Skill.from_markdown(item.lstrip("\ufeff \t\r\n"), f"skills[{i}]"))
        elif isinstance(item, str | Path):
            path = Path(item).expanduser()
            try:
                found = path.exists()
            except OSError:  # text too long for a path, say
                found = False
            if not found:
                shown = str(item) if len(str(item)) <= 80 else str(item)[:77] + "..."
                raise SkillError(
                    f"skills[{i}]: {shown!r} is no skill file or folder, and no Markdown text starting with a "
                    "front matter ('---')"
                )
            out.extend(skills_in(path) if path.is_dir() else [Skill.from_file(path)])
        else:
            raise SkillError(
                f"skills[{i}]: expected a Skill, Markdown text with a front matter, or a path to a skill file "
                f"or folder, got {type(item).__name__}"
            )
    return out


class SkillBook:
    """The skills an agent may load: the ones it was given, then the active target's own (a name
    given first wins), those that apply to the target, with ``confirm_before`` checked against it.

    :meth:`for_target` raises on the first problem (an agent is made with its skills checked against
    the active target); :meth:`usable` is for a run that switched target: a skill that does not fit
    the new target (or a target's file that broke) is left out and logged, never stops the run.
    """

    def __init__(self, extra: Sequence[Skill] = ()) -> None:
        self.extra = tuple(extra)

    def for_target(self, target: Target) -> list[Skill]:
        skills, problems = self._collect(target)
        if problems:
            raise SkillError(problems[0])
        return skills

    def usable(self, target: Target) -> list[Skill]:
        skills, problems = self._collect(target)
        for problem in problems:
            log.warning("skill left out: %s", problem)
        return skills

    def _collect(self, target: Target) -> tuple[list[Skill], list[str]]:
        problems: list[str] = []
        try:
            beside = skills_beside(target)
        except SkillError as exc:
            beside, problems = [], [str(exc)]
        chosen: dict[str, Skill] = {}
        for skill in (*self.extra, *beside):
            if skill.applies_to(target.id):
                chosen.setdefault(skill.name, skill)
        skills = []
        for skill in chosen.values():
            try:
                confirm_paths(skill, target.manifest)
            except SkillError as exc:
                problems.append(str(exc))
                continue
            skills.append(skill)
        if len(skills) > MAX_SKILLS:
            problems.append(
                f"{len(skills)} skills apply to target '{target.id}', more than the {MAX_SKILLS} a system prompt "
                f"lists (the first {MAX_SKILLS} are kept): give them targets, or fewer files"
            )
            skills = skills[:MAX_SKILLS]
        return skills, problems


def confirm_paths(skill: Skill, manifest: Manifest) -> list[str]:
    """``confirm_before`` as dotted paths of ``manifest`` (a leaf name resolves as the planner's do)."""
    from ..manifest import ParameterError

    paths = []
    for name in skill.confirm_before:
        try:
            paths.append(manifest.resolve(name).path)
        except ParameterError:
            raise SkillError(
                f"{skill.source}: field 'confirm_before': target '{manifest.id}' has no parameter {name!r} "
                f"(its parameters: {', '.join(manifest.parameters)})"
            ) from None
    return paths

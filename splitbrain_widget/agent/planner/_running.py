"""Whether the page runs: "freeze it", "pause the fire", "let it run", "unpause the game", read as the
manifest's pause or running switch (paused on, running off) or, with none, its pause or start action."""

from __future__ import annotations

import re

from ...manifest import Manifest, Parameter
from . import _vocabulary

FREEZE = re.compile(
    r"^(?:please )?(?:freeze|pause|halt|stop)(?: (?P<thing>it|everything|(?:the|this) [a-z]+))?(?: (?:please|now))?$"
)
RESUME = re.compile(
    r"^(?:please )?(?:(?:unpause|unfreeze|resume)(?: (?P<thing>it|everything|(?:the|this) [a-z]+))?"
    r"|let (?P<let>it|everything|(?:the|this) [a-z]+) (?:run|go|flow|play|move|continue|carry on|burn)(?: again)?"
    r"|keep going|carry on)(?: (?:please|now))?$"
)
_ANY = {"it", "everything"}
PAUSE_ACTIONS = ("pause", "stop", "halt", "freeze")
RUN_ACTIONS = ("start", "run", "play", "resume", "go")


def _about(thing: str | None, manifest: Manifest) -> bool:
    """Whether the thing stopped or started is the page: "it", or a word of the target's own text or
    of its switch's ("stop the generations": "Whether generations follow each other")."""
    if thing is None or thing in _ANY:
        return True
    own = _vocabulary.target_nouns(manifest) | {"simulation", "sim", "animation"}
    switch = _switch(manifest)
    if switch is not None:
        own |= _vocabulary.all_stems(switch[0]) | _vocabulary.stems(switch[0].description)
    return _vocabulary.stem(thing.split()[-1]) in own


def running(clause: str, manifest: Manifest) -> tuple[str, bool, str] | None:
    """(path, value, note) of the pause or running switch a clause sets, or None."""
    freeze, resume = FREEZE.match(clause), RESUME.match(clause)
    match = freeze or resume
    if match is None or not _about(match.group("thing") or (resume and resume.group("let")), manifest):
        return None
    switch = _switch(manifest)
    if switch is None:
        return None
    param, pauses = switch
    value = pauses if freeze else not pauses
    return param.path, value, f'"{clause}": {param.path} {"on" if value else "off"}'


def action(clause: str, manifest: Manifest) -> str | None:
    """The action a clause that stops or starts the page runs, where the manifest has no such switch."""
    freeze, resume = FREEZE.match(clause), RESUME.match(clause)
    match = freeze or resume
    if match is None or _switch(manifest) is not None:
        return None
    if not _about(match.group("thing") or (resume and resume.group("let")), manifest):
        return None
    wanted = PAUSE_ACTIONS if freeze else RUN_ACTIONS
    found = [name for name in manifest.actions if name.lower() in wanted]
    return found[0] if len(found) == 1 else None


def _switch(manifest: Manifest) -> tuple[Parameter, bool] | None:
    """The one switch that pauses the page (True: on pauses it) or runs it (False: on runs it)."""
    found = []
    for p in _vocabulary.booleans(manifest):
        own = _vocabulary.name_stems(p)
        if own & _vocabulary.PAUSE_WORDS:
            found.append((p, True))
        elif own & _vocabulary.RUN_WORDS:
            found.append((p, False))
    return found[0] if len(found) == 1 else None

"""The offline planner: a deterministic, manifest-driven stand-in for a language model.

It maps plain requests onto the same tools a real model calls: set / increase / decrease / toggle /
show / hide / reset / switch target / "what is X" / the manifest's actions ("press run", "run the
Launch action"), numbers with units converted to the manifest's
unit, relative changes ("faster", "double the gravity", "a bit less damping") and several changes
in one sentence, and goals on an observable ("make it land at 50 m", "as far as possible by changing
the angle", "keeping that drag, make it land 2 km away": one ``seek`` call, read in :mod:`._goals`).
What it cannot map it says so, listing what it can do; it never guesses: a wrong change is far worse
than a refusal, so when the parameter, the value, the unit or the direction of a switch is not certain
it refuses (or, for the parameter a goal should vary, asks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...core import _units
from ...manifest import ParameterError
from . import _counts, _goals, _running
from ._clause import enum_value, kept_params, read_clause
from ._context import LABEL, Plan, PlannedCall, PlannerContext
from ._format import aim_phrase, describe_param, join_words, short_name, value_text
from ._lexicon import (
    ACTION_FILLER,
    ACTION_VERB,
    BUTTON_VERBS,
    GREETINGS,
    HOW,
    OUTCOME,
    POLITE_LEAD,
    RESET_WORDS,
    core_words,
    find_params,
    merge_asides,
    normalise,
    share_verbs,
    split_clauses,
    word_tokens,
)
from ._spoken import stray_sign


def plan(text: str, ctx: PlannerContext) -> Plan:
    """Map one request onto tool calls."""
    raw = normalise(text)
    request = raw.lower()
    if len(request) != len(raw):  # lower() changed the length (rare letters): keep no case at all
        raw = request
    if not request:
        return Plan(refusal=capabilities(ctx, "The request was empty."))
    if re.fullmatch(
        r"(?:help|\?|what can (?:i|you) (?:do|change|set)\??|list (?:the )?(?:parameters|options))", request
    ):
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=["*"])
    if re.search(r"\b(?:list|which|what) (?:targets|simulations)\b", request):
        return Plan(calls=[PlannedCall("list_targets", {})], asked=["targets"])
    action = _action(request, ctx, verb_led=True)
    if action is not None:
        return action
    switch = _target_switch(request, ctx)
    if switch is not None:
        return switch
    if _is_reset(request, ctx):
        return Plan(calls=[PlannedCall("reset", {})])
    action = _action(request, ctx, verb_led=False)  # "launch the projectile": the action's name is the verb
    if action is not None:
        return action
    stops = _running.action(request, ctx.manifest)  # "let the polygons move": its start action
    if stops is not None:
        return Plan(calls=[PlannedCall("run_action", {"name": stops})])
    question = _question(request, ctx)
    if question is not None:
        return question
    values: dict[str, Any] = {}
    notes: list[str] = []
    failed: list[tuple[str, str | None]] = []  # (why, the clause when it may only restate a goal)
    goals: list[_goals.Goal] = []
    kept: list[str] = []
    for clause, clause_raw in _goals.merge_vary(merge_asides(share_verbs(split_clauses(request, raw)), ctx.manifest)):
        if set(clause.split()) <= GREETINGS:  # "ok, set the speed to 12"
            continue
        if stray_sign(clause):  # a sign with no number to belong to: never drop it and change the other way
            failed.append(
                (
                    f'"{clause_raw}" has a sign ("minus", "negative") with no number right after it; '
                    "write the value with its sign, as in -5.",
                    None,
                )
            )
            continue
        held = kept_params(clause, ctx.manifest)
        if held is not None:  # "keeping that drag": not set, not varied
            kept += held
            continue
        goal = None if _counts.RATE.search(clause) else _goals.read(clause, clause_raw, ctx)  # a rate: no goal
        if isinstance(goal, _goals.Goal):
            goals.append(goal)
            continue
        outcome = goal if goal is not None else read_clause(clause, clause_raw, ctx, {**ctx.values, **values})
        if isinstance(outcome, str):
            failed.append((outcome, clause if goal is None else None))
        elif outcome[0] in values and values[outcome[0]] != outcome[1]:
            failed.append((f"{outcome[0]} was asked for twice, with different values.", None))
        else:
            path, value, note = outcome
            values[path] = value
            if note:
                notes.append(note)
    if len(goals) == 1:  # "make the flock fly the same way, a polarization of at least 0.95": one goal, said twice
        said = [c for _, c in failed if c is not None and _goals.restates(c, goals[0], ctx)]
        failed = [(why, c) for why, c in failed if c not in said]
        notes += [f'"{c}" read as the {goals[0].observable} goal' for c in said]
    failed += [(f"{path} is both kept and set in one request; say which.", None) for path in kept if path in values]
    if failed:
        return Plan(refusal=capabilities(ctx, " ".join(why for why, _ in failed)))
    if goals:
        return _goal_plan(goals, values, notes, ctx, kept)
    if not values:
        if kept:
            reason = f"Keeping {join_words(kept)} as it is needs no change; say what to change."
            return Plan(refusal=capabilities(ctx, reason))
        return Plan(refusal=capabilities(ctx, f'I could not map "{text.strip()}" to a change.'))
    return Plan(calls=[PlannedCall("set_parameters", {"values": values})], notes=notes)


def _goal_plan(
    goals: list[_goals.Goal], values: dict[str, Any], notes: list[str], ctx: PlannerContext, kept: Sequence[str] = ()
) -> Plan:
    """The request's changes (one set_parameters call) first, then the one seek: the goal holds for them."""
    if len(goals) > 1:
        return Plan(refusal=capabilities(ctx, "I can reach one goal at a time; ask for them one by one."))
    goal = goals[0]
    seek = _goals.resolve(goal, values, ctx, kept)
    if isinstance(seek, _goals.Ask):
        return Plan(refusal=seek.text)
    if isinstance(seek, str):
        return Plan(refusal=capabilities(ctx, seek))
    try:  # the seek is for the request's changes: when the manifest refuses one, seek nothing
        ctx.manifest.coerce_many(values)
    except ParameterError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        aim = aim_phrase(goal.observable, goal.goal, ctx.manifest, goal.aim)
        return Plan(refusal=f"{LABEL}: Could not set parameters: {exc.message}{hint}; so I did not {aim} either.")
    calls = [PlannedCall("set_parameters", {"values": values})] if values else []
    held = [
        f"{short_name(k, ctx)} kept at {value_text(ctx.values.get(k), ctx.manifest.parameters[k].unit)}" for k in kept
    ]
    notes = [*notes, *held, *filter(None, [goal.note])]
    return Plan(calls=[*calls, seek], notes=notes, asked=[goal.observable], aim=goal.aim)


def capabilities(ctx: PlannerContext, reason: str) -> str:
    """A refusal that says why and lists what the planner can do with this target."""
    params = ", ".join(describe_param(p) for p in ctx.manifest.parameters.values() if not p.readonly)
    targets = ", ".join(t for t, _ in ctx.targets) or ctx.manifest.id
    observables = ", ".join(ctx.manifest.observables) or "none declared"
    actions = ", ".join(ctx.manifest.actions)
    run = f'run an action ("press <action>": {actions}); ' if actions else ""
    return (
        f"{LABEL}: {reason} I only understand simple requests. I can set {params}; {run}"
        'make relative changes ("faster", "double the size", "a bit less damping"); show, hide or toggle '
        f'switches; reset; switch target ({targets}); answer "what is <parameter>" (observables: {observables}); '
        'and reach a goal on an observable ("make the <observable> 50 m", "as far as possible by changing the '
        '<parameter>"). For free-form requests use a real model (Agent(sim, model=...)).'
    )


def _is_reset(request: str, ctx: PlannerContext) -> bool:
    """A request to reset everything: "reset", "reset everything back to default values please"."""
    match = re.fullmatch(
        r"(?:(?:please|can you|could you|kindly) )?(reset|restore|revert|start over|start again|go back|back)"
        r"\b(.*?)\??",
        request,
    )
    if not match:
        return False
    rest = set(re.findall(r"[\w']+", match.group(2)))
    if match.group(1) in ("go back", "back", "restore") and not rest & {"default", "defaults", "original", "initial"}:
        return match.group(1) == "restore" and not rest
    names = {ctx.manifest.id.lower(), *re.findall(r"[a-z]+", (ctx.manifest.title or "").lower())}
    return rest <= RESET_WORDS | names


def _question(request: str, ctx: PlannerContext) -> Plan | None:
    match = re.match(
        r"^(?:what(?:'s| is| are)|what's|how (?:fast|far|high|long|big|heavy|many|much)|tell me|show me|which|"
        r"where|is it|get(?! rid of)|read)\b(.*?)\??$",
        request,
    )
    if not match:
        return None
    subject = match.group(1)
    if request.startswith("get") and re.search(r"\bto (?:be )?-?\d", subject):
        return None  # "get the range to 50 m (by changing the angle)": a goal, not a question
    names: list[str] = []
    for name, observable in ctx.manifest.observables.items():
        words = set(word_tokens(name.lower().replace("_", " ")))
        aliased = any(re.search(rf"\b{re.escape(alias)}\b", subject) for alias in observable.aliases)
        if (
            aliased
            or re.search(rf"\b{re.escape(name.lower())}\b", subject)
            or (words and words <= set(word_tokens(subject)))
        ):
            names.append(name)
    params = find_params(subject, ctx.manifest)
    if names:
        return Plan(calls=[PlannedCall("fetch_state", {})], asked=names + [p.path for p in params])
    if params:
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=[p.path for p in params])
    how = re.match(r"how (fast|far|high|long|big|heavy|many)", request)
    if how:
        return _how(how.group(1), subject, ctx)
    if re.search(r"\b(?:state|happening|going on|status)\b", subject):
        return Plan(calls=[PlannedCall("fetch_state", {})], asked=["*state"])
    return Plan(refusal=capabilities(ctx, f'I do not know what "{subject.strip()}" refers to.'))


def _how(how: str, subject: str, ctx: PlannerContext) -> Plan:
    """ "how high did it get": the one observable (or, asked about the present, parameter) that fits.

    What fits comes from the manifest: the unit measures the right thing and the name, label or
    description uses a word for it. Outcome questions ("did it get") only read observables.
    """
    words, units = HOW[how]
    keywords = set(word_tokens(" ".join(words)))
    dims = {_units.dimension(u) for u in units}
    about = set(word_tokens(subject)) - {"it", "is", "the", "did", "get", "go", "are", "there", "they", "do", "does"}
    items: list[tuple[str, str, str | None, set[str], set[str], set[str], bool]] = [
        ("fetch_state", n, o.unit, set(word_tokens(n.lower().replace("_", " "))),
         set(word_tokens((o.description or "").lower())), set(), False)
        for n, o in ctx.manifest.observables.items()
    ]  # fmt: skip
    if not OUTCOME.search(subject):
        items += [
            ("get_parameters", p.path, p.unit, set(core_words(p)) | set(word_tokens(p.name.lower().replace("_", " "))),
             set(word_tokens(f"{p.label or ''} {p.description or ''}".lower())),
             set(word_tokens(p.path.lower().replace(".", " "))), p.type == "integer")
            for p in ctx.manifest.parameters.values()
        ]  # fmt: skip
    scored: list[tuple[int, str, str, Any]] = []
    for tool, key, unit, name_words, text_words, path_words, integer in items:
        dim = _units.dimension(unit)
        literal = unit is None or not _units.is_physical(unit)
        if how == "many":  # "how many heaps": what is counted must be what the item is about
            fits = (literal or integer) and (not about or bool(about & (name_words | text_words | path_words)))
        else:
            fits = dim in dims or (bool(name_words & keywords) and literal)
        score = 2 * bool(name_words & keywords) + bool(text_words & keywords) + 2 * bool(about & path_words)
        if fits and score:
            scored.append((score, tool, key, dim))
    top = [s for s in scored if s[0] == max((s[0] for s in scored), default=0)]
    if len(top) > 1 and len({s[3] for s in top}) == 1:  # one kind of measurement: what the page measured wins
        measured = [s for s in top if s[1] == "fetch_state"]
        top = measured if len(measured) == 1 else top
    if len(top) == 1:
        _, tool, key, _ = top[0]
        return Plan(calls=[PlannedCall(tool, {})], asked=[key])
    reason = (
        f'"how {how}" could mean ' + " or ".join(s[2] for s in top) + "; name one of them."
        if top
        else f'nothing this target reports answers "how {how}{subject}".'
    )
    return Plan(refusal=capabilities(ctx, reason[:1].upper() + reason[1:]))


def _action_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))


def _action_matches(what: list[str], name: str, ctx: PlannerContext) -> bool:
    """Whether the words name the action: its name or its label, then nothing but filler or words of
    its own label, description or the target's title ("reset the simulation" for ``reset``)."""
    action = ctx.manifest.actions[name]
    own = set(_action_words(f"{action.label or ''} {action.description or ''} {ctx.manifest.title or ''}"))
    own |= set(_action_words(ctx.manifest.id))
    forms = {tuple(_action_words(name)), tuple(_action_words(action.label or ""))}
    forms |= {tuple(_action_words(alias)) for alias in action.aliases}  # the manifest's other names for it
    for form in forms:
        if form and tuple(what[: len(form)]) == form and set(what[len(form) :]) <= ACTION_FILLER | own:
            return True
    # "erase the trail on the red one", "wipe the red trace": its verb (or one meaning it) first, then
    # its other words among the action's own ("red" is in its description), articles aside
    said = [w for w in what if w not in _ARTICLES]
    if not said:
        return False
    verbs = {said[0], *ACTION_SYNONYMS.get(said[0], ())}
    for form in forms:
        if (
            len(form) > 1
            and form[0] in verbs
            and set(form[1:]) <= set(said[1:])
            and set(said[1:]) - set(form) <= ACTION_FILLER | own
        ):
            return True
    return False


_ARTICLES = {"the", "a", "an", "its", "their", "this", "that"}
ACTION_SYNONYMS = {"wipe": ("clear", "erase"), "erase": ("clear",), "delete": ("clear", "erase"),
                   "remove": ("clear", "erase"), "begin": ("start",), "halt": ("stop",)}  # fmt: skip


def _action(request: str, ctx: PlannerContext, *, verb_led: bool) -> Plan | None:
    """One of the manifest's actions, asked for by a verb ("press run", "run the launch action") or,
    with ``verb_led=False``, by its name as the verb ("launch the projectile"); None when it is none."""
    actions = ctx.manifest.actions
    if not actions:
        return None
    if verb_led:
        said = _action_words(re.sub(POLITE_LEAD, "", request))
        described = [n for n, a in actions.items() if a.description and said == _action_words(a.description)]
        if len(described) == 1:  # "start the counter": the action's own description, word for word
            return Plan(calls=[PlannedCall("run_action", {"name": described[0]})])
        match = ACTION_VERB.match(request)
        if match is None:
            return None
        what, verb = _action_words(match.group("what")), match.group("verb")
    else:
        what, verb = _action_words(re.sub(POLITE_LEAD, "", request)), ""
    found = [name for name in actions if _action_matches(what, name, ctx)]
    if len(found) == 1:
        return Plan(calls=[PlannedCall("run_action", {"name": found[0]})])
    names = ", ".join(actions)
    if found:
        return Plan(refusal=capabilities(ctx, f'"{request}" could be the action {" or ".join(found)}; name one.'))
    if verb in BUTTON_VERBS:
        if what and what[0] == "reset" and "reset" not in actions:
            return Plan(calls=[PlannedCall("reset", {})])  # "press reset": the parameters' reset, as "reset" is
        return Plan(refusal=capabilities(ctx, f'"{" ".join(what)}" is not one of the actions ({names}).'))
    return None


def _target_switch(request: str, ctx: PlannerContext) -> Plan | None:
    match = re.search(
        r"\b(?:switch|change|go|move|jump)(?: over)? to (?:the )?(.+?)(?: simulation| target| sim)?$|"
        r"^(?:open|load|use|start) (?:the )?(.+?)(?: simulation| target| sim)$",
        request,
    )
    if not match:
        return None
    wanted = (match.group(1) or match.group(2) or "").strip()
    if find_params(wanted, ctx.manifest):
        return None  # "change to ..." about a parameter, not a target
    for target_id, title in ctx.targets:
        if wanted in (target_id.lower(), title.lower()) or wanted.rstrip("s") == target_id.lower().rstrip("s"):
            return Plan(calls=[PlannedCall("select_target", {"target": target_id})])
    if _is_option(wanted, ctx):
        return None  # "switch to the double pendulum": this target's mode, set like any other value
    close = [
        t for t, title in ctx.targets if set(word_tokens(wanted)) & (set(word_tokens(title.lower())) | {t.lower()})
    ]
    if len(close) == 1:
        return Plan(calls=[PlannedCall("select_target", {"target": close[0]})])
    known = ", ".join(t for t, _ in ctx.targets) or "none"
    if close:
        return Plan(refusal=f'{LABEL}: "{wanted}" could be {" or ".join(close)}; name one. Available: {known}.')
    return Plan(refusal=f'{LABEL}: there is no target "{wanted}". Available: {known}.')


def _is_option(wanted: str, ctx: PlannerContext) -> bool:
    """Whether the words name an option of one of this target's parameters and nothing else but the
    parameter and this target ("the double pendulum", "viridis")."""
    hit = enum_value(wanted, ctx)
    if hit is None:
        return False
    path, option, _ = hit
    manifest = ctx.manifest
    known = {
        *word_tokens(str(option).lower()),
        *word_tokens(path.replace(".", " ")),
        *word_tokens(manifest.id.replace("_", " ")),
    }
    known |= set(word_tokens((manifest.title or "").lower())) | {"the", "a", "an", "mode", "one", "version", "setting"}
    return set(word_tokens(wanted)) <= known

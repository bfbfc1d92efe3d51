"""Bound manifests: the ``bind`` / ``read`` / ``actions`` / ``ready`` / ``setup`` / ``kit`` schema and its errors,
and how the registry assembles a bound page (``_bindings``, ``Target.html``, ``standalone_html``)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from splitbrain_widget import Manifest, ManifestError, load_target
from splitbrain_widget import registry as registry_module
from splitbrain_widget.manifest import Action, ActionBinding, ObservableRead, ParameterBinding, ReadyCondition
from splitbrain_widget.manifest._page_bindings import RUNTIME, binding_spec, script_text, tail_html

BOUND_PAGES = Path(__file__).parent / "fixtures" / "bound_pages"

BOUND: dict[str, Any] = {
    "id": "bound",
    "data": {
        "settings": {
            "speed": {"type": "number", "value": 8, "bind": {"global": "sim.speed", "after": "redraw"}},
            "trail": {"type": "boolean", "value": False, "bind": {"selector": "#trail", "event": "change"}},
        }
    },
    "observables": {
        "count": {"read": {"expr": "particles.length"}},
        "shown": {"read": {"selector": "#stats", "attr": "data-n", "number": True}},
    },
    "actions": {"run": {"label": "Run", "description": "press Run", "bind": {"click": "#run"}}},
    "ready": {"global": "sim"},
    "setup": "window.EMBEDDED = true;",
    "kit": True,
}

PLAIN: dict[str, Any] = {"id": "plain", "data": {"settings": {"speed": {"type": "number", "value": 8}}}}


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ManifestError) as info:
        Manifest.from_dict(raw, source="m.json")
    assert str(info.value).startswith("m.json: ")
    return info.value.problems


def _with(path: str, value: Any, base: dict[str, Any] = BOUND) -> dict[str, Any]:
    raw = copy.deepcopy(base)
    *parents, leaf = path.split(".")
    node = raw
    for key in parents:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(leaf, None)
    else:
        node[leaf] = value
    return raw


# -- the schema -----------------------------------------------------------------------------------


def test_a_bound_manifest_loads_every_binding_kind() -> None:
    m = Manifest.from_dict(BOUND)
    assert m.bound
    speed, trail = m.parameters["settings.speed"].bind, m.parameters["settings.trail"].bind
    assert (
        speed == ParameterBinding.model_validate({"global": "sim.speed", "after": "redraw"}) and speed.kind == "global"
    )
    assert trail is not None and trail.kind == "selector" and trail.event == ("change",)
    assert m.observables["count"].read == ObservableRead(expr="particles.length")
    assert m.observables["shown"].read == ObservableRead(selector="#stats", attr="data-n", number=True)
    assert m.actions == {
        "run": Action(name="run", label="Run", description="press Run", bind=ActionBinding(click="#run"))
    }
    assert (
        m.ready == ReadyCondition.model_validate({"global": "sim"})
        and m.setup == "window.EMBEDDED = true;"
        and m.kit is True
    )


def test_an_existing_manifest_is_not_bound_and_has_no_actions() -> None:
    m = Manifest.from_dict(PLAIN)
    assert not m.bound and m.actions == {} and m.ready is None and m.setup is None and m.kit is False
    for builtin in ("bouncer", "projectile"):
        assert not load_target(builtin).manifest.bound


def test_bindings_dump_as_the_manifest_wrote_them_and_round_trip() -> None:
    m = Manifest.from_dict(BOUND)
    dumped = json.loads(m.model_dump_json())
    assert dumped["observables"]["shown"]["read"] == {"selector": "#stats", "attr": "data-n", "number": True}
    assert dumped["actions"]["run"]["bind"] == {"click": "#run"}
    assert dumped["ready"] == {"global": "sim"}
    assert m.parameters["settings.trail"].model_dump(mode="json", exclude_none=True)["bind"] == {
        "selector": "#trail",
        "event": ["change"],
    }
    assert Manifest.model_validate(m.model_dump()) == m
    assert Manifest.model_validate_json(m.model_dump_json()) == m


@pytest.mark.parametrize(
    ("what", "raw"),
    [
        (
            "a parameter's bind",
            _with(
                "observables",
                None,
                _with("data.settings", {"s": PLAIN["data"]["settings"]["speed"] | {"bind": {"global": "s"}}}, PLAIN),
            ),
        ),
        (
            "an observable's read",
            _with(
                "observables",
                {"n": {"read": {"global": "n"}}},
                _with("data.settings.speed.bind", {"global": "s"}, PLAIN),
            ),
        ),
        ("ready", _with("ready", {"load": True}, _with("data.settings.speed.bind", {"global": "s"}, PLAIN))),
        ("setup", _with("setup", "x = 1", _with("data.settings.speed.bind", {"global": "s"}, PLAIN))),
    ],
)
def test_any_binding_makes_a_manifest_bound(what: str, raw: dict[str, Any]) -> None:
    assert Manifest.from_dict(raw).bound, what


def test_actions_may_be_a_list_and_need_no_bind_on_a_page_that_is_not_bound() -> None:
    m = Manifest.from_dict(_with("actions", [{"name": "run", "label": "Run"}, {"name": "stop"}], PLAIN))
    assert list(m.actions) == ["run", "stop"] and m.actions["run"].bind is None and not m.bound


def test_an_event_list_and_the_default_are_kept() -> None:
    m = Manifest.from_dict(_with("data.settings.trail.bind.event", ["input", "change"]))
    assert m.parameters["settings.trail"].bind is not None
    assert m.parameters["settings.trail"].bind.event == ("input", "change")
    m = Manifest.from_dict(_with("data.settings.trail.bind.event", None))
    assert m.parameters["settings.trail"].bind is not None and m.parameters["settings.trail"].bind.event is None


# -- errors name the field and what was expected ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "data.settings.speed.bind.global",
            "sim-speed",
            "data.settings.speed.bind.global: expected a dotted path of JavaScript identifiers such as 'sim.speed', "
            'got "sim-speed"',
        ),
        (
            "data.settings.speed.bind.global",
            "this.speed",
            "data.settings.speed.bind.global: 'this' is a JavaScript reserved word; expected a dotted path",
        ),
        (
            "data.settings.speed.bind.global",
            3,
            "data.settings.speed.bind.global: Input should be a valid string (got 3)",
        ),
        ("data.settings.speed.bind.after", "a..b", "data.settings.speed.bind.after: expected a dotted path"),
        (
            "data.settings.speed.bind",
            "sim.speed",
            'data.settings.speed.bind: expected {"global": "<dotted path>"}, {"selector": "<CSS selector>"}, '
            '{"call": "<dotted path of a function>"}, {"calls": {"<value>": "<function>", ...}}, {"drag": "<CSS selector of a handle>"} or {"toggle": "<CSS selector of a button>"}, optionally with "after", got a string ("sim.speed")',
        ),
        (
            "data.settings.speed.bind",
            {"glob": "x"},
            'data.settings.speed.bind: expected {"global": "<dotted path>"}, {"selector": "<CSS selector>"}, '
            '{"call": "<dotted path of a function>"}, {"calls": {"<value>": "<function>", ...}}, {"drag": "<CSS selector of a handle>"} or {"toggle": "<CSS selector of a button>"}, optionally with "after", got {"glob": "x"}',
        ),
        (
            "data.settings.speed.bind",
            {"global": "x", "selector": "#x"},
            "data.settings.speed.bind: give only one of 'global' or 'selector'",
        ),
        ("data.settings.speed.bind", {"global": "x", "colour": 1}, "data.settings.speed.bind.colour: unknown field"),
        (
            "data.settings.speed.bind",
            {"global": "x", "event": "input"},
            'data.settings.speed.bind.event: applies only to a {"selector": ...} binding',
        ),
        (
            "data.settings.trail.bind.event",
            ["input", "mouseup"],
            "data.settings.trail.bind.event.1: expected 'input', 'change' or 'click'",
        ),
        (
            "data.settings.trail.bind.event",
            [],
            "data.settings.trail.bind.event: expected 'input', 'change', 'click' or a list of them, got an empty list",
        ),
        ("data.settings.trail.bind.selector", "  ", "data.settings.trail.bind.selector: expected a non-empty string"),
        ("observables.count.read", {"expr": ""}, "observables.count.read.expr: expected a non-empty string"),
        (
            "observables.count.read",
            {"global": "n", "values": {"a": 1}, "scale": 2},
            "observables.count.read: give 'values' or 'scale'/'offset', not both",
        ),
        (
            "observables.shown.read.attr",
            "data n",
            "observables.shown.read.attr: expected 'text', 'value' or an attribute name such as 'data-count'",
        ),
        (
            "actions.run.bind",
            {"press": "#run"},
            'actions.run.bind: expected {"click": "<CSS selector>"}, {"key": "<key>"}, {"call": "<dotted path of a function>", "args": [...]}, {"set": {"<parameter>": <value>}}, {"assign": "<dotted path>", "value": <JSON>} or {"wait": "<JS expression>", "timeout": <seconds>}',
        ),
        ("actions.run.bind", {"call": "run()"}, "actions.run.bind.call: expected a dotted path"),
        ("ready", {"load": False}, "ready.load: expected true; leave 'ready' out to wait for the page's load event"),
        ("ready", {"soon": True}, 'ready: expected {"load": true}, {"global": "<dotted path>"} or {"selector"'),
        ("setup", 42, "setup: Input should be a valid string (got 42)"),
        ("kit", "yes", 'kit: Input should be a valid boolean (got "yes")'),
    ],
)
def test_a_bad_binding_names_the_field_and_what_was_expected(path: str, value: Any, expected: str) -> None:
    problems = _problems(_with(path, value))
    assert any(p.startswith(expected) for p in problems), problems


def test_an_action_name_must_be_an_identifier() -> None:
    raw = _with("actions", {"9lives": {"bind": {"click": "#x"}}})
    assert _problems(raw) == [
        "actions.9lives.name: expected letters, digits and '_', not starting with a digit, got \"9lives\""
    ]


def test_an_array_parameter_cannot_bind_to_a_form_control() -> None:
    raw = _with("data.settings.pos", {"type": "array", "value": [0, 0], "bind": {"selector": "#pos"}})
    assert _problems(raw) == [
        "data.settings.pos.bind.selector: a form control holds one value; bind an array parameter to a global"
    ]


def test_in_a_bound_manifest_everything_needs_a_binding_and_all_are_reported_at_once() -> None:
    raw = _with("data.settings.trail.bind", None)
    raw = _with("observables.count.read", None, raw)
    raw = _with("actions.stop", {"label": "Stop"}, raw)
    raw = _with("data.settings.speed.type", "num", raw)  # an unrelated problem, reported with the rest
    problems = _problems(raw)
    why = "missing; the manifest is bound (observables.shown has 'read'), so every"
    assert problems == [
        'data.settings.speed.type: expected one of number, integer, boolean, string, array, got "num"',
        f"data.settings.trail.bind: {why} parameter needs a 'bind': "
        '{"global": "<dotted path>"}, {"selector": "<CSS selector>"}, {"call": "<dotted path of a function>"}, {"calls": {"<value>": "<function>", ...}}, {"drag": "<CSS selector of a handle>"} or {"toggle": "<CSS selector of a button>"}, optionally with "after"',
        f"observables.count.read: {why} observable needs a 'read': "
        '{"global": "<dotted path>"}, {"expr": "<JS expression>"} or {"selector": "<CSS selector>"}',
        f"actions.stop.bind: {why} action needs a 'bind': "
        '{"click": "<CSS selector>"}, {"key": "<key>"}, {"call": "<dotted path of a function>", "args": [...]}, {"set": {"<parameter>": <value>}}, {"assign": "<dotted path>", "value": <JSON>} or {"wait": "<JS expression>", "timeout": <seconds>}',
    ]


def test_a_list_of_actions_is_checked_like_an_object() -> None:
    problems = _problems(_with("actions", [{"name": "run", "bind": {"click": "#run"}}, {"name": "stop"}]))
    assert problems == [
        "actions.stop.bind: missing; the manifest is bound (data.settings.speed has 'bind'), so every action needs "
        'a \'bind\': {"click": "<CSS selector>"}, {"key": "<key>"}, {"call": "<dotted path of a function>", "args": [...]}, {"set": {"<parameter>": <value>}}, {"assign": "<dotted path>", "value": <JSON>} or {"wait": "<JS expression>", "timeout": <seconds>}'
    ]


def test_the_missing_binding_says_what_made_the_manifest_bound() -> None:
    raw = _with("setup", "window.X = 1", PLAIN)
    assert _problems(raw) == [
        "data.settings.speed.bind: missing; the manifest is bound (it has 'setup'), so every parameter needs a "
        '\'bind\': {"global": "<dotted path>"}, {"selector": "<CSS selector>"}, {"call": "<dotted path of a function>"}, {"calls": {"<value>": "<function>", ...}}, {"drag": "<CSS selector of a handle>"} or {"toggle": "<CSS selector of a button>"}, optionally with "after"'
    ]


def test_a_page_that_is_not_bound_cannot_bind_an_action() -> None:
    raw = _with("actions", {"run": {"bind": {"call": "run"}}}, PLAIN)
    assert _problems(raw) == [
        "actions.run.bind: only a bound manifest binds actions (one whose parameters have 'bind'); "
        "a page that is not bound handles its actions with SplitBrain.onAction"
    ]


# -- the generated scripts ---------------------------------------------------------------------------


def test_the_spec_lists_the_bindings_in_manifest_order_with_the_default_ready() -> None:
    spec = binding_spec(Manifest.from_dict(_with("ready", None)))
    assert spec == {
        "params": [
            {"path": "settings.speed", "type": "number", "bind": {"global": "sim.speed", "after": "redraw"}},
            {"path": "settings.trail", "type": "boolean", "bind": {"selector": "#trail", "event": ["change"]}},
        ],
        "observables": [
            {"name": "count", "read": {"expr": "particles.length"}},
            {"name": "shown", "read": {"selector": "#stats", "attr": "data-n", "number": True}},
        ],
        "actions": [{"name": "run", "steps": [{"click": "#run"}]}],
        "ready": {"load": True},
    }


def test_the_tail_holds_generated_closures_and_no_eval() -> None:
    tail = tail_html(Manifest.from_dict(BOUND))
    assert f'{RUNTIME}.expr("count", () => (particles.length\n));' in tail
    # Only the roots become closures, and only a root a binding assigns itself gets a setter.
    assert '"sim": {get: () => sim}' in tail and '"redraw": {get: () => redraw}' in tail
    assert "set:" not in tail
    one = _with("data.settings.speed.bind", {"global": "speed"})
    assert '"speed": {get: () => speed, set: (v) => { speed = v; }}' in tail_html(Manifest.from_dict(one))
    assert "eval(" not in tail and "Function(" not in tail


def test_author_code_cannot_end_its_script_element() -> None:
    raw = _with("observables.count.read.expr", "'</script><script>alert(1)</script>'.length")
    raw = _with("observables.shown.read.selector", "[data-x='</SCRIPT>']", raw)
    raw = _with("setup", "window.t = '</Script>'; // <!-- <script>", raw)
    scripts = _scripts(_target(raw).html)
    # The parser sees the elements the registry wrote, and the author's code whole inside its own.
    assert scripts[-1].startswith(f"{RUNTIME}.start(")
    assert any(s.startswith(f'{RUNTIME}.expr("count", () => (\'<\\/script><script>alert(1)') for s in scripts)
    assert any(s.startswith("window.t = '<\\/Script>'; // <\\!-- <script>") for s in scripts)
    assert "</SCRIPT>" not in scripts[-1] and "\\u003c/SCRIPT>" in scripts[-1]
    assert script_text("a</script>b<!--c") == "a<\\/script>b<\\!--c"


def test_a_page_that_is_not_bound_is_assembled_as_before() -> None:
    plain = _target(PLAIN)
    assert plain.html == registry_module.inject_target_api(plain.page_html)
    assert "data-splitbrain-bindings" not in plain.html and "data-splitbrain-kit" not in plain.html


def test_the_head_has_api_kit_runtime_and_setup_in_that_order_before_the_pages_scripts() -> None:
    html = _target(BOUND).html
    api = html.index(registry_module.target_api_script())
    kit = html.index("<script data-splitbrain-kit>")
    runtime = html.index("<script data-splitbrain-bindings-runtime>")
    setup = html.index("<script data-splitbrain-bindings-setup>window.EMBEDDED = true;")
    page_script = html.index("<script>let particles")
    start = html.index(f"{RUNTIME}.start(")
    assert api < kit < runtime < setup < page_script < start
    assert html.rstrip().endswith("</script>")


def test_the_kit_alone_needs_no_bindings() -> None:
    html = _target(_with("kit", True, PLAIN)).html
    assert "<script data-splitbrain-kit>" in html and "data-splitbrain-bindings" not in html
    assert html.index(registry_module.target_api_script()) < html.index("data-splitbrain-kit")


def test_the_headless_page_keeps_the_clock_around_the_target_api() -> None:
    headless = _target(BOUND).headless_html(seed=3)
    clock = headless.index(f"<script {registry_module.CLOCK_ATTR} ")
    api = headless.index(registry_module.target_api_script())
    assert clock < api < headless.index("data-splitbrain-kit") < headless.index(f"{RUNTIME}.start(")


def test_a_standalone_copy_has_kit_and_bindings_but_no_target_api_or_csp() -> None:
    target = _target(BOUND)
    html = target.standalone_html()
    assert registry_module.target_api_script() not in html
    assert "Content-Security-Policy" not in html and "about:blank" not in html
    assert "<script data-splitbrain-kit>" in html and f"{RUNTIME}.start(" in html
    assert html.index("<script data-splitbrain-kit>") < html.index("<script>let particles")


def test_the_command_line_writes_a_standalone_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("form.html", "form.json"):
        shutil.copy(BOUND_PAGES / name, tmp_path / name)
    out = tmp_path / "copy.html"
    assert registry_module.main(["standalone", "form", "--dir", str(tmp_path), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == load_target("form", tmp_path).standalone_html()
    assert registry_module.main(["standalone", "nope", "--dir", str(tmp_path)]) == 2
    assert "no target 'nope'" in capsys.readouterr().err


def test_python_dash_m_splitbrain_widget_standalone_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "pendulum-standalone.html"
    run = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::RuntimeWarning",
            "-m",
            "splitbrain_widget",
            "standalone",
            "pendulum",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert out.read_text(encoding="utf-8") == load_target("pendulum").standalone_html()
    bad = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "standalone", "nope"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "no target 'nope'" in bad.stderr


def test_the_fixture_pages_load_bound() -> None:
    for name in ("globals", "form", "button"):
        target = load_target(BOUND_PAGES / f"{name}.json")
        assert target.manifest.bound, name
        assert f"{RUNTIME}.start(" in target.html


# -- helpers ---------------------------------------------------------------------------------------

PAGE = "<!doctype html><html><head><title>t</title></head><body><script>let particles = [];</script></body></html>"


def _target(raw: dict[str, Any]) -> registry_module.Target:
    manifest = Manifest.from_dict(raw)
    return registry_module.Target(manifest.id, manifest, PAGE)


def _scripts(html: str) -> list[str]:
    """The text of every script element, as an HTML parser splits the page."""
    found: list[str] = []

    class Scripts(HTMLParser):
        inside = False

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag == "script":
                self.inside = True
                found.append("")

        def handle_endtag(self, tag: str) -> None:
            self.inside = self.inside and tag != "script"

        def handle_data(self, data: str) -> None:
            if self.inside:
                found[-1] += data

    Scripts().feed(html)
    return found


# -- what real pages need: a read of the model, conversions, calls, steps, setup when ready -------------


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "data.settings.speed.read",
            {"global": "model.speed", "scale": 0},
            "data.settings.speed.read.scale: expected a non-zero number",
        ),
        (
            "data.settings.speed.bind",
            {"call": "setSpeed"},
            "data.settings.speed.bind.call: a parameter set through a call needs a 'read'",
        ),
        (
            "data.settings.trail.bind",
            {"selector": "#t", "values": {"true": "1"}},
            "data.settings.trail.bind.values: no page value for false",
        ),
        (
            "data.settings.trail.bind",
            {"selector": "#t", "values": {"true": "1", "false": "1"}},
            "data.settings.trail.bind.values: two manifest values map to the same page value",
        ),
        (
            "data.settings.trail.bind",
            {"selector": "#t", "values": {"yes": "2", "true": "1", "false": "0"}},
            "data.settings.trail.bind.values.yes: ",
        ),
        (
            "data.settings.trail.bind",
            {"selector": "#t", "scale": 2},
            "data.settings.trail.bind.scale: 'scale' and 'offset' apply only to number",
        ),
        (
            "data.settings.speed.bind",
            {"global": "s", "values": {"1": 1}, "offset": 2},
            "data.settings.speed.bind: give 'values' or 'scale'/'offset', not both",
        ),
        (
            "data.settings.speed.bind",
            {"drag": "#knob"},
            "data.settings.speed.bind.drag: a dragged control needs a 'read'",
        ),
        (
            "data.settings.speed",
            {"type": "number", "value": 1, "bind": {"drag": "#knob"}, "read": {"global": "m.s"}},
            "data.settings.speed.bind.drag: a dragged control sets a number or integer parameter with a 'min' and a 'max'",
        ),
        (
            "data.settings.speed.bind",
            {"global": "s", "track": "#rail"},
            'data.settings.speed.bind.track: applies only to a {"drag": ...} binding',
        ),
        ("actions.run.bind", [{"click": "#a"}, {"call": "run()"}], "actions.run.bind.1.call: expected a dotted path"),
        ("actions.run.bind", [], "actions.run.bind: Tuple should have at least 1 item"),
        (
            "actions.run.bind",
            {"click": "#a", "args": [1]},
            'actions.run.bind.args: applies only to a {"call": ...} binding',
        ),
        ("actions.run.bind", [{"set": {"nope": 1}}], "actions.run.bind.0.set.nope: unknown parameter 'nope'"),
        ("actions.run.bind", {"set": {"speed": "fast"}}, "actions.run.bind.set.speed: "),
        (
            "actions.run.bind",
            {"click": "#a", "timeout": 2},
            'actions.run.bind.timeout: applies only to a {"wait": ...} binding',
        ),
        (
            "actions.run.bind",
            [{"wait": "done", "timeout": 0}],
            "actions.run.bind.0.timeout: expected seconds in (0, 60], got 0",
        ),
        ("actions.run.bind", [{"wait": "  "}], "actions.run.bind.0.wait: "),
        ("actions.run.bind", {"wait": "done", "click": "#go"}, "actions.run.bind: give only one of 'click' or 'wait'"),
        (
            "data.settings.speed.bind",
            {"calls": {"true": "loop", "false": "noLoop"}},
            "data.settings.speed.bind.calls: a parameter set through calls needs a 'read'",
        ),
        (
            "data.settings.speed",
            {"type": "number", "value": 1, "bind": {"calls": {"1": "a"}}, "read": {"global": "m.s"}},
            "data.settings.speed.bind.calls: a function per value applies to a boolean or an enum parameter",
        ),
        (
            "data.settings.speed",
            {"type": "boolean", "value": True, "bind": {"calls": {"true": "loop"}}, "read": {"global": "m.s"}},
            "data.settings.speed.bind.calls: no page function for false (each value needs one)",
        ),
        (
            "data.settings.speed",
            {
                "type": "boolean",
                "value": True,
                "bind": {"calls": {"true": "loop", "false": "no loop"}},
                "read": {"global": "m.s"},
            },
            "data.settings.speed.bind.calls.false: expected a dotted path",
        ),
        ("actions.run.when", {"expr": "!running"}, None),
        ("setup", {"script": "x = 1", "when": "later"}, "setup.when: expected 'before' or 'ready'"),
        ("setup", 42, "setup: Input should be a valid string"),
    ],
)
def test_the_new_binding_fields_name_what_is_wrong(path: str, value: Any, expected: str | None) -> None:
    raw = _with(path, value)
    if expected is None:
        assert Manifest.from_dict(raw).actions["run"].when is not None
        return
    problems = _problems(raw)
    assert any(p.startswith(expected) for p in problems), problems


def test_a_read_beside_no_bind_and_a_when_without_a_bind_are_refused() -> None:
    plain = {"id": "p", "data": {"g": {"x": {"type": "number", "value": 1, "read": {"global": "x"}}}}}
    assert any(
        p.startswith("data.g.x.read: a parameter's own read applies only beside its 'bind'") for p in _problems(plain)
    )
    unbound = {
        "id": "p",
        "data": {"g": {"x": {"type": "number", "value": 1}}},
        "actions": {"go": {"when": {"expr": "1"}}},
    }
    assert any(p.startswith("actions.go.when: applies only to an action with a 'bind'") for p in _problems(unbound))


def test_the_spec_carries_reads_conversions_steps_and_the_ready_setup() -> None:
    raw = _with("data.settings.speed.read", {"expr": "sim.speed * 2", "scale": 2})
    raw = _with("actions.run.bind", [{"set": {"speed": 3}}, {"call": "sim.clear", "args": [0]}], raw)
    raw = _with("actions.run.when", {"expr": "!sim.running"}, raw)
    raw = _with("setup", {"script": "window.EMBED = true;", "when": "ready"}, raw)
    m = Manifest.from_dict(raw)
    spec = binding_spec(m)
    assert spec["params"][0]["read"] == {"expr": "sim.speed * 2", "scale": 2.0}
    assert spec["actions"][0] == {
        "name": "run",
        "steps": [{"set": {"settings.speed": 3.0}}, {"call": "sim.clear", "args": [0]}],
        "when": True,
    }
    from splitbrain_widget.manifest._page_bindings import head_html, tail_html

    tail = tail_html(m)
    assert '__splitbrainBindings.expr("param settings.speed", () => (sim.speed * 2' in tail
    assert '__splitbrainBindings.expr("action run", () => (!sim.running' in tail
    assert "__splitbrainBindings.setup(() => {\nwindow.EMBED = true;\n});" in tail
    assert "EMBED" not in head_html(m, "/*runtime*/")  # not before the page's scripts
    assert Manifest.from_dict(m.model_dump(mode="json", exclude_none=True)) == m  # dumps as it loads


def test_a_wait_step_is_registered_as_an_expression_and_carries_its_timeout() -> None:
    from splitbrain_widget.manifest._page_bindings import tail_html

    raw = _with("actions.run.bind", [{"click": "#go"}, {"wait": "sim.done"}, {"wait": "sim.t > 2", "timeout": 9}])
    m = Manifest.from_dict(raw)
    assert binding_spec(m)["actions"][0]["steps"] == [
        {"click": "#go"},
        {"wait": "sim.done", "expr_key": "action run step 1", "timeout": 5.0},
        {"wait": "sim.t > 2", "timeout": 9.0, "expr_key": "action run step 2"},
    ]
    tail = tail_html(m)
    assert '__splitbrainBindings.expr("action run step 1", () => (sim.done' in tail
    assert '__splitbrainBindings.expr("action run step 2", () => (sim.t > 2' in tail


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "data.settings.speed.bind",
            {"toggle": "#play"},
            "data.settings.speed.bind.toggle: a button that is on or off sets a boolean parameter, this one is number",
        ),
        (
            "data.settings.trail.bind",
            {"toggle": "#play", "pressed": {"label": "Pause"}},
            'data.settings.trail.bind.pressed: expected {"attr": "<attribute>"}, {"class": "<class name>"} or {"text"',
        ),
        (
            "data.settings.trail.bind",
            {"selector": "#trail", "pressed": {"text": "On"}},
            'data.settings.trail.bind.pressed: applies only to a {"toggle": ...} binding',
        ),
        ("actions.run.bind", {"assign": "trail"}, "actions.run.bind.value: an assign step needs the value to assign"),
        ("actions.run.bind", {"assign": "trail()", "value": []}, "actions.run.bind.assign: expected a dotted path"),
        (
            "actions.run.bind",
            {"click": "#run", "value": 1},
            'actions.run.bind.value: applies only to an {"assign": ...} step',
        ),
        (
            "actions.run.bind",
            {"click": "#run", "all": False},
            "actions.run.bind.all: expected true (click every match)",
        ),
        (
            "actions.run.bind",
            {"call": "go", "all": True},
            'actions.run.bind.all: applies only to a {"click": ...} binding',
        ),
        ("actions.run.bind", {"key": ""}, "actions.run.bind.key: expected a key as KeyboardEvent.key names it"),
        (
            "actions.run.bind",
            {"key": "p", "modifiers": ["hyper"]},
            "actions.run.bind.modifiers.0: expected 'shift', 'ctrl', 'alt' or 'meta' (got \"hyper\")",
        ),
        (
            "actions.run.bind",
            {"key": "p", "modifiers": ["shift", "shift"]},
            "actions.run.bind.modifiers: each at most once",
        ),
        (
            "actions.run.bind",
            {"click": "#run", "on": "canvas"},
            'actions.run.bind.on: applies only to a {"key": ...} binding',
        ),
        (
            "actions.run.bind",
            {"wait": "n", "by": 1},
            'actions.run.bind.by: applies only to a wait with "since": "start"',
        ),
        ("actions.run.bind", {"wait": "n", "since": "end"}, "actions.run.bind.since: expected 'start' (got \"end\")"),
        (
            "actions.run.bind",
            {"wait": "n", "since": "start", "by": 0},
            "actions.run.bind.by: Input should be greater than 0",
        ),
        (
            "data.settings.speed.bind",
            {"global": "x", "position": "speed / 2"},
            'data.settings.speed.bind.position: applies only to a {"drag": ...} binding',
        ),
        (
            "data.settings.speed.bind",
            {"drag": "#k", "position": "speed / 2"},
            "data.settings.speed.bind.position: a handle placed by an expression needs 'span'",
        ),
    ],
)
def test_the_shapes_pages_by_others_need_name_the_field_when_wrong(path: str, value: Any, expected: str) -> None:
    problems = _problems(_with(path, value))
    assert any(p.startswith(expected) for p in problems), problems


def test_the_new_shapes_reach_the_page_s_runtime_as_written() -> None:
    from splitbrain_widget.manifest._page_bindings import binding_spec, tail_html

    raw = _with("data.settings.trail.bind", {"toggle": "#play", "pressed": {"class": "on"}})
    raw = _with(
        "actions.run.bind",
        [
            {"key": " ", "modifiers": ["shift"], "on": "canvas"},
            {"click": ".cell.alive", "all": True},
            {"assign": "trail", "value": None},
            {"wait": "generation", "since": "start", "by": 2},
        ],
        raw,
    )
    manifest = Manifest.from_dict(raw, source="m.json")
    spec = binding_spec(manifest)
    trail = next(p for p in spec["params"] if p["path"] == "settings.trail")
    assert trail["bind"] == {"toggle": "#play", "pressed": {"class": "on"}}
    assert spec["actions"][0]["steps"] == [
        {"key": " ", "modifiers": ["shift"], "on": "canvas"},
        {"click": ".cell.alive", "all": True},
        {"assign": "trail", "value": None},
        {"wait": "generation", "since": "start", "by": 2.0, "expr_key": "action run step 3", "timeout": 5.0},
    ]
    assert '"trail": {get: () => trail, set: (v) => { trail = v; }}' in tail_html(manifest)  # assigned: a setter

"""The complete examples of docs/writing-targets.md run as written: the kit's spring (section 7)
and the bound oscillator, someone else's page steered through its manifest (section 8); each
page and manifest is taken from the doc's code blocks and run on a headless page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from splitbrain_widget import load_target

from .browser_env import require_browser

DOC = Path(__file__).resolve().parent.parent / "docs" / "writing-targets.md"


def _example(tmp_path: Path, heading: str, name: str) -> Path:
    """Write the first html and json blocks after ``heading`` as ``name``.html / .json."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", 1)]
    html = re.search(r"```html\n(.*?)```", section, re.S)
    manifest = re.search(r"```json\n(.*?)```", section, re.S)
    assert html and manifest, f"{heading}: the section holds an html and a json block"
    (tmp_path / f"{name}.html").write_text(html.group(1), encoding="utf-8")
    (tmp_path / f"{name}.json").write_text(manifest.group(1), encoding="utf-8")
    return tmp_path / f"{name}.html"


def kit_example(tmp_path: Path) -> Path:
    return _example(tmp_path, "## 7. The target kit", "spring")


def bound_example(tmp_path: Path) -> Path:
    return _example(tmp_path, "## 8. Steering a page you did not write", "oscillator")


def test_the_kit_example_is_a_kit_page_whose_parameters_are_the_manifests(tmp_path: Path) -> None:
    target = load_target(kit_example(tmp_path))
    assert target.manifest.kit and not target.manifest.bound
    assert "params:" not in target.page_html  # the kit takes the manifest's
    assert target.html.count("data-splitbrain-kit-params>") == 1


def test_the_bindings_example_loads_bound_and_its_page_knows_nothing_of_splitbrain(tmp_path: Path) -> None:
    target = load_target(bound_example(tmp_path))
    assert target.manifest.bound and set(target.manifest.actions) == {"kick"}
    assert "SplitBrain" not in target.page_html


@pytest.mark.browser
def test_the_kit_example_runs_headless(tmp_path: Path, engine: None) -> None:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(str(kit_example(tmp_path)), timeout=30) as sim:
        changed = sim.set_parameters({"amplitude": 0.2, "stiffness": 80})
        assert changed.ok and changed.state is not None, changed.error
        assert changed.state["spring.amplitude"] == 0.2 and changed.state["x"] == pytest.approx(0.2)
        after = sim.advance(1.0)
        assert after["t"] == pytest.approx(1.0, abs=0.02)
        assert after["energy"] == pytest.approx(0.5 * 80 * 0.2**2, rel=1e-2)  # ½kA²: its Euler step keeps it within 1 %
        refused = sim.set_parameter("stiffness", 500)
        assert not refused.ok and refused.error is not None and refused.error.code == "invalid_value"


@pytest.mark.browser
def test_the_bindings_example_is_steered_headless(tmp_path: Path, engine: None) -> None:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(str(bound_example(tmp_path)), timeout=30) as sim:
        first = sim.fetch_state()
        assert first.ok and first.state is not None, first.error
        assert first.state["spring.stiffness"] == 20 and first.state["spring.damped"] is False
        changed = sim.set_parameters({"stiffness": 50, "mass": 2, "damped": True})
        assert changed.ok and changed.state is not None, changed.error
        assert [changed.state[k] for k in ("spring.stiffness", "spring.mass", "spring.damped")] == [50, 2, True]
        assert changed.state["energy"] == 0  # at rest until kicked
        kicked = sim.act("kick")
        assert kicked.ok, kicked.error
        after = sim.advance(0.5)
        assert after["energy"] > 0 and after["x"] != 0, after
        assert after["shown_x"] == pytest.approx(after["x"], abs=0.001)  # the page's read-out, 3 decimals

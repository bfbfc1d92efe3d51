"""A notebook that keeps its simulation (#42): pictures in the outputs of a notebook executed headless,
and the notebook as HTML whose simulations run (``jupyter nbconvert --to splitbrain``).

The notebooks run through the real ``jupyter nbconvert`` in a subprocess with ``SPLITBRAIN_HEADLESS=1``
(as a course pipeline or an autograder runs them); the HTML is opened in Chromium with every request
but the file refused.
"""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest

from splitbrain_widget.features._pictures import SIMULATION_MIME

from .harness import wait_for

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
JUPYTER = Path(sys.executable).parent / "jupyter"
PNG_URL = "data:image/png;base64,"
WIDGET_VIEW_KEY = "application/vnd.jupyter.widget-view+json"
THREE = [
    "import splitbrain_widget as sb\na = sb.TargetWidget('bouncer')\na",
    "a.set_parameters({'color': 'red', 'size': 40})",
    "b = sb.TargetWidget('projectile')\nb.set_parameter('angle', 60)\nb",
    "c = sb.TargetWidget('bouncer')\nc.set_parameters({'color': 'seagreen', 'size': 30})\nc",
]


def notebook(folder: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    path = folder / "three.ipynb"
    nbformat.write(nb, path)
    return path


def nbconvert(*args: str, cwd: Path) -> None:
    env = {**os.environ, "SPLITBRAIN_HEADLESS": "1"}
    done = subprocess.run([str(JUPYTER), "nbconvert", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


class Pictures(HTMLParser):
    """Every ``<img>`` of a page whose source is a PNG in a data URL: its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "img" and named.get("src", "").startswith(PNG_URL):
            self.found.append(named)


def pictures_in(text: str) -> list[dict[str, str]]:
    parser = Pictures()
    parser.feed(text)
    return parser.found


def colours(png: bytes) -> list[tuple[int, tuple[int, int, int]]]:
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 20) or []


def reddish(png: bytes) -> bool:
    return any(r > 200 and g < 40 and b < 40 for _, (r, g, b) in colours(png))


def test_executed_headless_every_widget_output_has_its_picture(tmp_path: Path) -> None:
    source = notebook(tmp_path, THREE)
    # nbconvert's own defaults: nbclient keeps each widget's state in the notebook, and nbconvert's HTML
    # would prefer a widget view it has the state of (drawn by a widget manager from a CDN: an empty box
    # offline); a runner's output of a headless widget has no view, so each output is its picture
    nbconvert("--execute", "--to", "html", source.name, cwd=tmp_path)
    text = (tmp_path / "three.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" in text  # the state was saved, as nbclient does
    assert f'<script type="{WIDGET_VIEW_KEY}">' not in text  # no output is a widget view
    pictures = pictures_in(text)
    assert len(pictures) == 3, f"{len(pictures)} pictures for 3 widget outputs"
    pngs = [base64.b64decode(p["src"][len(PNG_URL) :]) for p in pictures]
    for png, picture in zip(pngs, pictures, strict=True):
        assert png.startswith(b"\x89PNG") and (picture["width"], picture["height"]) == ("960", "420")
        assert len(colours(png)) > 2, f"a blank picture ({picture['alt']})"
    # the first display was updated after the cell that turned its ball red; the third is seagreen
    assert reddish(pngs[0]) and "color red" in pictures[0]["alt"]
    assert not reddish(pngs[2]) and "color seagreen" in pictures[2]["alt"]
    assert pngs[0] != pngs[2]
    assert "angle 60 deg" in pictures[1]["alt"]


def exported_pages(page: Any) -> list[Any]:
    """The frames of the HTML that hold an exported simulation (``splitbrainExport`` in their window)."""
    found = []
    for frame in page.frames:
        try:
            if frame.evaluate("() => typeof window.splitbrainExport === 'object'"):
                found.append(frame)
        except Exception:  # a frame still loading, or gone
            continue
    return found


def records(path: Path) -> list[dict[str, Any]]:
    """Each widget output's record of its simulation as the notebook saved it, in order."""
    nb = nbformat.read(path, as_version=4)
    return [
        dict(output["data"][SIMULATION_MIME])
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if SIMULATION_MIME in output.get("data", {})
    ]


def saved_values(path: Path) -> list[dict[str, Any]]:
    """Each widget output's values as the notebook saved them, in order."""
    return [dict(r["values"]) for r in records(path)]


def findable(record: dict[str, Any], folder: Path) -> bool:
    """Whether the record's target can be loaded here (a notebook may delete its own target at its end)."""
    from splitbrain_widget.manifest.registry import TargetError, load_target

    try:
        load_target(record["target"], *(folder / d for d in record.get("targets_dirs") or []))
    except TargetError:
        return False
    return True


def check_live(page: Any, html_path: Path, expected: list[dict[str, Any]]) -> None:
    page.goto(html_path.as_uri())
    if not expected:
        page.wait_for_load_state("load")
        assert exported_pages(page) == []
        return
    frames = wait_for(
        lambda: (f := exported_pages(page)) and len(f) == len(expected) and f,
        timeout=60,
        what=f"{len(expected)} live simulations in {html_path.name}",
    )
    for frame, values in zip(frames, expected, strict=True):
        wait_for(
            lambda frame=frame: (
                frame.evaluate("() => document.querySelector('.splitbrain-view')?.dataset.status") == "ready"
            ),
            timeout=60,
            what=f"a simulation of {html_path.name} to be ready",
        )
        held = frame.evaluate("() => window.splitbrainExport.values()")
        assert held == values


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three widgets' notebook executed headless by nbconvert: run once for the tests below."""
    folder = tmp_path_factory.mktemp("executed")
    source = notebook(folder, THREE)
    nbconvert("--execute", "--to", "notebook", "--output", "ran.ipynb", source.name, cwd=folder)
    return folder / "ran.ipynb"


def as_a_notebook_saves_it(ran: Path, saved_state: bool) -> Any:
    """The executed notebook's widget outputs as a live notebook saves them: the widget view beside the
    picture and the record, with the widget state (JupyterLab's "save widget state") or without (its
    default). A runner's outputs have no view; each gets its widget's model, found in the state by its
    target and values (the state nbclient saved may hold older values: then the one left of its target)."""
    nb = nbformat.read(ran, as_version=4)
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    models = {key: m["state"] for key, m in state.items() if isinstance(m["state"].get("target_id"), str)}
    outputs = [o for cell in nb.cells for o in cell.get("outputs", []) if SIMULATION_MIME in o.get("data", {})]
    assert len(models) == len(outputs) == 3
    for output in sorted(
        outputs, key=lambda o: not any(m["values"] == o["data"][SIMULATION_MIME]["values"] for m in models.values())
    ):
        record = output["data"][SIMULATION_MIME]
        same = [k for k, m in models.items() if m["target_id"] == record["target"]]
        model_id = next((k for k in same if models[k]["values"] == record["values"]), same[0])
        del models[model_id]
        assert WIDGET_VIEW_KEY not in output["data"]
        output["data"][WIDGET_VIEW_KEY] = {"model_id": model_id, "version_major": 2, "version_minor": 0}
    if not saved_state:
        del nb.metadata["widgets"]
    return nb


def test_executed_and_exported_every_widget_output_is_a_live_page(
    offline_page: tuple[Any, list[str]], tmp_path: Path, executed: dict[bool, Path]
) -> None:
    page, refused = offline_page
    ran = tmp_path / "ran.ipynb"
    ran.write_bytes(executed.read_bytes())
    nbconvert("--to", "splitbrain", ran.name, cwd=tmp_path)
    expected = saved_values(ran)
    assert [v["display.color"] for v in (expected[0], expected[2])] == ["red", "seagreen"]
    check_live(page, tmp_path / "ran.html", expected)
    # what was refused is nbconvert's own template (its CDN scripts), never a simulation's
    assert {re.sub(r"^https?://([^/]+)/.*$", r"\1", url) for url in refused} <= {"cdnjs.cloudflare.com", "unpkg.com"}


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_the_exporter_makes_every_example_notebook_s_simulations_live(
    offline_page: tuple[Any, list[str]], tmp_path: Path, name: str
) -> None:
    page, _refused = offline_page
    source = ROOT / "notebooks" / f"{name}.ipynb"
    saved = records(source)
    live = [r for r in saved if findable(r, source.parent)]
    out = tmp_path / f"{name}.html"
    done = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "export", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    gone = len(saved) - len(live)  # your_own_target.ipynb deletes its own target in its last cell
    assert f"{len(live)} live simulation(s), {gone} picture(s)" in done.stdout
    ours = {
        output["data"]["image/png"].replace("\n", "")
        for cell in nbformat.read(source, as_version=4).cells
        for output in cell.get("outputs", [])
        if SIMULATION_MIME in output.get("data", {}) and "image/png" in output["data"]
    }
    shown = [p for p in pictures_in(out.read_text(encoding="utf-8")) if p["src"][len(PNG_URL) :] in ours]
    assert len(shown) == gone  # a widget output with no page is its picture (a matplotlib figure is not one)
    check_live(page, out, [dict(r["values"]) for r in live])


# What JupyterLab and Notebook 7 show, measured, for a saved widget output whose model is gone: the
# notebook saved from a live notebook, reopened, its kernel fresh (nothing run), with or without the
# widget state saved, trusted (the person's own notebook: its signature is in their database) or not
# (a notebook from elsewhere).
@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize("saved_state", [False, True], ids=["no-widget-state", "widget-state"])
def test_what_a_reopened_notebook_shows_for_a_widget_output(
    page: Any, server: Any, saved_state: bool, trusted: bool, executed: Path
) -> None:
    from .harness import KERNEL_DISPLAY_NAME, KERNEL_NAME, NotebookPage

    name = f"reopened-{saved_state}-{trusted}-{os.getpid()}.ipynb"
    ran = as_a_notebook_saves_it(executed, saved_state)
    ran.metadata["kernelspec"] = {"display_name": KERNEL_DISPLAY_NAME, "language": "python", "name": KERNEL_NAME}
    nbformat.write(ran, server.root_dir / name)
    if trusted:
        env = {**os.environ, "JUPYTER_DATA_DIR": str(server.base / "data"), "JUPYTER_PLATFORM_DIRS": "1"}
        done = subprocess.run([str(JUPYTER), "trust", str(server.root_dir / name)], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr

    nb = NotebookPage(page, server, name, THREE).open()
    area = page.locator(".jp-OutputArea-output").first

    def settled() -> str | None:
        text = area.inner_text(timeout=5000)
        if "Loading widget" in text:
            return None
        if area.locator(".splitbrain-view").count():
            return "live view"
        if area.locator("img").count():
            return "picture"
        return f"text: {text.strip()[:120]!r}"

    shown = wait_for(settled, timeout=60, what="the widget output to settle")
    state = "with" if saved_state else "without"
    print(f"\nnote: {server.app}, {'trusted' if trusted else 'untrusted'}, {state} saved widget state: {shown}")
    if not trusted:  # the widget view is not a safe output: the richest safe one is shown, the picture
        assert shown == "picture"
    elif saved_state:  # the widget manager rebuilds the model from the notebook: the page runs again
        assert shown == "live view"
    else:  # the widget manager says so, and shows nothing else (it does not fall back to another mimetype)
        assert shown.startswith("text:") and "model not found" in shown
    nb.page.close()


LIVE = [
    "import splitbrain_widget as sb\nsim = sb.TargetWidget('bouncer')\nsim",
    "sim.set_parameters({'speed': 0, 'color': 'red', 'size': 40})",
]
TOLERANCE = 12  # the mean difference per channel (0-255) between the saved picture and the live frame


def test_a_live_notebook_saved_after_a_change_keeps_the_picture_of_its_frame(open_notebook: Any, server: Any) -> None:
    from PIL import Image, ImageChops, ImageStat

    nb = open_notebook(LIVE)
    nb.run_all()
    nb.wait_view(0)
    # the kernel keeps the view's picture once the page settled from the change; the server writes it
    # into the output when the notebook is saved
    saved_picture: dict[str, bytes] = {}

    def saved_red() -> bool:
        nb.save()
        source = nbformat.read(server.root_dir / nb.name, as_version=4)
        data = source.cells[0].outputs[0]["data"]
        if "image/png" not in data:
            return False
        png = base64.b64decode(data["image/png"])
        saved_picture["png"] = png
        return reddish(png) and data[SIMULATION_MIME]["values"]["display.color"] == "red"

    wait_for(saved_red, timeout=30, what="the saved notebook to hold the picture of the red ball")
    source = nbformat.read(server.root_dir / nb.name, as_version=4)
    data = source.cells[0].outputs[0]["data"]
    assert 'alt="Bouncing ball. Set: speed 0 m/s, color red, size 40 px' in data["text/html"]
    assert WIDGET_VIEW_KEY in data  # the live view stays the output, the picture is beside it
    saved = Image.open(io.BytesIO(saved_picture["png"])).convert("RGB")
    live = Image.open(io.BytesIO(nb.target_iframe(0).screenshot())).convert("RGB").resize(saved.size)
    difference = ImageStat.Stat(ImageChops.difference(saved, live)).mean
    print(f"\nnote: {server.app}: saved picture {saved.size} vs the live frame: mean difference {difference}")
    assert max(difference) < TOLERANCE


def test_a_runner_s_display_is_the_picture_and_a_person_s_notebook_keeps_the_view() -> None:
    """One kernel under SPLITBRAIN_HEADLESS=1, its cells sent as a notebook sends them (``allow_stdin``
    true, as JupyterLab 4's requestExecute does) or as a runner does (false, as nbclient and nbval do)."""
    from ..scripted_frontend import ScriptedFrontend

    fe = ScriptedFrontend(env={"SPLITBRAIN_HEADLESS": "1"})
    try:
        person = fe.run("import splitbrain_widget as sb\nsim = sb.TargetWidget('bouncer')\nsim")
        (shown,) = person.outputs
        assert WIDGET_VIEW_KEY in shown["data"] and "image/png" not in shown["data"]  # no page started for it
        assert "display_id" not in shown.get("transient", {})
        changed = fe.run("sim.set_parameters({'color': 'red'})")
        assert changed.error is None and changed.updates == []  # a notebook's output is never redrawn

        ran = fe.run("other = sb.TargetWidget('bouncer')\nother", allow_stdin=False)
        (shown,) = ran.outputs
        assert WIDGET_VIEW_KEY not in shown["data"] and SIMULATION_MIME in shown["data"]
        assert not reddish(base64.b64decode(shown["data"]["image/png"]))
        display_id = shown["transient"]["display_id"]
        changed = fe.run("other.set_parameters({'color': 'red'})", allow_stdin=False)
        (update,) = changed.updates
        assert update["transient"]["display_id"] == display_id and WIDGET_VIEW_KEY not in update["data"]
        assert reddish(base64.b64decode(update["data"]["image/png"]))
        assert update["data"][SIMULATION_MIME]["values"]["display.color"] == "red"
    finally:
        fe.close()


HEADLESS_LIVE = [
    "import os\nos.environ['SPLITBRAIN_HEADLESS'] = '1'\nimport splitbrain_widget as sb\nsim = sb.TargetWidget('bouncer')\nsim",
    "sim.set_parameters({'speed': 0, 'color': 'red', 'size': 40})",
]


def test_a_live_notebook_under_the_headless_variable_keeps_its_view(open_notebook: Any, server: Any) -> None:
    """A classroom's image may set SPLITBRAIN_HEADLESS=1 for its autograder: a student's notebook still
    shows the live view, and saves it, with the picture of its frame beside it."""
    nb = open_notebook(HEADLESS_LIVE)
    nb.run_all()
    nb.wait_view(0)

    def saved() -> dict[str, Any] | None:
        nb.save()
        data = nbformat.read(server.root_dir / nb.name, as_version=4).cells[0].outputs[0]["data"]
        png = data.get("image/png")
        return data if png and reddish(base64.b64decode(png)) else None

    data = wait_for(saved, timeout=30, what="the saved notebook to hold the picture of the red ball")
    assert WIDGET_VIEW_KEY in data and data[SIMULATION_MIME]["values"]["display.color"] == "red"
    assert nb.page.locator(".jp-OutputArea-output .splitbrain-view").count() == 1

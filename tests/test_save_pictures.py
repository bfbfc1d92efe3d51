"""The saved notebook's pictures of live widgets (#42): what the kernel keeps for the notebook server
(``features/_picture_cache.py``) and the server's pre-save hook that writes it into the outputs
(``features/_save_pictures.py``). tests/browser/test_notebook_pictures_browser.py runs both in JupyterLab and
Notebook 7."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from splitbrain_widget.features import _picture_cache, _save_pictures

VIEW = "application/vnd.jupyter.widget-view+json"
KEPT = {
    "image/png": "iVBORw0KGgo=",
    "text/html": '<img src="data:image/png;base64,iVBORw0KGgo=" alt="a ball">',
    "application/vnd.splitbrain.simulation+json": {"target": "bouncer", "values": {"display.color": "red"}},
}


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    return tmp_path / _picture_cache.DIR_NAME


def widget_output(model_id: str) -> dict[str, Any]:
    return {"output_type": "display_data", "data": {"text/plain": "w", VIEW: {"model_id": model_id}}, "metadata": {}}


def notebook(*outputs: dict[str, Any]) -> dict[str, Any]:
    cells = [
        {"cell_type": "markdown", "source": "# hi"},
        {"cell_type": "code", "source": "w", "outputs": list(outputs)},
    ]
    return {"type": "notebook", "content": {"cells": cells}}


def test_what_the_kernel_keeps_is_what_the_server_reads(runtime: Path) -> None:
    path = _picture_cache.write("abc123", {**KEPT, "application/vnd.jupyter.widget-view+json": {"model_id": "x"}})
    assert path == runtime / "abc123.json"
    assert _picture_cache.read("abc123") == KEPT  # only the three mimetypes, never the view
    _picture_cache.remove("abc123")
    assert _picture_cache.read("abc123") is None


@pytest.mark.parametrize("model_id", ["../escape", "a/b", "", "x" * 65, "spaces here"])
def test_a_model_id_that_is_no_plain_name_is_never_a_path(model_id: str, runtime: Path) -> None:
    assert _picture_cache.write(model_id, KEPT) is None and _picture_cache.read(model_id) is None
    assert not runtime.exists() or list(runtime.iterdir()) == []


def test_a_file_too_big_or_not_an_object_is_not_read(runtime: Path) -> None:
    runtime.mkdir(parents=True)
    (runtime / "big.json").write_text('"' + "A" * (_picture_cache.MAX_FILE_CHARS + 1) + '"')
    (runtime / "list.json").write_text("[1, 2]")
    (runtime / "broken.json").write_text("{")
    assert [_picture_cache.read(m) for m in ("big", "list", "broken")] == [None, None, None]


def test_old_files_and_all_but_the_newest_are_pruned(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_picture_cache, "KEEP_FILES", 3)
    for n in range(5):
        _picture_cache.write(f"w{n}", KEPT)
        os.utime(runtime / f"w{n}.json", (time.time() - 100 + n, time.time() - 100 + n))
    old = time.time() - _picture_cache.KEEP_S - 10
    _picture_cache.write("gone", KEPT)
    os.utime(runtime / "gone.json", (old, old))
    _picture_cache.write("new", KEPT)
    assert sorted(p.stem for p in runtime.glob("*.json")) == ["new", "w3", "w4"]


def test_the_hook_puts_the_kept_picture_into_every_output_of_that_widget_only() -> None:
    _picture_cache.write("m1", KEPT)
    model = notebook(widget_output("m1"), widget_output("m2"), widget_output("m1"))
    _save_pictures.add_pictures(model=model, path="lesson.ipynb", contents_manager=None)
    first, other, again = model["content"]["cells"][1]["outputs"]
    assert first["data"]["image/png"] == KEPT["image/png"] and again["data"]["text/html"] == KEPT["text/html"]
    assert first["data"][VIEW] == {"model_id": "m1"}  # the view stays
    assert set(other["data"]) == {"text/plain", VIEW}  # no picture kept for m2: left alone


@pytest.mark.parametrize(
    "model",
    [
        None,
        {"type": "file", "content": "x"},
        {"type": "notebook", "content": None},
        {"type": "notebook", "content": {"cells": [1, {"outputs": [7]}]}},
    ],
)
def test_the_hook_never_breaks_a_save(model: Any) -> None:
    _save_pictures.add_pictures(model=model, path="x", contents_manager=None)


def test_the_hook_registers_on_a_contents_manager() -> None:
    hooks: list[Any] = []

    class Manager:
        def register_pre_save_hook(self, hook: Any) -> None:
            hooks.append(hook)

    class App:
        contents_manager = Manager()

    assert _save_pictures.register(App()) and hooks == [_save_pictures.add_pictures]
    assert not _save_pictures.register(object())

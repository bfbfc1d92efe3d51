"""A non-editable install ships the built-in targets and the built JS; no node needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The build gets a PATH with only this venv's bin: node (and npm) must be out of its reach, so a
    # build step that needed them would fail here instead of quietly using the machine's node.
    build_path = os.path.dirname(sys.executable)
    assert shutil.which("node", path=build_path) is None and shutil.which("npm", path=build_path) is None
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        env={**os.environ, "PATH": build_path},
    )
    (found,) = out.glob("splitbrain_widget-*.whl")
    return found


def test_the_wheel_holds_targets_and_built_js(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "splitbrain_widget/static/widget.js" in names
    assert "splitbrain_widget/static/target_api.js" in names
    assert "splitbrain_widget/targets/bouncer.html" in names
    assert "splitbrain_widget/targets/bouncer.json" in names
    assert "splitbrain_widget/targets/projectile.skills/projectile-physics.md" in names  # a target's own skill
    assert not any(n.startswith("tests/") or "node_modules" in n for n in names)


def test_an_installed_wheel_lists_the_builtin_targets(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True
    )
    out = subprocess.run(
        [sys.executable, "-c", "import splitbrain_widget as sb; print(sb.__file__); print(sb.list_targets())"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout, so the checkout's package cannot be imported
        env={**os.environ, "PYTHONPATH": str(target)},
    ).stdout
    assert out.splitlines()[0].startswith(str(target))
    assert "bouncer" in out and "Bouncing ball" in out

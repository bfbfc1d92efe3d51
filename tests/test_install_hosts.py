"""Installing the package never upgrades the host's kernel (issue #19).

Hosted runtimes pin their kernel (Colab ships ipykernel 5.x / 6.x and warns that upgrading it can
crash the runtime). The wheel is built and installed, with its dependencies resolved from the
package index as a user's ``pip install`` would, into each venv of ``make kernel-matrix`` (ipykernel
7.0.1, 6.29.5 and 5.5.6, the venv that :data:`~tests.kernel_python.KERNEL_PYTHON` names); the
ipykernel release there must be the same afterwards. The matrix's kernels still import the checkout
(``PYTHONPATH``), so the installed copy changes nothing the kernel tests see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .kernel_python import KERNEL_PYTHON

ROOT = Path(__file__).resolve().parent.parent
VERSION = "import importlib.metadata as m; print(m.version('ipykernel'))"

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(
        not os.environ.get("SPLITBRAIN_KERNEL_PYTHON"),
        reason="runs in `make kernel-matrix`, in each venv of the matrix (an older ipykernel to keep)",
    ),
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
    )
    (found,) = out.glob("splitbrain_widget-*.whl")
    return found


def installed_ipykernel(python: str) -> str:
    return subprocess.run([python, "-c", VERSION], check=True, capture_output=True, text=True).stdout.strip()


def test_installing_the_wheel_leaves_the_hosts_ipykernel_alone(wheel: Path, tmp_path: Path) -> None:
    python = KERNEL_PYTHON
    release = installed_ipykernel(python)
    # a fresh install each run, so the resolver reads this wheel's requirements, not an older install's
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "splitbrain-widget"], capture_output=True)
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    assert installed_ipykernel(python) == release, f"installing the wheel changed ipykernel {release} in {python}"
    out = subprocess.run(
        [python, "-c", "import splitbrain_widget as sb; print(sb.__file__); print(sb.list_targets())"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout, so the installed copy is the one imported
    ).stdout
    assert "site-packages" in out.splitlines()[0] and "bouncer" in out

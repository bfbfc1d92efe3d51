"""Installing the package never upgrades the host's kernel (issue #19).

Hosted runtimes pin their kernel (Colab ships ipykernel 5.x / 6.x and warns that upgrading it can
crash the runtime). The wheel is built once and installed, with its dependencies resolved from the
package index as a user's ``pip install`` would, into venvs that hold an older ipykernel; the
ipykernel release there must be the same afterwards. The venvs stay under the checkout
(``.venv-ipykernel-<release>-host``, ``make clean`` removes them) and are reused: only the first run
downloads the dependencies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the release, and what else its venv needs to run it (ipykernel 5 calls IPython's should_run_async
# the way IPython < 8 takes it; Colab pairs it with IPython 7.34)
HOSTS = {"6.29.5": [], "5.5.6": ["ipython==7.34.0"]}
VERSION = "import importlib.metadata as m; print(m.version('ipykernel'))"

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(
        bool(os.environ.get("SPLITBRAIN_KERNEL_PYTHON")),
        reason="runs once, in `make kernel`: it does not depend on the kernel the matrix picks",
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


def host_venv(release: str) -> Path:
    """A venv that holds ipykernel ``release`` (made once; ``.ok`` marks it complete)."""
    venv = ROOT / f".venv-ipykernel-{release}-host"
    python = venv / "bin" / "python"
    if not (venv / ".ok").exists():
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        pins = HOSTS[release]
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"ipykernel=={release}", *pins], check=True, timeout=900
        )
        (venv / ".ok").touch()
    return python


def installed_ipykernel(python: Path) -> str:
    return subprocess.run([str(python), "-c", VERSION], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("release", list(HOSTS))
def test_installing_the_wheel_leaves_the_hosts_ipykernel_alone(wheel: Path, release: str, tmp_path: Path) -> None:
    python = host_venv(release)
    assert installed_ipykernel(python) == release
    # a fresh install each run, so the resolver reads this wheel's requirements, not an older install's
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "splitbrain-widget"], capture_output=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    assert installed_ipykernel(python) == release, f"installing the wheel changed ipykernel {release}"
    out = subprocess.run(
        [str(python), "-c", "import splitbrain_widget as sb; print(sb.__file__); print(sb.list_targets())"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the checkout, so the installed copy is the one imported
    ).stdout
    assert "site-packages" in out.splitlines()[0] and "bouncer" in out

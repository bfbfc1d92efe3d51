"""`make demo` opens the quickstart notebook: the URL it prints and the redirect file it writes.

The test runs the Makefile's own ``demo`` rule (``make -o <stamp> demo``, so nothing is installed)
with ``DEMO_ARGS`` for a free port on 127.0.0.1 and ``--no-browser``, in isolated Jupyter config,
data and runtime dirs. It waits for the server by polling (its runtime file, then /api/status)
and stops it by its process group.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .browser_env import stop_process_group

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)  # the venv running the tests; the rule's $(VENV)
STAMP = VENV / ".installed-dev"
QUICKSTART = "/lab/tree/quickstart.ipynb"
START_TIMEOUT_S = 90.0  # a generous ceiling for a loaded machine; a normal start takes ~3-5 s
URL_RE = re.compile(r"https?://[^\s\"'<>]+token=[0-9a-f]+")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _make(*args: str) -> list[str]:
    return ["make", "--no-print-directory", "-C", str(ROOT), f"VENV={VENV}", "-o", str(STAMP), *args]


def _wait_for(check: Callable[[], Any], what: str, proc: subprocess.Popen[bytes], log: Path) -> Any:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"make demo exited with {proc.returncode} before {what}:\n{log.read_text()[-4000:]}")
        result = check()
        if result:
            return result
        time.sleep(0.05)  # a poll interval, not a guess at how long the start takes
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-4000:]}")


@dataclass
class Demo:
    proc: subprocess.Popen[bytes]
    log: Path
    runtime: Path
    info: dict[str, Any]  # the server's jpserver-<pid>.json

    def get(self, url: str) -> tuple[str, int, str]:
        """GET ``url`` following redirects: (final url, status, body)."""
        with urllib.request.urlopen(url, timeout=20) as resp:
            return resp.geturl(), resp.status, resp.read().decode("utf-8", "replace")

    def api(self, path: str) -> Any:
        req = urllib.request.Request(
            f"{self.info['url'].rstrip('/')}{path}", headers={"Authorization": f"token {self.info['token']}"}
        )
        with urllib.request.urlopen(req, timeout=20) as resp:
            return json.loads(resp.read())


def _status_ok(info: dict[str, Any]) -> bool:
    try:
        req = urllib.request.Request(
            f"{info['url'].rstrip('/')}/api/status", headers={"Authorization": f"token {info['token']}"}
        )
        with urllib.request.urlopen(req, timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    if shutil.which("make") is None or not (VENV / "bin" / "jupyter").exists():
        pytest.fail(f"make demo needs make and {VENV}/bin/jupyter")
    base = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "MAKE", "MFLAGS"))}
    env.update(
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
    )
    args = f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={_free_port()} --ServerApp.port_retries=0"
    log = base / "demo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            _make("demo", f"DEMO_ARGS={args}"),
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    runtime = base / "runtime"
    try:

        def server_info() -> dict[str, Any] | None:
            for path in runtime.glob("jpserver-*.json"):
                try:
                    info: dict[str, Any] = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue  # being written
                return info
            return None

        info = _wait_for(server_info, "the server's runtime file", proc, log)
        _wait_for(lambda: _status_ok(info), "GET /api/status", proc, log)
        yield Demo(proc, log, runtime, info)
    finally:
        stop_process_group(proc, 20)


def _assert_opens_quickstart(url: str, demo: Demo) -> None:
    parts = urllib.parse.urlsplit(url)
    assert parts.path == QUICKSTART, url
    assert urllib.parse.parse_qs(parts.query).get("token") == [demo.info["token"]], url


def test_the_printed_url_opens_the_quickstart_notebook(demo: Demo) -> None:
    printed = URL_RE.findall(demo.log.read_text())
    assert printed, demo.log.read_text()[-4000:]
    for url in printed:
        _assert_opens_quickstart(url, demo)
    final, status, body = demo.get(printed[0])
    assert status == 200
    _assert_opens_quickstart(final, demo)
    # The lab page itself says which document it opens.
    config = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', body, re.S)
    assert config is not None, body[:2000]
    page = json.loads(config.group(1))
    assert page["appName"] == "JupyterLab"
    assert page["treePath"] == "quickstart.ipynb"


def test_the_redirect_file_opens_the_quickstart_notebook(demo: Demo) -> None:
    opener = demo.runtime / f"jpserver-{demo.info['pid']}-open.html"
    html = opener.read_text()
    targets = re.findall(r'href="([^"]+)"', html) + re.findall(r'content="\d+;url=([^"]+)"', html)
    assert len(targets) == 2, html
    for url in targets:
        _assert_opens_quickstart(url, demo)


def test_the_server_root_is_the_notebooks_folder(demo: Demo) -> None:
    # The bare server URL redirects to the notebook too, and the notebook is really there.
    final, status, _ = demo.get(f"{demo.info['url'].rstrip('/')}/?token={demo.info['token']}")
    assert status == 200
    _assert_opens_quickstart(final, demo)
    assert Path(demo.info["root_dir"]) == ROOT / "notebooks"
    model = demo.api("/api/contents/quickstart.ipynb?content=0")
    assert model["type"] == "notebook" and model["path"] == "quickstart.ipynb"


def test_the_demo_runs_as_root_with_allow_root_only() -> None:
    line = subprocess.run(_make("-s", "-n", "demo"), check=True, capture_output=True, text=True).stdout
    assert "jupyter lab" in line
    assert ("--allow-root" in line) == (os.geteuid() == 0), line

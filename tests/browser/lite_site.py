"""An offline JupyterLite site for the browser layer: a local Pyodide and every wheel the package needs.

The product builds the site (``python -m splitbrain_widget lite build --pyodide DIR --wheels DIR``);
this module makes what it is given, from the registries alone, cached in ``~/.cache/splitbrain-widget/lite``:

- **the Pyodide the kernel pins** (``jupyterlite_pyodide_kernel.constants.PYODIDE_VERSION``): npm
  ``pyodide@<version>`` holds its core (runtime, standard library, a lock naming ~356 packages, none
  of their wheels). The kernel's own packages (micropip, packaging, ipython, jedi and what they need)
  are downloaded from PyPI at the lock's versions and the lock's entries pointed at them (Pyodide
  repacks its wheels, so names and checksums differ); every other entry, having no file, is dropped.
- **the package's dependencies** for that Pyodide's platform (``pyemscripten_<abi>_wasm32``, pure
  wheels elsewhere; pydantic-core has a WebAssembly wheel on PyPI), with the kernel's in-index extras
  (comm, ipython-pygments-lexers), for the site's index: the site then reaches no other host.

Recipe measured on this machine with jupyterlite-pyodide-kernel 0.8.6 (Pyodide 314.0.6, Python 3.14).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, ClassVar

CACHE = Path(os.environ.get("SPLITBRAIN_LITE_CACHE", Path.home() / ".cache" / "splitbrain-widget" / "lite"))
KERNEL_LOCK_ROOTS = ["micropip", "packaging", "ipython", "jedi"]  # what the kernel loads from the lock
KERNEL_INDEX_EXTRAS = ["comm", "ipython-pygments-lexers"]  # what it installs that the lock does not hold
NEVER_IN_INDEX = {"widgetsnbextension"}  # the kernel ships its own stub; a real one would win


class LiteUnavailable(RuntimeError):
    """The site's parts cannot be fetched here (no npm, no registry): the message says which."""


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name(file_name: str) -> str:
    return canon(file_name.split("-")[0])


def _run(command: list[str], log: Path) -> None:
    env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    if done.returncode != 0:
        raise LiteUnavailable(f"{' '.join(command[:4])} ... failed: {log.read_text()[-2000:]}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pyodide_version() -> str:
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    return str(PYODIDE_VERSION)


def _core(version: str) -> Path:
    """npm's pyodide@version, unpacked (cached)."""
    where = CACHE / f"npm-pyodide-{version}"
    package = where / "package"
    if (package / "pyodide-lock.json").is_file():
        return package
    if shutil.which("npm") is None:
        raise LiteUnavailable("npm is needed to fetch Pyodide's core (npm pack pyodide)")
    where.mkdir(parents=True, exist_ok=True)
    _run(["npm", "pack", f"pyodide@{version}", "--pack-destination", str(where)], where / "npm.log")
    with tarfile.open(next(where.glob("pyodide-*.tgz"))) as archive:
        archive.extractall(where, filter="data")
    return package


def _download(requirements: list[str], into: Path, tags: dict[str, str], log: Path, *, deps: bool = True) -> None:
    into.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "-d", str(into), "--only-binary=:all:"]
    command += ["--python-version", tags["python"], "--implementation", "cp"]
    command += ["--platform", tags["platform"], "--platform", "any"]
    command += ["--abi", tags["abi"], "--abi", "abi3", "--abi", "none"]
    command += [] if deps else ["--no-deps"]
    _run([*command, *requirements], log)


def _tags(lock: dict[str, object]) -> dict[str, str]:
    info = lock["info"]
    assert isinstance(info, dict)
    python = ".".join(str(info["python"]).split(".")[:2])
    return {
        "python": python,
        "abi": "cp" + python.replace(".", ""),
        "platform": f"pyemscripten_{info['abi_version']}_wasm32",
    }


def _closure(packages: dict[str, dict[str, object]], roots: list[str]) -> list[str]:
    by_name = {canon(k): v for k, v in packages.items()}
    seen: list[str] = []
    todo = [canon(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        seen.append(name)
        depends = by_name[name].get("depends") or []
        assert isinstance(depends, list)
        todo += [canon(str(d)) for d in depends]
    return seen


def local_pyodide() -> Path:
    """The pinned Pyodide's core with the kernel's wheels from PyPI and a lock naming them (cached)."""
    version = pyodide_version()
    folder = CACHE / f"pyodide-{version}"
    if (folder / "pyodide-lock.json").is_file() and (folder / ".complete").is_file():
        return folder
    core = _core(version)
    lock = json.loads((core / "pyodide-lock.json").read_text(encoding="utf-8"))
    tags = _tags(lock)
    packages: dict[str, dict[str, object]] = lock["packages"]
    names = {canon(k): k for k in packages}
    wheels = CACHE / "kernel-wheels"
    for name in _closure(packages, KERNEL_LOCK_ROOTS):
        version_of = packages[names[name]]["version"]
        if not any(wheel_name(w.name) == name and w.name.split("-")[1] == version_of for w in wheels.glob("*.whl")):
            _download(
                [f"{name}=={version_of}"], wheels, {**tags, "platform": "any"}, CACHE / f"kernel-{name}.log", deps=False
            )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for item in core.iterdir():
        if item.is_file() and item.suffix not in (".map", ".ts", ".html", ".md") and item.name != "package.json":
            shutil.copy2(item, folder / item.name)
    kept: dict[str, dict[str, object]] = {}
    for key, entry in packages.items():
        found = [
            w
            for w in wheels.glob("*.whl")
            if wheel_name(w.name) == canon(key) and w.name.split("-")[1] == entry["version"]
        ]
        if found:
            shutil.copy2(found[0], folder / found[0].name)
            kept[key] = {**entry, "file_name": found[0].name, "sha256": _sha256(found[0])}
    (folder / "pyodide-lock.json").write_text(json.dumps({**lock, "packages": kept}, indent=1), encoding="utf-8")
    (folder / ".complete").write_text(version, encoding="utf-8")
    return folder


def dependency_wheels(requirements: list[str]) -> Path:
    """Wheels of ``requirements`` and everything they need, for the pinned Pyodide (cached by the list)."""
    pyodide = local_pyodide()
    lock = json.loads((pyodide / "pyodide-lock.json").read_text(encoding="utf-8"))
    wanted = sorted({*requirements, *KERNEL_INDEX_EXTRAS})
    key = hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:12]
    folder = CACHE / f"index-{key}"
    if (folder / ".complete").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    constraints = CACHE / "kernel-constraints.txt"
    constraints.write_text(
        "".join(f"{canon(k)}=={v['version']}\n" for k, v in lock["packages"].items()), encoding="utf-8"
    )
    _download([*wanted, "-c", str(constraints)], folder, _tags(lock), CACHE / f"index-{key}.log")
    for wheel in folder.glob("*.whl"):
        if wheel_name(wheel.name) in NEVER_IN_INDEX or any(
            canon(k) == wheel_name(wheel.name) for k in lock["packages"]
        ):
            wheel.unlink()  # the kernel's own, from the lock
    (folder / ".complete").write_text("\n".join(wanted), encoding="utf-8")
    return folder


# -- the site, served, and its notebook driven (the browser layer's test and benchmarks/lite.py) -------

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "lite" / "quickstart.ipynb"


def requirements() -> list[str]:
    """The package's dependencies as the browser installs them (the emscripten markers left out):
    the ones the other layers test at the versions they test; the kernel's own (traitlets) as its
    Pyodide lock pins them; httpx2's own dependency in the browser (a marker pip, fetching for
    another platform, does not evaluate)."""
    import importlib.metadata

    pinned = [
        f"{n}=={importlib.metadata.version(n)}" for n in ("anywidget", "pydantic", "pydantic-ai-slim", "pint", "openai")
    ]
    return [*pinned, "ipywidgets>=7.6", "traitlets>=5.9", "typing_extensions>=4.6", "tqdm>=4.66", "httpx2-jsfetch"]


def build_site(out: Path, notebooks: list[Path] | None = None) -> Path:
    """The product's ``lite build`` of ``notebooks`` (the quickstart) with the local Pyodide and wheels."""
    pyodide, wheels = local_pyodide(), dependency_wheels(requirements())
    command = [sys.executable, "-m", "splitbrain_widget", "lite", "build", *map(str, notebooks or [QUICKSTART])]
    command += ["-o", str(out), "--pyodide", str(pyodide), "--wheels", str(wheels), "--expose-app"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lite build failed: {done.stderr[-3000:]}")
    return out


def serve(site: Path) -> tuple[str, Any]:
    """Serve ``site`` on 127.0.0.1: (its URL, a function that stops it)."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map: ClassVar[dict[str, str]] = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".wasm": "application/wasm",
        }

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    return f"http://127.0.0.1:{httpd.server_address[1]}", stop


def gated_context(browser: Any) -> tuple[Any, list[str]]:
    """A browser context where every request to a host other than 127.0.0.1 is refused and listed."""
    from urllib.parse import urlparse

    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    refused: list[str] = []

    def gate(route: Any) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    context.route("**/*", gate)
    return context, refused


def open_notebook(page: Any, url: str, name: str) -> None:
    """Open notebook ``name`` of the site at ``url`` and wait for its Pyodide kernel to be idle."""
    from .harness import wait_for

    page.goto(f"{url}/lab/index.html?path={name}")
    wait_for(
        lambda: page.evaluate("() => !!window.jupyterapp && !!window.jupyterapp.shell.currentWidget"),
        timeout=60,
        what="the notebook",
    )
    wait_for(
        lambda: page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel?.status === 'idle'"
        ),
        timeout=120,
        what="the Pyodide kernel to start",
    )


def outputs(page: Any, cell: int) -> str:
    return str(
        page.evaluate(
            """(i) => {
              const c = window.jupyterapp.shell.currentWidget.content.widgets[i];
              return c && c.outputArea ? c.outputArea.node.innerText : "";
            }""",
            cell,
        )
    )


def run_cell(page: Any, cell: int) -> None:
    """Run one cell, as a person does with Shift+Enter, and wait for it to end and the kernel to be idle."""
    from .harness import wait_for

    page.evaluate(
        """(i) => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = i;
                    window.jupyterapp.commands.execute('notebook:run-cell'); }""",
        cell,
    )

    def ended() -> bool:
        count = page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount", cell
        )
        status = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status")
        return bool(count) and status == "idle"

    wait_for(ended, timeout=180, what=f"cell {cell} to run", describe=lambda: outputs(page, cell))


def page_state(page: Any) -> dict[str, Any]:
    """The projectile's state as its page keeps it (the kit's ``body.dataset.state``), in the target's
    frame inside the view's sandbox frame."""
    for frame in page.frames:
        try:
            text = frame.evaluate("() => (document.body && document.body.dataset.state) || ''")
        except Exception:  # a frame going away, or one the sandbox keeps closed
            continue
        if text:
            return dict(json.loads(text))
    return {}

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

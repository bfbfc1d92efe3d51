"""``python -m splitbrain_widget lite build [NOTEBOOKS...] -o site/``: a JupyterLite course site.

A folder of static files any web host can serve (a school's web space, GitHub Pages, a USB stick
opened through a local server): JupyterLab running in the browser with a Pyodide kernel, the
notebooks given (the browser quickstart by default) and this package in the site's own package
index, so ``%pip install splitbrain-widget`` in a notebook installs it from the site.

By default the kernel loads Pyodide from its CDN and micropip finds the package's dependencies
there and on PyPI (a user's browser needs the internet). ``--pyodide DIR`` puts a local Pyodide in
the site instead and ``--wheels DIR`` every dependency's wheel beside the package, with PyPI off:
a site that needs no other host (what the tests build, ``tests/browser/lite_site.py``).
Needs ``jupyterlite-core`` and ``jupyterlite-pyodide-kernel`` where it runs (not in the site).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
SOURCE = PACKAGE.parent  # a source checkout: pyproject.toml beside the package
BROWSER_QUICKSTART = "quickstart.ipynb"  # notebooks/lite/ in a checkout, lite_notebooks/ in the wheel
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"


class LiteError(RuntimeError):
    """The site cannot be built; the message says what is missing."""


def default_notebooks() -> list[Path]:
    """The browser quickstart: in a source checkout's notebooks/, or shipped in the package."""
    for place in (SOURCE / "notebooks" / "lite" / BROWSER_QUICKSTART, PACKAGE / "lite_notebooks" / BROWSER_QUICKSTART):
        if place.is_file():
            return [place]
    raise LiteError(f"no {BROWSER_QUICKSTART} here: name the notebooks to put in the site")


def package_wheel(into: Path, given: Path | None) -> Path:
    """This package's wheel: the one given, or one built from the source checkout."""
    if given is not None:
        if not given.is_file() or given.suffix != ".whl":
            raise LiteError(f"--wheel {given}: expected this package's .whl file")
        return Path(shutil.copy2(given, into / given.name))
    if not (SOURCE / "pyproject.toml").is_file():
        raise LiteError(
            "this package is installed, not a source checkout: give its wheel with --wheel PATH "
            "(pip download splitbrain-widget --no-deps)"
        )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(into), str(SOURCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    built = sorted(into.glob("splitbrain_widget-*.whl"))
    if done.returncode != 0 or not built:
        raise LiteError(f"could not build this package's wheel: {done.stderr.strip()[-2000:]}")
    return built[-1]


def build(
    notebooks: list[Path],
    output: Path,
    *,
    pyodide: Path | None = None,
    wheels: list[Path] | None = None,
    wheel: Path | None = None,
    expose_app: bool = False,
) -> Path:
    """Build the site into ``output`` and return it. ``pyodide``: a local Pyodide folder (its core,
    its lock and the kernel's wheels) to serve instead of the CDN; ``wheels``: folders of wheels for
    the site's index (every dependency, for a site that reaches no other host: PyPI is then off);
    ``expose_app``: ``window.jupyterapp`` for a test to drive. PyPI is off with a local Pyodide
    (what the site cannot find in its index, it cannot install)."""
    import importlib.util

    missing = [m for m in ("jupyterlite_core", "jupyterlite_pyodide_kernel") if importlib.util.find_spec(m) is None]
    if missing:
        raise LiteError(
            f"building a site needs JupyterLite ({', '.join(missing)}): "
            "pip install jupyterlite-core jupyterlite-pyodide-kernel"
        )
    for notebook in notebooks:
        if not notebook.is_file():
            raise LiteError(f"{notebook}: no such notebook")
    if output.exists() and any(output.iterdir()) and not (output / "jupyter-lite.json").is_file():
        raise LiteError(f"-o {output}: a folder that holds no JupyterLite site (it would be replaced); give a new one")
    if pyodide is not None and not (pyodide / "pyodide-lock.json").is_file():
        raise LiteError(f"--pyodide {pyodide}: expected a Pyodide folder (pyodide.js, pyodide-lock.json, ...)")
    with tempfile.TemporaryDirectory(prefix="splitbrain-lite-") as work:
        lite = Path(work)
        index = lite / "pypi"
        index.mkdir()
        package_wheel(index, wheel)
        for folder in wheels or []:
            for found in sorted(folder.glob("*.whl")):
                if not found.name.startswith("splitbrain_widget-"):
                    shutil.copy2(found, index / found.name)
        files = lite / "files"
        files.mkdir()
        for notebook in notebooks:
            shutil.copy2(notebook, files / notebook.name)
        offline = pyodide is not None
        if offline:
            assert pyodide is not None
            shutil.copytree(pyodide, lite / "static" / "pyodide")
        data: dict[str, object] = {"litePluginSettings": {KERNEL_SETTINGS: {"disablePyPIFallback": offline}}}
        if expose_app:
            data["exposeAppInBrowser"] = True
        (lite / "jupyter-lite.json").write_text(
            json.dumps({"jupyter-lite-schema-version": 0, "jupyter-config-data": data}, indent=2), encoding="utf-8"
        )
        (lite / "jupyter_lite_config.json").write_text(
            json.dumps({"LiteBuildConfig": {"no_sourcemaps": True}}), encoding="utf-8"
        )
        if output.exists():
            shutil.rmtree(output)
        done = subprocess.run(
            [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite), "--output-dir", str(output)],
            cwd=lite,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise LiteError(f"jupyter lite build failed:\n{(done.stdout + done.stderr).strip()[-4000:]}")
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m splitbrain_widget lite", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="build a JupyterLite site holding this package and the notebooks")
    make.add_argument("notebooks", nargs="*", type=Path, help="notebooks to put in the site (default: the quickstart)")
    make.add_argument("-o", "--output", type=Path, default=Path("site"), help="the site's folder (default: site/)")
    make.add_argument("--pyodide", type=Path, help="a local Pyodide folder to serve instead of its CDN")
    make.add_argument("--wheels", type=Path, action="append", help="a folder of dependency wheels (repeatable)")
    make.add_argument("--wheel", type=Path, help="this package's wheel (default: built from the source checkout)")
    make.add_argument("--expose-app", action="store_true", help="window.jupyterapp, for a test to drive the page")
    args = parser.parse_args(argv)
    try:
        notebooks = args.notebooks or default_notebooks()
        site = build(
            notebooks,
            args.output,
            pyodide=args.pyodide,
            wheels=args.wheels,
            wheel=args.wheel,
            expose_app=args.expose_app,
        )
    except LiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {site}: serve it with any web server, e.g. python -m http.server -d {site}", file=sys.stderr)
    return 0

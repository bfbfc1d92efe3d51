#!/usr/bin/env bash
# make light: the package as the browser installs it (no scipy, pandas or PyYAML), on this machine's
# Python, in a venv of its own: pip install --no-deps . and the other dependencies from pyproject.toml,
# then the unit tests that need none of the three (tests/light_tests.txt) must pass there.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
venv=.venv-light
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
deps=$("$venv/bin/python" - <<'PY'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(" ".join(d.split(";")[0].replace(" ", "") for d in project["dependencies"] if "emscripten" not in d))
PY
)
"$venv/bin/pip" install -q --disable-pip-version-check $deps pytest hypothesis jsonschema
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall .
"$venv/bin/python" - <<'PY'
import importlib.util, sys
present = [m for m in ("scipy", "pandas", "yaml") if importlib.util.find_spec(m) is not None]
sys.exit(f"make light: {', '.join(present)} installed in .venv-light; the layer tests the package without them" if present else 0)
PY
mapfile -t files < <(grep -v '^#' tests/light_tests.txt | grep .)
"$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not kernel and not browser and not real_model" "${files[@]}"

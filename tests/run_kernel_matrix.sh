#!/usr/bin/env bash
# make kernel-matrix: the kernel layer again on other ipykernel releases, each in its own small venv
# (.venv-ipykernel-<release>). The venvs are made side by side, then the test runs go side by side,
# KERNEL_MATRIX_JOBS at a time (each keeps about one core busy: its kernel and its test process),
# each into its own log, printed in order when all are done. Exits non-zero if any run failed.
# usage: tests/run_kernel_matrix.sh PYTHON VENV_PYTHON RELEASE...
set -u
cd "$(dirname "$0")/.."
base_python=$1; test_python=$2; shift 2
jobs=${KERNEL_MATRIX_JOBS:-3}
logs=$(mktemp -d)
make_venv() {
  local v=$1 env=.venv-ipykernel-$1 pins=""
  # ipykernel 5 calls IPython's should_run_async the way IPython < 8 takes it, so its venv gets the
  # IPython those hosts pair it with (Colab's 7.34). pydantic-ai-slim and pint: the chat panel's
  # agent (the offline planner) answers in tests/test_kernel_hosts.py; mcp: the kernel's MCP server there.
  case $v in 5.*) pins="ipython==7.34.0";; esac
  [ -x "$env/bin/python" ] || "$base_python" -m venv "$env" || return 1
  if [ ! -f "$env/.ok-agent-mcp" ]; then
    # shellcheck disable=SC2086
    "$env/bin/pip" install -q "ipykernel==$v" $pins anywidget pydantic "pydantic-ai-slim>=2.68,<3" pint "mcp>=2.3,<3" \
      && touch "$env/.ok-agent-mcp" || return 1
  fi
}
# The venvs side by side (a fresh clone makes all three: about 25 s of pip each on this machine).
declare -A maker
for v in "$@"; do make_venv "$v" & maker[$v]=$!; done
for v in "$@"; do wait "${maker[$v]}" || { echo "could not make .venv-ipykernel-$v"; exit 1; }; done
declare -A pid
running=0
for v in "$@"; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  SPLITBRAIN_KERNEL_PYTHON=$PWD/.venv-ipykernel-$v/bin/python \
    "$test_python" -m pytest -q -m kernel -p no:cacheprovider tests > "$logs/$v.log" 2>&1 &
  pid[$v]=$!
  running=$((running + 1))
done
status=0
for v in "$@"; do
  wait "${pid[$v]}"; rc=$?
  echo "== kernel tests on ipykernel $v (exit $rc)"
  cat "$logs/$v.log"
  [ "$rc" -eq 0 ] || status=1
done
rm -rf "$logs"
exit $status

#!/usr/bin/env bash
# Run every test layer in order, print how long each took, stop at the first failure.
set -u
cd "$(dirname "$0")/.."
layers=(lint js unit light kernel kernel-matrix browser notebooks)
declare -a report
status=0
for layer in "${layers[@]}"; do
  if [ "$layer" = js ] && ! command -v node >/dev/null 2>&1; then
    report+=("$(printf '%-14s skipped: node is not installed (install Node.js >= 20 to run the JS layer)' "$layer")")
    continue
  fi
  start=$(date +%s%N)
  echo "=== layer: $layer"
  make --no-print-directory "$layer"
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  took="$((ms / 1000)).$(( (ms % 1000) / 100 ))"
  report+=("$(printf '%-14s %6ss  %s' "$layer" "$took" "$([ $rc -eq 0 ] && echo ok || echo FAILED)")")
  if [ $rc -ne 0 ]; then status=$rc; break; fi
done
echo
echo "=== layer timings"
printf '%s\n' "${report[@]}"
exit $status

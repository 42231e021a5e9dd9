#!/usr/bin/env bash
# Imports each real model the ONNX frontend is checked on, printing one line
# per model; fails if a model is missing or does not import.
# Usage: import_real_models.sh TRACT_TRANSLATE MODELS_DIR MODEL[@FACT]...
# where each FACT is an input fact in tract's -i syntax (positional, or
# NAME:SPEC; NAME:TYPE=VALUES makes that input a constant).
set -uo pipefail
translate=$1
models=$2
shift 2
status=0
for spec in "$@"; do
  model=${spec%%@*}
  facts=()
  if [[ "$spec" == *@* ]]; then
    IFS=@ read -ra given <<< "${spec#*@}"
    for fact in "${given[@]}"; do
      facts+=("--input-fact=$fact")
    done
  fi
  if [ ! -f "$models/$model" ]; then
    echo "FAIL $model: missing (scripts/fetch-models.sh fetches it)"
    status=1
    continue
  fi
  if errors=$("$translate" --import-onnx "${facts[@]}" "$models/$model" 2>&1 >/dev/null); then
    echo "ok   $spec"
  else
    echo "FAIL $model: $(echo "$errors" | head -n 1)"
    status=1
  fi
done
exit $status

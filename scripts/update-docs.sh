#!/usr/bin/env bash
# Regenerates the op and pass references in docs/reference from the ODS
# definitions (add_mlir_doc), so the committed pages match the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" mlir-doc
mkdir -p "$root/docs/reference"
cp "$build/docs/dialects/TractOps.md" "$root/docs/reference/dialect.md"
cp "$build/docs/passes/TractPasses.md" "$root/docs/reference/passes.md"
echo "updated docs/reference/dialect.md and docs/reference/passes.md"

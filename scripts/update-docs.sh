#!/usr/bin/env bash
# Regenerates the op and pass references in docs/reference from the ODS
# definitions (add_mlir_doc), so the committed pages match the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" mlir-doc tract-translate
mkdir -p "$root/docs/reference"
cp "$build/docs/dialects/TractOps.md" "$root/docs/reference/dialect.md"
cp "$build/docs/passes/TractPasses.md" "$root/docs/reference/passes.md"
cp "$build/docs/passes/TractConversionPasses.md" "$root/docs/reference/conversion-passes.md"
cp "$build/docs/passes/TractTargetPasses.md" "$root/docs/reference/target-passes.md"
cp "$build/docs/passes/TractCodegenPasses.md" "$root/docs/reference/codegen-passes.md"
cp "$build/docs/passes/TractGpuCodegenPasses.md" "$root/docs/reference/gpu-passes.md"
echo "updated docs/reference/dialect.md and docs/reference/passes.md"

# The ONNX supported-operator table and the node-test import report.
/usr/bin/python3 "$root/test/onnx/import_node_tests.py" \
  --translate "$build/bin/tract-translate" \
  --report "$root/docs/onnx-import.md" --ops-table "$root/docs/onnx-ops.md"
echo "updated docs/onnx-ops.md and docs/onnx-import.md"

# The ONNX backend tests through `tract run` (docs/onnx-conformance.md)
# are the onnx-conformance test's report: scripts/test-full.sh runs it in
# full and copies it.

#!/usr/bin/env bash
# The main job: load the bundled example model, declutter it, and list it.
#
# Until code generation lands, this runs the most complete path that works:
# parse and verify the tract-dialect model, run the declutter pipeline that
# `tract -O` uses, and print tract's op listing before and after.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
export TRACT_BUILD_DIR="$build"
model="$root/examples/tiny/model.mlir"

"$root/scripts/setup.sh"
"$root/scripts/build.sh" tract

echo "== tract examples/tiny/model.mlir dump (as written)"
"$build/bin/tract" "$model" dump
echo
echo "== tract -O examples/tiny/model.mlir dump (decluttered)"
"$build/bin/tract" -O "$model" dump

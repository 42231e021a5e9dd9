#!/usr/bin/env bash
# Every check in full: what CI samples, run on every case, and the tables in
# docs/ written again from the results. CI (scripts/test.sh, .ci/run) runs
# each sampled column on a part that turns with the commit (test/sample.py),
# so that a number of landings covers every case; this runs them all at
# once: the node tests on Vulkan, compiled for CUDA and Metal and for the
# other targets, and under the sanitizers. About an hour on two cores.
#
#   scripts/test-full.sh              both suites in full, then the tables
#   scripts/test-full.sh --no-sanitize  the plain suite in full, the tables
#
# The tables it writes: docs/onnx-conformance.md (the onnx-conformance
# report), docs/onnx-import.md and docs/onnx-ops.md, docs/declutter.md and
# docs/reference/ (scripts/update-docs.sh). A table that changes is a
# change to review and commit.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
export TRACT_TEST_FULL=1
status=0

"$root/scripts/test.sh" || status=1
if [[ -f $build/onnx-conformance.md ]]; then
  cp "$build/onnx-conformance.md" "$root/docs/onnx-conformance.md"
  echo "test-full: wrote docs/onnx-conformance.md"
fi
TRACT_BUILD_DIR=$build "$root/scripts/update-docs.sh" || status=1
/usr/bin/python3 "$root/scripts/declutter-report.py" --build "$build" ||
  status=1
if [[ ${1:-} != --no-sanitize ]]; then
  # Its own build folder (build-sanitize), as test.sh --sanitize chooses.
  env -u TRACT_BUILD_DIR "$root/scripts/test.sh" --sanitize || status=1
fi
git -C "$root" status --short -- docs
exit $status

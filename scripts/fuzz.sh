#!/usr/bin/env bash
# Fuzzes the readers of untrusted input (tract-mlir's libFuzzer targets in
# test/fuzz/) under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh [TARGET] [SECONDS]   run TARGET (default: every target)
#                                        for SECONDS each (default 60)
#   scripts/fuzz.sh --ci                 every target from a fixed seed for a
#                                        fixed number of inputs (about a
#                                        minute each on two cores): what CI
#                                        runs, the same on every machine
#   scripts/fuzz.sh --runs N [TARGET]    a campaign: N inputs per target,
#                                        continuing the corpus found so far
#                                        (docs/security.md records one)
#   scripts/fuzz.sh --replay BINDIR      run the replay builds in BINDIR over
#                                        every seed and past crash (the
#                                        fuzz-regressions test)
#   scripts/fuzz.sh --mutants            the onnx target over the mutants of
#                                        the ONNX node tests
#                                        (test/fuzz/make_onnx_mutants.py:
#                                        about 63,000 models, the same on
#                                        every run; --ci runs them too)
#
# Targets: tdim (dims and relations), nnef_text (graph.nnef), nnef (.tar
# and .tgz models through the container reader, the tensor files, the
# importer and the verifier), bundle (.npy, .npz, TensorProto), cli (the
# command line), facts (-i input facts on an ONNX model), onnx (.onnx models
# through the importer and the verifier). Each starts from its seeds in
# test/fuzz/corpus/TARGET (what it finds stays in build-fuzz/corpus) with
# test/fuzz/TARGET.dict where there is one. An allocation over 512 MiB or a
# run over 10 s per input counts as a failure. A crash's input is written
# to test/fuzz/crashes/TARGET/; once fixed, move it to
# test/fuzz/regressions/TARGET/, which every test pass replays.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fuzz_dir=$root/test/fuzz
targets=(tdim nnef_text nnef bundle cli facts onnx)

if [[ ${1:-} == --replay ]]; then
  bin=$2
  for target in "${targets[@]}"; do
    inputs=()
    for dir in "$fuzz_dir/corpus/$target" "$fuzz_dir/regressions/$target"; do
      [[ -d $dir ]] && inputs+=("$dir")
    done
    printf '%-10s ' "$target"
    "$bin/fuzz-$target" "${inputs[@]}"
  done
  exit 0
fi

# Inputs per target for --ci: about a minute each here.
declare -A ci_runs=([tdim]=350000 [nnef_text]=700000 [nnef]=240000 [bundle]=2000000
                    [cli]=1500000 [facts]=200000 [onnx]=400000)
ci=0
runs=0
mutants=0
if [[ ${1:-} == --mutants ]]; then
  mutants=1
  shift
  set -- onnx
elif [[ ${1:-} == --ci ]]; then
  ci=1
  shift
elif [[ ${1:-} == --runs ]]; then
  runs=$2
  shift 2
fi

selected=("${targets[@]}")
if [[ -n ${1:-} ]]; then
  if [[ ! " ${targets[*]} " == *" $1 "* ]]; then
    echo "fuzz: unknown target '$1'; the targets are ${targets[*]}" >&2
    exit 2
  fi
  selected=("$1")
fi
seconds=${2:-60}

"$root/scripts/setup.sh"
build=$root/build-fuzz
TRACT_BUILD_DIR=$build TRACT_CMAKE_ARGS=-DTRACT_FUZZ=ON \
  "$root/scripts/build.sh" "${selected[@]/#/fuzz-}" >/dev/null

# The mutants of the node tests through the onnx target: each file once.
run_mutants() {
  local dir=$build/mutants/onnx crashes=$fuzz_dir/crashes/onnx
  rm -rf "$dir" && mkdir -p "$crashes"
  /usr/bin/python3 "$fuzz_dir/make_onnx_mutants.py" \
    /usr/share/libonnx-testdata/data/node "$dir" | sed "s/^/fuzz: onnx /"
  if ! "$build/bin/fuzz-onnx" -runs=0 -malloc_limit_mb=512 -rss_limit_mb=2048 \
      -timeout=10 -artifact_prefix="$crashes/" "$dir" \
      >"$build/onnx-mutants.log" 2>&1; then
    echo "fuzz: onnx mutants FAILED; the input is in ${crashes#"$root"/}:" >&2
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$build/onnx-mutants.log" | head -5 >&2
    return 1
  fi
  echo "fuzz: onnx mutants imported or refused, none crashed"
}

if ((mutants)); then
  run_mutants
  exit
fi

# fuzz_one TARGET: fuzzes TARGET; its summary goes to $build/TARGET.summary
# and its exit status to $build/TARGET.status.
fuzz_one() {
  local target=$1 corpus=$build/corpus/$1 crashes=$fuzz_dir/crashes/$1
  local status=0
  mkdir -p "$corpus" "$crashes"
  local options=(-malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=10
                 -print_final_stats=1 -artifact_prefix="$crashes/")
  if ((ci)); then
    # From the seeds alone, so that a fresh clone explores the same inputs.
    rm -rf "$corpus" && mkdir -p "$corpus"
    options+=(-seed=1 -runs="${ci_runs[$target]}")
  elif ((runs)); then
    options+=(-runs="$runs")
  else
    options+=(-max_total_time="$seconds")
  fi
  [[ -f $fuzz_dir/$target.dict ]] && options+=(-dict="$fuzz_dir/$target.dict")
  {
    if ((ci)); then
      echo "fuzz: $target, ${ci_runs[$target]} inputs from seed 1"
    elif ((runs)); then
      echo "fuzz: $target, $runs inputs"
    else
      echo "fuzz: $target for ${seconds}s"
    fi
    if ! "$build/bin/fuzz-$target" "${options[@]}" "$corpus" \
        "$fuzz_dir/corpus/$target" >"$build/$target.log" 2>&1; then
      echo "fuzz: $target FAILED; its input is in ${crashes#"$root"/}:"
      grep -E "ERROR|SUMMARY|==[0-9]+==" "$build/$target.log" | head -5 ||
        true
      status=1
    else
      grep -E "stat::number_of_executed_units|stat::new_units_added" \
        "$build/$target.log" | sed "s/^/fuzz: $target /" || true
      # The last status line: edges covered (cov), features (ft), corpus
      # size.
      grep -E "^#[0-9]+" "$build/$target.log" | tail -n 1 |
        sed "s/^/fuzz: $target /" || true
    fi
  } >"$build/$target.summary"
  echo $status >"$build/$target.status"
}

# The targets run side by side, one per core: each is one process, and the
# inputs each runs (--ci) do not depend on what runs next to it.
cores=$(nproc 2>/dev/null || echo 2)
for target in "${selected[@]}"; do
  while (($(jobs -rp | wc -l) >= cores)); do wait -n || true; done
  rm -f "$build/$target.status"
  fuzz_one "$target" &
done
mutants_status=0
if ((ci)) && [[ " ${selected[*]} " == *" onnx "* ]]; then
  while (($(jobs -rp | wc -l) >= cores)); do wait -n || true; done
  run_mutants >"$build/mutants.summary" 2>&1 &
  mutants_pid=$!
fi
if [[ -n ${mutants_pid:-} ]]; then
  wait "$mutants_pid" || mutants_status=$?
fi
wait

status=0
for target in "${selected[@]}"; do
  if [[ $(cat "$build/$target.status" 2>/dev/null) == 0 ]]; then
    cat "$build/$target.summary"
  else
    cat "$build/$target.summary" >&2 2>/dev/null ||
      echo "fuzz: $target did not finish" >&2
    status=1
  fi
done
if [[ -n ${mutants_pid:-} ]]; then
  cat "$build/mutants.summary"
  ((mutants_status == 0)) || status=1
fi
exit $status

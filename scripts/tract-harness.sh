#!/usr/bin/env bash
# Runs tract's own NNEF regression cases (each folder with a runme.sh that
# calls $TRACT_RUN) with our `tract` and prints a pass/fail table.
#
#   scripts/tract-harness.sh [--check LIST] [DIR]
#
# DIR is the harness folder (default: $TRACT_HARNESS_DIR, else
# ../shared/tract-harness next to the checkout). Each case runs from a
# scratch copy, as some scripts write next to themselves. Cases that compare
# a written graph.nnef with an expected one read the writer's version with
# `cargo metadata` and replace it by a fixed string: they run with a `cargo`
# that answers only that question, with the version our tract writes in
# `tract_nnef_ser_version`. A case that needs cargo for anything else needs
# Rust's toolchain and is reported as skipped with that reason.
#
# With --check LIST (one case path per line, `#` comments), the exit status
# is 1 when a listed case fails or an unlisted one passes (then the list is
# out of date: add it); without it, when any case fails. Exit status 77
# means the harness folder is absent (a skip for CTest).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
tract="${TRACT:-$build/bin/tract}"
check=""
if [[ ${1:-} == --check ]]; then
  check=$2
  shift 2
fi
harness="${1:-${TRACT_HARNESS_DIR:-$root/../shared/tract-harness}}"
if [[ ! -d $harness ]]; then
  echo "tract-harness: no harness folder at $harness; nothing run"
  exit 77
fi
harness=$(cd "$harness" && pwd)
[[ -x $tract ]] || { echo "tract-harness: $tract is not built" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$harness/." "$scratch/"

# `cargo metadata --format-version 1`, as the cases ask it, with tract-core's
# version the one our exporter writes.
version=$("$tract" --version | awk '{print $1 "-" $2}')
mkdir -p "$scratch/.bin"
cat >"$scratch/.bin/cargo" <<EOF
#!/bin/sh
if [ "\$1" = metadata ]; then
  echo '{"packages": [{"name": "tract-core", "version": "$version"}]}'
  exit 0
fi
echo "cargo \$*: only 'cargo metadata' is answered here" >&2
exit 1
EOF
chmod +x "$scratch/.bin/cargo"

declare -A expected=()
if [[ -n $check ]]; then
  while read -r line; do
    line=${line%%#*}
    line=$(echo "$line" | xargs)
    [[ -n $line ]] && expected[$line]=1
  done <"$check"
fi

passed=0 failed=0 skipped=0 status=0
printf '%-45s %s\n' case result
while read -r script; do
  dir=$(dirname "$script")
  name=${dir#"$scratch"/}
  if grep -E '(^|[^A-Za-z_])cargo ' <(grep -v '^[[:space:]]*#' "$script" |
      grep -v 'TRACT_RUN:=cargo') | grep -qvE 'cargo metadata'; then
    printf '%-45s %s\n' "$name" "skipped (needs Rust's cargo)"
    skipped=$((skipped + 1))
    continue
  fi
  if (cd "$dir" && PATH="$scratch/.bin:$PATH" TRACT_RUN="$tract" \
      timeout 300 sh ./runme.sh) \
      >"$dir/harness.log" 2>&1; then
    result=pass
    passed=$((passed + 1))
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  note=""
  if [[ -n $check ]]; then
    if [[ $result == pass && -z ${expected[$name]:-} ]]; then
      note=" (passes but is not in $(basename "$check"): add it)"
      status=1
    elif [[ $result == FAIL && -n ${expected[$name]:-} ]]; then
      note=" (expected to pass)"
      status=1
    fi
  elif [[ $result == FAIL ]]; then
    status=1
  fi
  line=""
  if [[ $result == FAIL ]]; then
    line=$(grep -m1 -iE 'error|mismatch|differ' "$dir/harness.log" | cut -c1-150)
  fi
  printf '%-45s %s%s%s\n' "$name" "$result" "$note" "${line:+: $line}"
  if [[ $result == FAIL && -n $note ]]; then
    sed 's/^/    /' "$dir/harness.log" | tail -n 20
  fi
done < <(find "$scratch" -name runme.sh | sort)

echo "tract-harness: $passed passed, $failed failed, $skipped skipped"
exit $status

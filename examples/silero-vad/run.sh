#!/usr/bin/env bash
# The Silero VAD example end to end: synthesizes the speech clip, compiles
# Silero VAD v5 to an object file with `tract compile`, links it with main.c and vad.c
# and the runtime by the system's C compiler, runs it over the clip and
# checks the printed segments against the clip's expected speech spans.
#
# Usage: run.sh TRACT RUNTIME_LIBRARY MODEL WORK_DIR
#   TRACT            the tract tool (build/bin/tract)
#   RUNTIME_LIBRARY  the static runtime (build/runtime/libtract_runtime.a)
#   MODEL            silero_vad_v5.onnx (scripts/fetch-models.sh fetches it)
#   WORK_DIR         where the clip, object, header and program are written
# The C compiler is $CC, or cc.
set -euo pipefail

if (($# != 4)); then
  echo "usage: $0 TRACT RUNTIME_LIBRARY MODEL WORK_DIR" >&2
  exit 2
fi
tract=$1
runtime=$2
model=$3
work=$4
example=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$example/../.." && pwd)

if [ ! -f "$model" ]; then
  echo "silero-vad: $model is missing (scripts/fetch-models.sh fetches it)" >&2
  exit 1
fi
mkdir -p "$work"

step() { # step TITLE COMMAND...: runs COMMAND, then prints its time
  echo "== $1"
  local began=$EPOCHREALTIME
  "${@:2}"
  awk -v a="$began" -v b="$EPOCHREALTIME" \
    'BEGIN { printf "   (%.2f s)\n", b - a }'
}

step "synthesize the speech clip" \
  "$root/scripts/make-speech-clip.sh" "$work/speech.wav"
step "tract compile: Silero VAD v5 to silero.o and silero.h" \
  "$tract" -i input:1,576,f32 -i state:2,1,128,f32 -i sr:i64=16000 "$model" \
  compile -o "$work/silero.o" --header "$work/silero.h" --name silero
step "${CC:-cc}: link main.c, vad.c, silero.o and the runtime" \
  "${CC:-cc}" -std=c11 -O2 -Wall -Wextra -I"$root/runtime" -I"$work" \
  "$example/main.c" "$example/vad.c" "$work/silero.o" "$runtime" -lm \
  -o "$work/silero-vad"
detect() { # the program's output goes to segments.txt too, for the check
  local status=0
  "$work/silero-vad" "$work/speech.wav" >"$work/segments.txt" || status=$?
  cat "$work/segments.txt"
  return $status
}
step "silero-vad speech.wav" detect
/usr/bin/python3 "$example/check_segments.py" \
  "$work/speech.spans" "$work/segments.txt"

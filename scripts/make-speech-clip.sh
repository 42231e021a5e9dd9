#!/usr/bin/env bash
# Synthesizes the speech clip the Silero VAD example runs on: two English
# sentences spoken by espeak-ng, as 16 kHz mono 16-bit PCM, padded with
# digital silence (1.5 s before, 1.0 s between, 1.5 s after).
#
# Usage: scripts/make-speech-clip.sh OUT.wav
#
# Writes OUT.wav and OUT.spans, the expected speech spans: one line
# "START END" in seconds per sentence, from its first to its last sample
# louder than -40 dBFS. The spans are printed too.
set -euo pipefail

if (($# != 1)); then
  echo "usage: $0 OUT.wav" >&2
  exit 2
fi
out=$1
spans="${out%.wav}.spans"

command -v espeak-ng >/dev/null || {
  echo "make-speech-clip: espeak-ng is needed (scripts/setup.sh installs it)" >&2
  exit 1
}

sentences=(
  "Voice activity detection finds the parts of a recording where someone speaks."
  "This model was compiled ahead of time and linked into a small C program."
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parts=()
for i in "${!sentences[@]}"; do
  # -z: no pause after the sentence; the padding below is the only silence.
  espeak-ng -v en-us -z -w "$work/$i.wav" "${sentences[$i]}"
  parts+=("$work/$i.wav")
done

# espeak-ng speaks at 22050 Hz and cannot resample: a windowed-sinc
# resampler brings each sentence to 16 kHz before the padding is added.
/usr/bin/python3 - "$out" "$spans" "${parts[@]}" <<'EOF'
import sys
import wave

import numpy as np

RATE = 16000
SILENCE_BEFORE, SILENCE_BETWEEN, SILENCE_AFTER = 1.5, 1.0, 1.5
LOUD = 10 ** (-40 / 20)  # -40 dBFS: where speech starts and ends


def read_wav(path):
    with wave.open(path, "rb") as f:
        if f.getnchannels() != 1 or f.getsampwidth() != 2:
            sys.exit(f"make-speech-clip: {path}: expected mono 16-bit PCM")
        data = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2")
        return data.astype(np.float64) / 32768.0, f.getframerate()


def resample(x, rate_in, rate_out, half_taps=32):
    """Band-limited resampling: each output sample is a Kaiser-windowed sinc
    interpolation of the input, low-passed below the output's Nyquist."""
    if rate_in == rate_out:
        return x
    cutoff = 0.95 * min(rate_in, rate_out) / 2 / rate_in  # cycles per input sample
    n_out = int(len(x) * rate_out // rate_in)
    t = np.arange(n_out) * (rate_in / rate_out)  # positions in input samples
    base = np.floor(t).astype(np.int64)
    out = np.zeros(n_out)
    norm = np.zeros(n_out)
    beta = 8.0
    for k in range(-half_taps + 1, half_taps + 1):
        idx = base + k
        dist = t - idx
        weight = 2 * cutoff * np.sinc(2 * cutoff * dist)
        ramp = np.clip(1 - (dist / half_taps) ** 2, 0, 1)
        weight *= np.i0(beta * np.sqrt(ramp)) / np.i0(beta)
        valid = (idx >= 0) & (idx < len(x))
        out[valid] += weight[valid] * x[idx[valid]]
        norm += weight
    return out / norm


out_path, spans_path, *parts = sys.argv[1:]
pieces = [np.zeros(int(SILENCE_BEFORE * RATE))]
spans = []
position = len(pieces[0])
for i, part in enumerate(parts):
    if i:
        pieces.append(np.zeros(int(SILENCE_BETWEEN * RATE)))
        position += len(pieces[-1])
    speech, rate = read_wav(part)
    speech = resample(speech, rate, RATE)
    loud = np.flatnonzero(np.abs(speech) >= LOUD)
    if len(loud) == 0:
        sys.exit(f"make-speech-clip: espeak-ng produced silence for sentence {i + 1}")
    spans.append(((position + loud[0]) / RATE, (position + loud[-1] + 1) / RATE))
    pieces.append(speech)
    position += len(speech)
pieces.append(np.zeros(int(SILENCE_AFTER * RATE)))
clip = np.concatenate(pieces)

samples = np.clip(np.round(clip * 32767), -32768, 32767).astype("<i2")
with wave.open(out_path, "wb") as f:
    f.setnchannels(1)
    f.setsampwidth(2)
    f.setframerate(RATE)
    f.writeframes(samples.tobytes())
with open(spans_path, "w") as f:
    for start, end in spans:
        f.write(f"{start:.3f} {end:.3f}\n")

print(f"make-speech-clip: {out_path}: {len(samples) / RATE:.2f} s at {RATE} Hz")
for start, end in spans:
    print(f"expected speech {start:.2f} s - {end:.2f} s")
EOF

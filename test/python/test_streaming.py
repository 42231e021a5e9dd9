"""Facts, symbols and streams: a pulsed model through spawn_state(), and
Silero VAD v5 window by window over a synthesized speech clip."""
import os
import subprocess
import sys
import wave

import numpy as np
import pytest

import tract_mlir
from conftest import ROOT, TINY, model_path


def frames(count, seed=0):
    return np.random.RandomState(seed).randn(1, count, 4).astype(np.float32)


def test_pulsed_state_matches_the_batch_run(tiny, tiny_pulsed):
    # The tiny model has no delay: pulse k of the output is frames
    # 8k..8k+7 of the batch output.
    x = frames(40)
    batch, = tiny.run([x])
    state = tiny_pulsed.spawn_state()
    pulses = [state.run([x[:, at:at + 8]])[0] for at in range(0, 40, 8)]
    assert all(pulse.shape == (1, 8, 4) for pulse in pulses)
    np.testing.assert_allclose(np.concatenate(pulses, axis=1), batch,
                               rtol=1e-6, atol=1e-6)


def test_pulse_by_transform_and_symbols_of_the_stream():
    model = tract_mlir.load(TINY).transform("pulse(S=4)")
    assert model.input_fact(0) == "1,4,4,f32"
    assert model.output_fact(0) == "1,4,4,f32"
    # The stream's length given to the state, as tract's spawn_state takes it.
    x = frames(12, seed=1)
    state = model.into_runnable(threads=1).spawn_state({"S": 12})
    streamed = np.concatenate(
        [state.run([x[:, at:at + 4]])[0] for at in range(0, 12, 4)], axis=1)
    batch, = tract_mlir.load(TINY).into_runnable(threads=1).run([x])
    np.testing.assert_allclose(streamed, batch, rtol=1e-6, atol=1e-6)


def test_concretize_symbols():
    model = tract_mlir.load(TINY).concretize_symbols({"S": 5})
    assert model.input_fact(0) == "1,5,4,f32"
    runnable = model.into_runnable(threads=1)
    runnable.run([frames(5)])
    with pytest.raises(tract_mlir.TractError, match="input_0"):
        runnable.run([frames(6)])


def test_set_input_fact_on_onnx():
    model = tract_mlir.onnx().load(model_path("silero_vad_v5.onnx"))
    assert model.input_fact(0) == "unk__0,unk__1,f32"
    model.set_input_fact(0, "1,576,f32").set_input_fact(1, "2,1,128,f32")
    model.set_input_fact(2, "sr:i64=16000")  # a constant: no longer an input
    assert model.input_count() == 2
    assert [model.input_fact(i) for i in range(2)] == \
        ["1,576,f32", "2,1,128,f32"]
    assert model.input_fact("state") == "2,1,128,f32"
    assert model.output_fact(0) == "1,1,f32"


# Silero VAD over a clip, as examples/silero-vad does it in C (vad.c): 512
# new samples per window after the last 64 of the previous one, the state
# fed back, and get_speech_timestamps' segmentation.
RATE, WINDOW, CONTEXT = 16000, 512, 64


def speech_segments(probabilities, samples, threshold=0.5, min_speech_ms=250,
                    min_silence_ms=100, pad_ms=30):
    """vad_segments of examples/silero-vad/vad.c, in samples."""
    ms = RATE // 1000
    neg_threshold = threshold - 0.15
    segments, start, temp_end, triggered = [], 0, 0, False
    for i, probability in enumerate(probabilities):
        here = i * WINDOW
        if probability >= threshold and temp_end:
            temp_end = 0
        if probability >= threshold and not triggered:
            triggered, start = True, here
            continue
        if probability < neg_threshold and triggered:
            if not temp_end:
                temp_end = here
            if here - temp_end < min_silence_ms * ms:
                continue
            if temp_end - start > min_speech_ms * ms:
                segments.append([start, temp_end])
            triggered, temp_end = False, 0
    if triggered and samples - start > min_speech_ms * ms:
        segments.append([start, samples])
    pad = pad_ms * ms
    for i, segment in enumerate(segments):
        if i == 0:
            segment[0] = max(segment[0] - pad, 0)
        if i + 1 < len(segments):
            following = segments[i + 1]
            silence = following[0] - segment[1]
            shift = silence // 2 if silence < 2 * pad else pad
            segment[1] += shift
            following[0] = max(following[0] - shift, 0)
        else:
            segment[1] = min(segment[1] + pad, samples)
    return segments


def test_silero_vad_v5_streams_a_speech_clip(silero_v5, tmp_path):
    clip = tmp_path / "speech.wav"
    subprocess.run([os.path.join(ROOT, "scripts", "make-speech-clip.sh"),
                    str(clip)], check=True, stdout=subprocess.DEVNULL)
    with wave.open(str(clip)) as f:
        pcm = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2")
    samples = pcm.astype(np.float32) / 32768.0

    window = np.zeros((1, CONTEXT + WINDOW), np.float32)
    state = np.zeros((2, 1, 128), np.float32)
    rate = np.array(RATE, np.int64)
    probabilities = []
    for at in range(0, len(samples), WINDOW):
        chunk = samples[at:at + WINDOW]
        window[0, :CONTEXT] = window[0, WINDOW:]
        window[0, CONTEXT:] = 0
        window[0, CONTEXT:CONTEXT + len(chunk)] = chunk
        # The state an output array holds goes back in as it is.
        probability, state = silero_v5.run([window, state, rate])
        probabilities.append(float(probability[0, 0]))

    lines = ["speech %.2f s - %.2f s" % (start / RATE, end / RATE)
             for start, end in speech_segments(probabilities, len(samples))]
    output = tmp_path / "segments.txt"
    output.write_text("\n".join(lines) + "\n")
    check = subprocess.run(
        [sys.executable,
         os.path.join(ROOT, "examples", "silero-vad", "check_segments.py"),
         str(tmp_path / "speech.spans"), str(output)],
        capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + "\n".join(lines)

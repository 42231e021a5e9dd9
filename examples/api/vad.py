"""Silero VAD v5 through libtract's Python package (tract_mlir): the program
of vad.c, on numpy arrays.

    python3 vad.py silero_vad_v5.onnx speech.wav
"""
import sys
import wave

import numpy as np
import tract_mlir

RATE, WINDOW, CONTEXT = 16000, 512, 64


def main(model_path, wav_path):
    with wave.open(wav_path) as wav:
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    samples = pcm.astype(np.float32) / 32768.0

    model = tract_mlir.onnx().load(model_path)
    model.set_input_fact(0, "1,576,f32")
    model.set_input_fact(1, "2,1,128,f32")
    model.set_input_fact(2, "sr:i64=16000")
    runnable = model.into_runnable()

    window = np.zeros((1, CONTEXT + WINDOW), np.float32)
    state = np.zeros((2, 1, 128), np.float32)
    start, last_speech = None, 0.0
    for at in range(0, len(samples), WINDOW):
        # The last 64 samples of the previous window, then 512 new ones.
        window[0, :CONTEXT] = window[0, WINDOW:]
        chunk = samples[at:at + WINDOW]
        window[0, CONTEXT:] = 0
        window[0, CONTEXT:CONTEXT + len(chunk)] = chunk
        probability, state = runnable.run([window, state])
        probability = float(probability[0, 0])
        # Speech starts at 0.5, and ends after 100 ms below 0.35.
        time = at / RATE
        if probability >= 0.5:
            if start is None:
                start = time
            last_speech = time + WINDOW / RATE
        elif start is not None and probability < 0.35 and \
                time - last_speech >= 0.1:
            if last_speech - start > 0.25:
                print("speech %.2f s - %.2f s" % (start, last_speech))
            start = None
    if start is not None and last_speech - start > 0.25:
        print("speech %.2f s - %.2f s" % (start, last_speech))


if __name__ == "__main__":
    main(*sys.argv[1:])

"""Threads, as tract.h states them: runnables run from any number of
threads at once, and each thread may stream its own state through one
runnable. Runs release the GIL, so these do overlap."""
import threading

import numpy as np

from conftest import reference

ROUNDS = 40


def on_threads(*works):
    """Runs each work on its own thread, started together; returns their
    results (an exception is re-raised here)."""
    barrier = threading.Barrier(len(works))
    results = [None] * len(works)

    def thread(index, work):
        barrier.wait()
        try:
            results[index] = work()
        except BaseException as error:  # noqa: B036 (re-raised below)
            results[index] = error

    threads = [threading.Thread(target=thread, args=(i, work))
               for i, work in enumerate(works)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def silero_inputs():
    ref = reference("silero_vad_v5")
    return [ref["input"], ref["state"], ref["sr"]]


def test_two_runnables_on_two_threads(silero_v5, tiny):
    frames = np.random.RandomState(2).randn(1, 64, 4).astype(np.float32)
    silero_alone = silero_v5.run(silero_inputs())
    tiny_alone = tiny.run([frames])

    def run_silero():
        inputs = silero_inputs()
        return [silero_v5.run(inputs) for _ in range(ROUNDS)]

    def run_tiny():
        return [tiny.run([frames]) for _ in range(ROUNDS)]

    silero_runs, tiny_runs = on_threads(run_silero, run_tiny)
    for outputs in silero_runs:
        for got, expected in zip(outputs, silero_alone):
            np.testing.assert_array_equal(got, expected)
    for outputs in tiny_runs:
        np.testing.assert_array_equal(outputs[0], tiny_alone[0])


def test_one_runnable_from_two_threads(silero_v5):
    alone = silero_v5.run(silero_inputs())

    def run():
        inputs = silero_inputs()
        return [silero_v5.run(inputs) for _ in range(ROUNDS)]

    for runs in on_threads(run, run):
        for outputs in runs:
            for got, expected in zip(outputs, alone):
                np.testing.assert_array_equal(got, expected)


def test_one_runnable_two_states_on_two_threads(tiny, tiny_pulsed):
    # Each thread streams its own frames through its own state; the
    # streamed outputs are each batch run's.
    streams = [np.random.RandomState(seed).randn(1, 8 * ROUNDS, 4)
               .astype(np.float32) for seed in (3, 4)]

    def stream(frames):
        def work():
            state = tiny_pulsed.spawn_state()
            return np.concatenate(
                [state.run([frames[:, at:at + 8]])[0]
                 for at in range(0, frames.shape[1], 8)], axis=1)
        return work

    streamed = on_threads(*[stream(frames) for frames in streams])
    for frames, got in zip(streams, streamed):
        np.testing.assert_allclose(got, tiny.run([frames])[0],
                                   rtol=1e-6, atol=1e-6)

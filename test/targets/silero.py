"""What the Silero VAD tests on other targets share: the facts Silero VAD
v5 is compiled with (examples/silero-vad), the speech clip, and the native
example built for the host."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "silero-vad")
SOURCES = [os.path.join(EXAMPLE, "main.c"), os.path.join(EXAMPLE, "vad.c")]
FACTS = ["-i", "input:1,576,f32", "-i", "state:2,1,128,f32",
         "-i", "sr:i64=16000"]


def run(command):
    """`command`'s output; exits, with its output, when it fails."""
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace") +
                         proc.stderr.decode(errors="replace"))
        raise SystemExit("failed (%d): %s" % (proc.returncode,
                                              " ".join(command)))
    return proc.stdout.decode()


def make_clip(path):
    """The espeak-ng clip of the main job at `path` (and its .spans)."""
    run([os.path.join(ROOT, "scripts", "make-speech-clip.sh"), path])


def compile_model(tract, model, here, target=None):
    """silero.o and silero.h in `here`, for `target` (default: the host)."""
    os.makedirs(here, exist_ok=True)
    run([tract] + FACTS + [model, "compile",
        "-o", os.path.join(here, "silero.o"),
        "--header", os.path.join(here, "silero.h"), "--name", "silero"] +
        (["--target", target] if target else []))


def native_example(tract, runtime, model, here, include):
    """The example program built for the host in `here`; `include` is the
    runtime's header folder."""
    compile_model(tract, model, here)
    program = os.path.join(here, "silero-vad")
    run(["cc", "-std=c11", "-O2", "-I" + include, "-I" + here] + SOURCES +
        [os.path.join(here, "silero.o"), runtime, "-lm", "-o", program])
    return program


def segments(output):
    """The "speech A s - B s" lines the example printed."""
    return [line for line in output.splitlines() if line.startswith("speech ")]

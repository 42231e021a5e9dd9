"""The targets that compiled models run on in the tests, besides the host:
how to build a program for each (its C compiler, with the runtime
cross-built in <build>/targets/<target>/) and how to run it (qemu-user for
ARM, Node's WASI for WebAssembly)."""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME_INCLUDE = os.path.join(os.path.dirname(os.path.dirname(HERE)),
                               "runtime")

TARGETS = {
    "aarch64": {
        "cc": ["aarch64-linux-gnu-gcc", "-static", "-O2", "-march=armv8-a"],
        "run": ["qemu-aarch64-static"],
        "exe": "",
    },
    "armv7": {
        "cc": ["arm-linux-gnueabihf-gcc", "-static", "-O2", "-march=armv7-a",
               "-mfpu=neon-vfpv4", "-mfloat-abi=hard"],
        "run": ["qemu-arm-static"],
        "exe": "",
    },
    "wasm32": {
        # The stack is 64 KiB unless set.
        "cc": ["clang-22", "--target=wasm32-wasi", "--sysroot=/usr", "-O2",
               "-msimd128", "-Wno-deprecated", "-fuse-ld=lld",
               "-Wl,-z,stack-size=8388608"],
        "run": ["node", "--no-warnings", os.path.join(HERE, "run-wasi.mjs")],
        "exe": ".wasm",
    },
}


def runtime_library(targets_dir, target):
    return os.path.join(targets_dir, target, "libtract_runtime.a")


def missing(targets_dir, target):
    """Why programs for `target` cannot be built and run here, or None."""
    spec = TARGETS[target]
    for tool in (spec["cc"][0], spec["run"][0]):
        if not shutil.which(tool):
            return "%s is not installed (scripts/setup.sh installs it)" % tool
    if not os.path.exists(runtime_library(targets_dir, target)):
        return "no runtime built for %s in %s" % (target, targets_dir)
    return None


def cc_command(targets_dir, target, sources, output, includes=()):
    """The command that builds `output` for `target` from C `sources` and
    objects, with the target's runtime."""
    spec = TARGETS[target]
    return (spec["cc"] + ["-I" + RUNTIME_INCLUDE] +
            ["-I" + i for i in includes] + sources +
            [runtime_library(targets_dir, target), "-lm", "-o", output])


def run_command(target, program, args):
    return TARGETS[target]["run"] + [program] + args

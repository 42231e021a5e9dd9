# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "tract-mlir"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tract_obj_root, "test")
# Unit tests run under CTest, not lit.
config.excludes = [
    "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]

config.substitutions.append(("%tract_src_root", config.tract_src_root))
config.substitutions.append(("%tract_obj_root", config.tract_obj_root))
# What a program linking a compiled model needs: the runtime's header and
# static library.
config.substitutions.append(
    ("%tract_runtime_include", os.path.join(config.tract_src_root, "runtime")))
config.substitutions.append(
    ("%tract_runtime_lib",
     os.path.join(config.tract_obj_root, "runtime", "libtract_runtime.a")))
# ... and, for a model whose tensor ops run on Vulkan or CUDA, its GPU
# runtime.
for api in ["vulkan", "cuda"]:
    config.substitutions.append(
        ("%tract_runtime_" + api + "_lib",
         os.path.join(config.tract_obj_root, "runtime",
                      "libtract_runtime_%s.a" % api) + " -ldl -lpthread"))
# A host CPU that sums byte products (AVX-512 VNNI with AVX-512 BW, or
# AArch64's dot product), as the code generator's TargetInfo reads it: the
# decoding steps of Q4_0 products then round their rows to 8 bits.
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return set(word for line in cpuinfo
                       if line.startswith(("flags", "Features"))
                       for word in line.split(":", 1)[1].split())
    except OSError:
        return set()


_flags = _cpu_flags()
if {"avx512_vnni", "avx512bw"} <= _flags or "asimddp" in _flags:
    config.available_features.add("byte-dot")
# NVIDIA's PTX assembler, where the CUDA toolkit is (PATH, CUDA_PATH or
# /usr/local/cuda): REQUIRES: ptxas.
import shutil  # noqa: E402
ptxas = shutil.which("ptxas") or next(
    (p for p in [os.path.join(os.environ.get("CUDA_PATH", ""), "bin", "ptxas"),
                 "/usr/local/cuda/bin/ptxas"] if os.path.isfile(p)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    # The toolkit around it, with libdevice (the kernels' math): what tract
    # finds without --cuda-path.
    toolkit = os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))
    if os.path.isdir(os.path.join(toolkit, "nvvm", "libdevice")) and \
            os.path.isfile(os.path.join(toolkit, "bin", "fatbinary")):
        config.available_features.add("cuda-toolkit")
        config.substitutions.append(("%cuda_toolkit", toolkit))
else:
    lit_config.note("PTX is not assembled: no ptxas (the CUDA toolkit)")
# ... and, for a model compiled for several threads, LLVM's OpenMP runtime.
openmp_dir = os.path.dirname(config.tract_openmp_library)
config.substitutions.append(
    ("%tract_openmp_lib",
     "-L%s -Wl,-rpath,%s -lomp" % (openmp_dir, openmp_dir)))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
# The tests' compile cache is the build's, not the user's (a test that
# checks the cache itself gives its own folder).
llvm_config.with_environment(
    "TRACT_CACHE_DIR", os.path.join(config.tract_obj_root, "compile-cache"))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

tool_dirs = [config.tract_tools_dir, config.llvm_tools_dir]
tools = ["tract", "tract-opt", "tract-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The ONNX backend node and simple-model tests (Debian's libonnx-testdata)
# that frontend tests import.
config.substitutions.append(
    ("%onnx_node", "/usr/share/libonnx-testdata/data/node"))
config.substitutions.append(
    ("%onnx_simple", "/usr/share/libonnx-testdata/data/simple"))

# Programs for the other targets (test/targets/cross.py): %cc-<target>
# builds one with that target's runtime (%runtime-<target>) and %run-<target>
# runs it (qemu-user, Node's WASI). A test that needs them REQUIRES
# run-<target>; where the tools are missing it is reported unsupported, and
# the note below says why.
import sys
sys.path.insert(0, os.path.join(config.tract_src_root, "test", "targets"))
import cross  # noqa: E402

for target, spec in cross.TARGETS.items():
    reason = cross.missing(config.tract_targets_dir, target)
    if reason is None:
        config.available_features.add("run-" + target)
    else:
        lit_config.note("programs for %s are not run: %s" % (target, reason))
    config.substitutions.append(
        ("%cc-" + target,
         " ".join(spec["cc"] + ["-I" + cross.RUNTIME_INCLUDE])))
    config.substitutions.append(
        ("%runtime-" + target,
         cross.runtime_library(config.tract_targets_dir, target)))
    config.substitutions.append(("%run-" + target, " ".join(spec["run"])))

# A Vulkan device (Mesa's lavapipe on machines without a GPU) for the tests
# that run kernels: REQUIRES: vulkan. Asked of tract itself, on the tiny
# model; without one, the note says why.
import subprocess  # noqa: E402

probe = subprocess.run(
    [os.path.join(config.tract_tools_dir, "tract"),
     os.path.join(config.tract_src_root, "examples", "tiny", "model.mlir"),
     "--set", "S=1", "--gpu", "vulkan", "run", "-q", "--allow-random-input"],
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if probe.returncode == 0:
    config.available_features.add("vulkan")
else:
    lit_config.note("GPU kernels are not run: " +
                    probe.stderr.decode(errors="replace").strip())

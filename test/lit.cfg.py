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
# ... and, for a model compiled for several threads, LLVM's OpenMP runtime.
openmp_dir = os.path.dirname(config.tract_openmp_library)
config.substitutions.append(
    ("%tract_openmp_lib",
     "-L%s -Wl,-rpath,%s -lomp" % (openmp_dir, openmp_dir)))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
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

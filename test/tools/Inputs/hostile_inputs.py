#!/usr/bin/env python3
"""The hostile-input corpus: malformed and malicious models, archives and
bundles, each written to --out and given to tract. Every one must end with
exit code 1 (never a signal, never a hang) and a first line of error that
names the file and says the expected cause. Prints one line per case and
exits 1 if any case fails."""
import argparse
import io
import os
import struct
import subprocess
import sys
import tarfile

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "frontends", "nnef"))
import make_nnef  # noqa: E402

F = TensorProto.FLOAT


def value(name, dims, dtype=F):
    return helper.make_tensor_value_info(name, dtype, dims)


def onnx_model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def relu_model(dims):
    return onnx_model([helper.make_node("Relu", ["x"], ["y"])],
                      [value("x", dims)], [value("y", dims)])


def initializer(dims, raw=b""):
    tensor = TensorProto()
    tensor.name = "w"
    tensor.data_type = F
    tensor.dims.extend(dims)
    tensor.raw_data = raw
    return onnx_model([helper.make_node("Add", ["x", "w"], ["y"])],
                      [value("x", [1])], [value("y", [1])], [tensor])


def nested_if(depth):
    """An If whose then-branch holds an If... `depth` levels deep."""
    def leaf(level):
        return helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y%d" % level])],
            "leaf%d" % level, [], [value("y%d" % level, [1])])
    branch = leaf(depth)
    for level in reversed(range(depth)):
        node = helper.make_node("If", ["c"], ["y%d" % level],
                                then_branch=branch, else_branch=leaf(level))
        branch = helper.make_graph([node], "b%d" % level, [],
                                   [value("y%d" % level, [1])])
    graph = helper.make_graph(
        list(branch.node), "g",
        [value("c", [], TensorProto.BOOL), value("x", [1])],
        [value("y0", [1])])
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


GRAPH_HEAD = "version 1.0;\ngraph g(x) -> (y) {\n  x = external(shape = [1]);\n"


def nnef_folder(out, name, text, files=()):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(text)
    for member, data in files:
        with open(os.path.join(folder, member), "wb") as f:
            f.write(data)
    return folder


def fragment_graph(fragments):
    return ("version 1.0;\n" + "".join(
        "fragment %s(x: tensor<scalar>) -> (y: tensor<scalar>) {\n"
        "  y = %s(x);\n}\n" % (name, calls) for name, calls in fragments) +
        GRAPH_HEAD.replace("version 1.0;\n", "") + "  y = f(x);\n}\n")


def tar_bytes(members, gz=False):
    """Members are (TarInfo, data or None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def regular(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def link(name, target, kind):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


GRAPH = (GRAPH_HEAD + "  y = relu(x);\n}\n").encode()


def huge_entry():
    """A tar header claiming 10^12 bytes, followed by a few."""
    info = tarfile.TarInfo("big.dat")
    info.size = 10**12
    graph, data = regular("graph.nnef", GRAPH)
    padding = b"\0" * (-len(data) % 512)
    return graph.tobuf() + data + padding + info.tobuf() + b"\0" * 4096


def many_entries(count):
    return tar_bytes([regular("graph.nnef", GRAPH)] +
                     [regular("e%d.txt" % i, b"") for i in range(count)],
                     gz=True)


def write(out, name, data):
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def cases(out):
    """(path, extra tract arguments, expected cause)."""
    good = write(out, "good.onnx", relu_model([1, 4]))
    yield write(out, "truncated.onnx", good_bytes(good)[:40]), [], \
        "is not a valid ONNX model"
    flipped = bytearray(good_bytes(good))
    flipped[1:5] = b"\xff\xff\xff\x7f"  # a length beyond the file
    yield write(out, "bitflip.onnx", bytes(flipped)), [], \
        "is not a valid ONNX model"
    yield write(out, "cycle.onnx", onnx_model(
        [helper.make_node("Relu", ["b"], ["a"]),
         helper.make_node("Relu", ["a"], ["b"]),
         helper.make_node("Add", ["x", "b"], ["y"])],
        [value("x", [1, 4])], [value("y", [1, 4])])), [], \
        "input 'b' is not defined before it (a later node produces it"
    yield write(out, "missing_input.onnx", onnx_model(
        [helper.make_node("Add", ["x", "nowhere"], ["y"])],
        [value("x", [1, 4])], [value("y", [1, 4])])), [], \
        "input 'nowhere' is not defined"
    transpose = helper.make_node("Transpose", ["x"], ["y"])
    transpose.attribute.append(helper.make_attribute("perm", [1.0, 0.0]))
    yield write(out, "attribute_type.onnx", onnx_model(
        [transpose], [value("x", [1, 4])], [value("y", [4, 1])])), [], \
        "attribute 'perm' is FLOATS, not INTS"
    # -1 is an unknown dim (Kaldi and TensorFlow exporters write it so);
    # any other negative dim is refused.
    yield write(out, "dim_negative.onnx", relu_model([-2, 4])), [], \
        "has the dim -2, outside 0 to 2^31"
    yield write(out, "dim_huge.onnx", relu_model([2**62, 4])), [], \
        "has the dim 4611686018427387904, outside 0 to 2^31"
    yield write(out, "initializer_huge.onnx", initializer([2**62])), [], \
        "has more elements than a tensor can"
    yield write(out, "initializer_negative.onnx", initializer([-1])), [], \
        "has a negative dim"
    yield write(out, "initializer_empty_with_data.onnx",
                initializer([0], raw=b"\0" * 4)), [], \
        "holds 4 bytes, expected 0"
    yield write(out, "nested_if.onnx", nested_if(60)), [], \
        "is not a valid ONNX model"

    yield nnef_folder(out, "unbalanced",
                      GRAPH_HEAD + "  y = relu((x);\n}\n"), [], \
        "expected ')', found ';'"
    yield nnef_folder(out, "unknown_fragment",
                      GRAPH_HEAD + "  y = mystery(x);\n}\n"), [], \
        "unknown operation 'mystery'"
    yield nnef_folder(out, "recursive_fragment",
                      fragment_graph([("f", "f")])), [], \
        "fragments nest deeper than 64 invocations"
    yield nnef_folder(out, "mutual_fragments",
                      fragment_graph([("f", "h"), ("h", "f")])), [], \
        "fragments nest deeper than 64 invocations"
    lying = bytearray(make_nnef.dat_bytes(np.zeros(4, np.float32)))
    struct.pack_into("<I", lying, 12, 1000)  # dim 0 of the header
    yield nnef_folder(
        out, "lying_dat",
        GRAPH_HEAD.replace("[1]", "[4]") +
        "  w = variable(shape = [4], label = 'w');\n  y = add(x, w);\n}\n",
        [("w.dat", bytes(lying))]), [], \
        "header declares 16 data bytes, but 1000 items of 32 bits take 4000"

    dat = make_nnef.dat_bytes(np.zeros(1, np.float32))
    yield write(out, "dotdot.tgz", tar_bytes(
        [regular("graph.nnef", GRAPH), regular("../escape.dat", dat)],
        gz=True)), [], "paths leaving the archive ('..') are refused"
    yield write(out, "absolute.tar", tar_bytes(
        [regular("graph.nnef", GRAPH), regular("/tmp/abs.dat", dat)])), [], \
        "absolute paths are refused"
    yield write(out, "symlink.tar", tar_bytes(
        [regular("graph.nnef", GRAPH),
         link("w.dat", "/etc/passwd", tarfile.SYMTYPE)])), [], \
        "symbolic links are refused"
    yield write(out, "hardlink.tar", tar_bytes(
        [regular("graph.nnef", GRAPH),
         link("w.dat", "graph.nnef", tarfile.LNKTYPE)])), [], \
        "hard links are refused"
    yield write(out, "huge_entry.tar", huge_entry()), [], \
        "claims more bytes than the archive can hold"
    yield write(out, "many_entries.tgz", many_entries(70000)), [], \
        "has more than 65536 entries"

    mismatch = os.path.join(out, "mismatch.npz")
    np.savez(mismatch, x=np.zeros((2, 3), np.float32))
    yield mismatch, [good, "run", "--input-from-bundle", mismatch], \
        "input 'x' is 2,3, the model expects 1,4"
    truncated = os.path.join(out, "truncated.npz")
    np.savez(truncated, x=np.zeros((1, 4), np.float32))
    with open(truncated, "r+b") as f:
        f.truncate(os.path.getsize(truncated) // 2)
    yield truncated, [good, "run", "--input-from-bundle", truncated], \
        "truncated.npz"


def good_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--driver",
                        help="a program that loads the model at its one "
                             "argument (the C API's test); the cases that "
                             "need tract's own flags are left out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for path, extra, expected in cases(args.out):
        if args.driver and extra:
            continue
        command = ([args.driver, path] if args.driver else
                   [args.tract] + (extra or [path, "dump"]))
        name = os.path.basename(path)
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  timeout=60)
        except subprocess.TimeoutExpired:
            print("FAIL %s: no answer within 60 s" % name)
            failures += 1
            continue
        lines = proc.stderr.splitlines()
        first = lines[0] if lines else ""
        if proc.returncode < 0:
            problem = "killed by signal %d" % -proc.returncode
        elif proc.returncode != 1:
            problem = "exit code %d" % proc.returncode
        elif name not in first:
            problem = "the first line does not name the file"
        elif expected not in first:
            problem = "expected '%s'" % expected
        else:
            print("ok   %s: %s" % (name, first))
            continue
        failures += 1
        print("FAIL %s: %s; stderr: %s" % (name, problem,
                                           proc.stderr.strip()[:500]))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

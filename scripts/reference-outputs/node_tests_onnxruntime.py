#!/usr/bin/env python3
"""Runs the ONNX backend node tests through onnxruntime-node, as
run_node_tests.py runs them through tract: every input of test_data_set_N
an input, the outputs checked against the test's at the tolerance of
`tract run --approx approximate` (atol 1e-4, rtol 5e-4 for 32- and 64-bit
floats; 1e-3, 5e-3 for 16-bit; exact otherwise; NaN matches NaN).

Writes one line per test, `NAME<TAB>pass` or `NAME<TAB>fail: REASON`, the
first line naming the onnxruntime version; run_node_tests.py --onnxruntime
reads it into the conformance report's onnxruntime column. onnxruntime-node
takes tensors only: a test whose inputs or outputs are sequences or
optionals fails here for that reason, whatever onnxruntime's C++ runner
would do with it.

Usage: node_tests_onnxruntime.py --node-path NODE_PATH --out FILE [--data D]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCES = {2: (1e-3, 5e-3), 4: (1e-4, 5e-4), 8: (1e-4, 5e-4)}
# numpy dtype names onnxruntime-node takes as they are.
ORT_DTYPES = {"float32", "float64", "float16", "int8", "uint8", "int16",
              "uint16", "int32", "uint32", "int64", "uint64", "bool"}


def graph_io(model):
    """(name, is a tensor) of the graph's inputs (initializers excepted)
    and outputs."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [(i.name, i.type.HasField("tensor_type"))
              for i in model.graph.input if i.name not in initializers]
    outputs = [(o.name, o.type.HasField("tensor_type"))
               for o in model.graph.output]
    return inputs, outputs


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    if tensor.data_type == onnx.TensorProto.BFLOAT16:
        raise ValueError("bfloat16 tensors (onnxruntime-node has no such "
                         "type)")
    return numpy_helper.to_array(tensor)


def write_inputs(arrays, names, work):
    entries = []
    for index, (name, array) in enumerate(zip(names, arrays)):
        if array.dtype.kind in "OUS":
            entries.append({"name": name, "dtype": "string",
                            "dims": list(array.shape),
                            "values": [str(v) for v in array.flatten()]})
            continue
        dtype = array.dtype.name
        if dtype not in ORT_DTYPES:
            raise ValueError("input '%s' of dtype %s" % (name, dtype))
        file = "input_%d.bin" % index
        np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")) \
            .tofile(os.path.join(work, file))
        entries.append({"name": name, "dtype": dtype,
                        "dims": list(array.shape), "file": file})
    with open(os.path.join(work, "inputs.json"), "w") as f:
        json.dump(entries, f)


def read_outputs(work):
    with open(os.path.join(work, "outputs.json")) as f:
        entries = json.load(f)
    outputs = []
    for entry in entries:
        if entry["dtype"] == "string":
            outputs.append(np.array(entry["values"], dtype=object)
                           .reshape(entry["dims"]))
            continue
        dtype = np.dtype("bool" if entry["dtype"] == "bool"
                         else entry["dtype"]).newbyteorder("<")
        data = np.fromfile(os.path.join(work, entry["file"]), dtype=dtype)
        outputs.append(data.reshape(entry["dims"]))
    return outputs


def compare(name, expected, got):
    """None when `got` matches `expected`, else the reason."""
    if expected.shape != got.shape:
        return "output '%s': shape %s, expected %s" % (
            name, list(got.shape), list(expected.shape))
    if expected.dtype.kind in "OUS":
        same = np.array_equal(expected.astype(str), got.astype(str))
        return None if same else "output '%s': strings differ" % name
    if expected.dtype.kind == "f":
        atol, rtol = TOLERANCES[expected.dtype.itemsize]
        e = expected.astype(np.float64)
        g = got.astype(np.float64)
        both_nan = np.isnan(e) & np.isnan(g)
        close = np.abs(g - e) <= atol + rtol * np.abs(e)
        close |= both_nan | (e == g)
        bad = int(np.count_nonzero(~close))
    else:
        bad = int(np.count_nonzero(expected != got.astype(expected.dtype)))
    if bad:
        return "output '%s': %d of %d values differ" % (name, bad,
                                                         expected.size)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--node-path", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--filter", default="",
                        help="only the tests whose name contains this")
    args = parser.parse_args()
    root = os.path.join(args.data, "node")
    tests = sorted(d for d in os.listdir(root)
                   if args.filter in d and
                   os.path.exists(os.path.join(root, d, "model.onnx")))
    results = {}
    with tempfile.TemporaryDirectory() as work:
        runs = []   # (test, data set dir, work dir, output names)
        manifest = []
        for test in tests:
            directory = os.path.join(root, test)
            model_path = os.path.join(directory, "model.onnx")
            try:
                model = onnx.load(model_path, load_external_data=False)
            except Exception as error:  # noqa: BLE001 - any parse failure
                results[test] = "fail: cannot read the model: %s" % error
                continue
            inputs, outputs = graph_io(model)
            kinds = [n for n, is_tensor in inputs + outputs if not is_tensor]
            if kinds:
                results[test] = ("fail: '%s' is not a tensor (onnxruntime-node "
                                 "takes tensors only)" % kinds[0])
                continue
            sets = sorted(d for d in os.listdir(directory)
                          if d.startswith("test_data_set_"))
            for data_set in sets:
                case = os.path.join(work, test, data_set)
                os.makedirs(case)
                try:
                    arrays = [read_tensor(os.path.join(directory, data_set,
                                                       "input_%d.pb" % i))
                              for i in range(len(inputs))]
                    write_inputs(arrays, [n for n, _ in inputs], case)
                except (ValueError, OSError) as error:
                    results.setdefault(test, "fail: %s" % error)
                    break
                runs.append((test, os.path.join(directory, data_set), case,
                             [n for n, _ in outputs]))
                manifest.append({"model": model_path, "dir": case})
        with open(os.path.join(work, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        env = dict(os.environ, NODE_PATH=args.node_path)
        proc = subprocess.run(
            ["node", os.path.join(HERE, "run_onnxruntime.js"), "--batch",
             os.path.join(work, "manifest.json")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            sys.exit("node_tests_onnxruntime: %s" % proc.stderr.decode())
        version = subprocess.run(
            ["node", "-p", "require('onnxruntime-node/package.json').version"],
            env=env, stdout=subprocess.PIPE, check=True).stdout.decode().strip()
        for test, data_set, case, names in runs:
            if test in results:
                continue
            error = os.path.join(case, "error.txt")
            if os.path.exists(error):
                with open(error) as f:
                    message = f.read().strip().splitlines()
                results[test] = "fail: %s" % (message[0] if message else "error")
                continue
            got = read_outputs(case)
            for i, name in enumerate(names):
                expected = read_tensor(os.path.join(data_set,
                                                    "output_%d.pb" % i))
                reason = compare(name, expected, got[i])
                if reason:
                    results[test] = "fail: %s" % reason
                    break
        for test in tests:
            results.setdefault(test, "pass")
    passed = sum(1 for r in results.values() if r == "pass")
    with open(args.out, "w") as f:
        f.write("# onnxruntime-node %s: %d of %d node tests pass\n"
                % (version, passed, len(tests)))
        for test in tests:
            f.write("%s\t%s\n" % (test, results[test].replace("\n", " ")))
    print("onnxruntime-node %s: %d of %d node tests pass" % (version, passed,
                                                             len(tests)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

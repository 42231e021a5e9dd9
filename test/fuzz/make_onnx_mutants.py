#!/usr/bin/python3
"""Mutants of the ONNX backend node tests, for the onnx fuzz target.

Random bytes rarely make a model whose nodes import far enough to reach an
op handler's corner cases; these do. From each node test's model, one
change at a time:

* a node input or output name left empty (a missing input or output), or
  all of a node's inputs dropped;
* a graph input's element type changed, its shape made a scalar, unknown,
  one axis longer, all symbolic or all zero;
* a graph input made an initializer holding the test's data, or extreme
  values of its type (-1, 0, 2^40, the type's least and greatest, NaN,
  infinities, 1e30), one value shorter or longer, empty, or a scalar;
* an attribute removed, or its value replaced (negative, zero, 2^40,
  -2^62, NaN, infinite, an empty, shorter or longer list, an empty or
  unknown string);
* the same node and attribute changes with every input an initializer of
  the test's data.

The same files on every run (no randomness): scripts/fuzz.sh --mutants
replays them through the fuzz target; each must import or be refused with
an error.

Usage: make_onnx_mutants.py NODE_TESTS_DIR OUT_DIR
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

ELEMENT_TYPES = (TensorProto.BOOL, TensorProto.STRING, TensorProto.INT8,
                 TensorProto.FLOAT16, TensorProto.UINT64, TensorProto.INT64,
                 TensorProto.FLOAT, TensorProto.COMPLEX64)
MAX_VALUES = 4096


def copy(model):
    result = onnx.ModelProto()
    result.CopyFrom(model)
    return result


class Writer:
    def __init__(self, out):
        self.out = out
        self.count = 0

    def save(self, model, tag):
        with open(os.path.join(self.out, tag + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        self.count += 1


def test_inputs(folder, count):
    """The arrays of test_data_set_0, None where one cannot be read."""
    arrays = []
    for i in range(count):
        path = os.path.join(folder, "test_data_set_0", f"input_{i}.pb")
        try:
            tensor = TensorProto()
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
            arrays.append(numpy_helper.to_array(tensor))
        except Exception:
            arrays.append(None)
    return arrays


def value_variants(array):
    variants = [("same", array)]
    if array.dtype.kind in "iu":
        info = np.iinfo(array.dtype)
        for tag, value in (("neg", -1), ("zero", 0), ("big", 1 << 40),
                           ("min", info.min), ("max", info.max)):
            with np.errstate(all="ignore"):
                variants.append((tag, np.full_like(array, value)))
    elif array.dtype.kind == "f":
        for tag, value in (("nan", np.nan), ("inf", np.inf),
                           ("ninf", -np.inf), ("huge", 1e30), ("neg", -1.0),
                           ("zero", 0.0)):
            with np.errstate(all="ignore"):
                variants.append((tag, np.full_like(array, value)))
    if array.ndim == 1 and array.size > 0:
        variants += [("short", array[:-1]),
                     ("long", np.concatenate([array, array[:1]])),
                     ("empty", array[:0])]
    if array.ndim >= 1 and array.size > 0:
        variants.append(("scalar", array.reshape(-1)[:1].reshape(())))
    return variants


def attribute_variants(attribute):
    n = max(1, len(attribute.ints) or len(attribute.floats))
    if attribute.type == AttributeProto.INT:
        return [("i", v) for v in (-1, 0, 2, 1 << 40, -(1 << 62))]
    if attribute.type == AttributeProto.INTS:
        ints = list(attribute.ints)
        return [("ints", v) for v in ([], [-1] * n, [0] * n, [1 << 40] * n,
                                      ints + [0], ints[:-1])]
    if attribute.type == AttributeProto.FLOAT:
        return [("f", v) for v in (float("nan"), float("inf"), -1.0, 0.0,
                                   1e30)]
    if attribute.type == AttributeProto.FLOATS:
        floats = list(attribute.floats)
        return [("floats", v) for v in ([], [float("nan")] * n,
                                        floats + [0.0])]
    if attribute.type == AttributeProto.STRING:
        return [("s", v) for v in (b"", b"bogus")]
    return []


def node_mutants(writer, model, name, outputs):
    for n, node in enumerate(model.graph.node):
        for i, input_name in enumerate(node.input):
            if input_name:
                mutant = copy(model)
                mutant.graph.node[n].input[i] = ""
                writer.save(mutant, f"{name}.n{n}.i{i}")
        for a, attribute in enumerate(node.attribute):
            mutant = copy(model)
            del mutant.graph.node[n].attribute[a]
            writer.save(mutant, f"{name}.n{n}.a{a}.del")
            for v, (field, value) in enumerate(
                    attribute_variants(attribute)):
                mutant = copy(model)
                target = mutant.graph.node[n].attribute[a]
                if isinstance(value, list):
                    target.ClearField(field)
                    getattr(target, field).extend(value)
                else:
                    setattr(target, field, value)
                writer.save(mutant, f"{name}.n{n}.a{a}.v{v}")
        if outputs:
            for o in range(len(node.output)):
                mutant = copy(model)
                mutant.graph.node[n].output[o] = ""
                writer.save(mutant, f"{name}.n{n}.o{o}")
            if len(node.input):
                mutant = copy(model)
                del mutant.graph.node[n].input[:]
                writer.save(mutant, f"{name}.n{n}.noin")


def input_type_mutants(writer, model, name):
    for g, graph_input in enumerate(model.graph.input):
        if not graph_input.type.HasField("tensor_type"):
            continue
        for element_type in ELEMENT_TYPES:
            if graph_input.type.tensor_type.elem_type == element_type:
                continue
            mutant = copy(model)
            mutant.graph.input[g].type.tensor_type.elem_type = element_type
            writer.save(mutant, f"{name}.g{g}.t{element_type}")
        for tag in ("scalar", "norank", "extra", "sym", "zero"):
            mutant = copy(model)
            tensor_type = mutant.graph.input[g].type.tensor_type
            if tag == "scalar":
                tensor_type.shape.ClearField("dim")
            elif tag == "norank":
                tensor_type.ClearField("shape")
            elif tag == "extra":
                tensor_type.shape.dim.add().dim_value = 1
            else:
                for dim in tensor_type.shape.dim:
                    if tag == "sym":
                        dim.dim_param = "S"
                    else:
                        dim.dim_value = 0
            writer.save(mutant, f"{name}.g{g}.{tag}")


def initializer_mutants(writer, model, name, arrays):
    for g, array in enumerate(arrays):
        if array is None or array.size > MAX_VALUES:
            continue
        for tag, values in value_variants(array):
            mutant = copy(model)
            graph_input = mutant.graph.input[g].name
            mutant.graph.initializer.append(
                numpy_helper.from_array(np.asarray(values), graph_input))
            del mutant.graph.input[g]
            writer.save(mutant, f"{name}.c{g}.{tag}")


def all_constant(model, arrays):
    if any(a is None or a.size > MAX_VALUES for a in arrays):
        return None
    result = copy(model)
    for g in reversed(range(len(arrays))):
        result.graph.initializer.append(
            numpy_helper.from_array(arrays[g], result.graph.input[g].name))
        del result.graph.input[g]
    return result


def main():
    tests, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    writer = Writer(out)
    for path in sorted(glob.glob(os.path.join(tests, "*", "model.onnx"))):
        folder = os.path.dirname(path)
        name = os.path.basename(folder)
        try:
            model = onnx.load(path)
        except Exception:
            continue
        node_mutants(writer, model, name, outputs=True)
        input_type_mutants(writer, model, name)
        arrays = test_inputs(folder, len(model.graph.input))
        initializer_mutants(writer, model, name, arrays)
        constant = all_constant(model, arrays)
        if constant is not None:
            writer.save(constant, f"{name}.allc")
            node_mutants(writer, constant, f"{name}.allc", outputs=False)
    print(f"{writer.count} mutants in {out}")


if __name__ == "__main__":
    main()

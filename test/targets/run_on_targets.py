#!/usr/bin/env python3
"""Compiles models for the other targets, runs them there and checks their
outputs against the host's `tract run`.

For each case (a sample of the ONNX backend node tests that pass on the
host, and the models given with --model), the model is compiled with
`tract compile --target T --name model`, linked with test/targets/Inputs/
run-model.c and T's runtime, and run under qemu-user or Node's WASI on the
case's inputs (.npy files); its outputs, gathered into an .npz, must match
what `tract run` computes on the host at --approx (approximate unless
given). A case is:

  pass   the target's outputs match the host's;
  fail   compiling, linking or running for the target fails, or an output
         differs.

Node tests that do not pass on the host (unsupported, or a mismatch with
the test's reference) and those drawing random numbers are left out: the
conformance suite reports them; so are those with strings or bf16 among
their inputs and outputs, which .npy files do not hold. Writes a markdown report and fails on any
failure, or when fewer than --min node tests were compared on a target;
exits with 77 (skipped) when a target's compiler or runner is missing.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "onnx"))
import cross  # noqa: E402
import import_node_tests  # noqa: E402
import run_node_tests  # noqa: E402
import sample  # noqa: E402  (test/, on the path from run_node_tests)

RUNNER = os.path.join(HERE, "Inputs", "run-model.c")


class Case:
    """A model, the facts that make it compile (`-i ...`), its inputs by
    name as .npy files, and the same as a bundle for `tract run`."""

    def __init__(self, name, model, facts, inputs, bundle):
        self.name, self.model, self.facts, self.inputs, self.bundle = (
            name, model, facts, inputs, bundle)


def node_case(tract, translate, test_dir, work, approx, timeout):
    """The node test in `test_dir` as a Case, or None when it does not pass
    on the host or draws random numbers."""
    import numpy
    import onnx
    model = os.path.join(test_dir, "model.onnx")
    status, _, facts = import_node_tests.import_one(translate, model)
    if status != "ok":
        return None
    data = os.path.join(test_dir, "test_data_set_0")
    if not os.path.isdir(data):
        return None
    given = sum((["-i", fact] for fact in facts), [])
    status, message = run_node_tests.run_data_set([tract] + given, model,
                                                  model, data, approx, timeout)
    if status != "pass" or message:
        return None
    graph = onnx.load(model, load_external_data=False).graph
    # bf16 has no .npy form.
    if any(value.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
           for value in list(graph.input) + list(graph.output)):
        return None
    constants = {init.name for init in graph.initializer}
    names = [i.name for i in graph.input if i.name not in constants]
    files = sorted((f for f in os.listdir(data) if f.startswith("input_")),
                   key=lambda f: int(f[len("input_"):-len(".pb")]))
    name = os.path.basename(test_dir)
    inputs = {}
    os.makedirs(os.path.join(work, name), exist_ok=True)
    for position, (input_name, file) in enumerate(zip(names, files)):
        path = os.path.join(work, name, "input_%d.npy" % position)
        array = run_node_tests.read_pb(os.path.join(data, file))
        if array.dtype == object:  # strings: no target runs them
            return None
        numpy.save(path, numpy.array(array, order="C"))
        inputs[input_name] = path
    return Case(name, model, given, inputs, data)


DTYPES = {"F32": "float32", "F64": "float64", "F16": "float16",
          "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
          "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64",
          "Bool": "bool"}


def model_case(tract, spec, work, seed):
    """The model of `spec` (PATH[@FACT...], each FACT given to `-i`) as a
    Case, on random inputs of the shapes its header lists."""
    import numpy
    path, *facts = spec.split("@")
    name = os.path.basename(path)
    here = os.path.join(work, name)
    os.makedirs(here, exist_ok=True)
    command = sum((["-i", fact] for fact in facts), [])
    header = os.path.join(here, "host.h")
    proc = subprocess.run([tract] + command + [
        path, "compile", "-o", os.path.join(here, "host.o"), "--header",
        header], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise SystemExit("%s: %s" % (spec, run_node_tests.first_error(
            proc.stderr.decode(errors="replace"))))
    rng = numpy.random.default_rng(seed)
    inputs, arrays = {}, {}
    with open(header) as f:
        lines = f.read().split(" * Outputs:")[0].splitlines()
    for line in lines:
        match = re.match(r" \*   (\d+) '(.*)': (.*)$", line)
        if not match:
            continue
        position, input_name, fact = match.groups()
        *dims, dtype = fact.split(" (")[0].split(",")
        if not all(d.isdigit() for d in dims):
            raise SystemExit("%s: input '%s' is %s: give its dims" %
                             (spec, input_name, fact))
        shape = [int(d) for d in dims]
        kind = numpy.dtype(DTYPES[dtype])
        if kind.kind == "f":
            array = (0.5 * rng.standard_normal(shape)).astype(kind)
        elif kind.kind == "b":
            array = rng.integers(0, 2, shape).astype(kind)
        else:
            array = rng.integers(0, 4, shape).astype(kind)
        file = os.path.join(here, "input_%s.npy" % position)
        numpy.save(file, array)
        inputs[input_name] = file
        arrays[input_name] = array
    bundle = os.path.join(here, "inputs.npz")
    numpy.savez(bundle, **arrays)
    return Case(name, path, command, inputs, bundle)


def run_case(tract, targets_dir, target, case, work, approx, timeout,
             cpus={}):
    """(status, message) of `case` on `target` (compiled for cpus[target]
    when given)."""
    import numpy
    here = os.path.join(work, case.name, target)
    os.makedirs(here, exist_ok=True)
    obj = os.path.join(here, "model.o")
    program = os.path.join(here, "run-model" + cross.TARGETS[target]["exe"])

    def step(what, command):
        try:
            proc = subprocess.run(command, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "%s: timed out after %d s" % (what, timeout)
        if proc.returncode != 0:
            return None, "%s: %s" % (what, run_node_tests.first_error(
                proc.stderr.decode(errors="replace") or
                proc.stdout.decode(errors="replace")))
        return proc.stdout.decode(errors="replace"), None

    _, error = step("compile", [tract] + case.facts + [
        case.model, "compile", "--target", target, "--name", "model",
        "-o", obj, "--header", os.path.join(here, "model.h")] +
        (["--cpu", cpus[target]] if target in cpus else []))
    if error:
        return "fail", error
    _, error = step("link", cross.cc_command(
        targets_dir, target, [RUNNER, obj], program, includes=[here]))
    if error:
        return "fail", error
    out, error = step("run", cross.run_command(
        target, program,
        [here] + ["%s=%s" % item for item in case.inputs.items()]))
    if error:
        return "fail", error
    outputs = {}
    for line in out.splitlines():
        if line.startswith("output "):
            _, index, name = line.split(" ", 2)
            outputs[name] = numpy.load(os.path.join(here, index + ".npy"))
    bundle = os.path.join(here, "outputs.npz")
    numpy.savez(bundle, **outputs)
    _, error = step("host check", [tract] + case.facts + [
        case.model, "run", "-q", "--input-from-bundle", case.bundle,
        "--assert-output-bundle", bundle,
        "--approx", approx])
    if error:
        return "fail", error
    return "pass", ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--translate", required=True)
    parser.add_argument("--targets-dir", required=True,
                        help="the cross-built runtimes: <build>/targets")
    parser.add_argument("--targets", default=",".join(cross.TARGETS))
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    sample.add_arguments(parser, default=8, what="node test")
    sample.add_shard_argument(parser)
    parser.add_argument("--filter", default="", help="only tests containing this")
    parser.add_argument("--model", action="append", default=[],
                        metavar="PATH[@FACT...]",
                        help="a model to run on random inputs, with the "
                        "facts (-i) its inputs need")
    parser.add_argument("--min", type=int, default=0,
                        help="node tests each target must have compared")
    parser.add_argument("--approx", default="approximate")
    parser.add_argument("--cpu", action="append", default=[],
                        metavar="TARGET=CPU",
                        help="compile for this CPU of TARGET (tract compile "
                             "--cpu), e.g. aarch64=neoverse-n1 for its dot "
                             "product instructions")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--report", help="markdown file to write")
    args = parser.parse_args()

    targets = [t for t in args.targets.split(",") if t]
    cpus = dict(spec.split("=", 1) for spec in args.cpu)
    runnable = []
    for target in targets:
        reason = cross.missing(args.targets_dir, target)
        if reason:
            print("not run on %s: %s" % (target, reason))
        else:
            runnable.append(target)

    node = os.path.join(args.data, "node")
    tests = sorted(d for d in os.listdir(node) if args.filter in d)
    chosen = sample.Sample.from_args(args)
    print("node tests: %s" % chosen.describe())
    tests = sample.shard(chosen.pick(tests), args.shard)
    # Each model keeps the seed of its inputs, whichever shard runs it.
    models = sample.shard(list(enumerate(args.model)), args.shard)
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        cases = [c for c in pool.map(
            lambda t: node_case(args.tract, args.translate,
                                os.path.join(node, t), work, args.approx,
                                args.timeout), tests) if c]
        node_cases = len(cases)
        cases += [model_case(args.tract, spec, work, seed)
                  for seed, spec in models]
        jobs = [(target, case) for target in runnable for case in cases]
        results = list(pool.map(
            lambda job: run_case(args.tract, args.targets_dir, job[0], job[1],
                                 work, args.approx, args.timeout, cpus),
            jobs))

    table = {}
    for (target, case), result in zip(jobs, results):
        table.setdefault(case.name, {})[target] = result
    failed = [(t, c.name, r[1]) for (t, c), r in zip(jobs, results)
              if r[0] != "pass"]
    for target in runnable:
        passed = sum(1 for (t, _), r in zip(jobs, results)
                     if t == target and r[0] == "pass")
        print("%s: %d of %d cases match the host (%d node tests, %d "
              "models)" % (target, passed, len(cases), node_cases,
                           len(cases) - node_cases))
    for target, name, message in failed:
        print("FAIL %s on %s: %s" % (name, target, message))
    if args.report:
        with open(args.report, "w") as out:
            out.write("# Compiled for other targets\n\n"
                      "Of the ONNX node tests, %s, when it passes on the "
                      "host, compiled for each target, run there "
                      "(qemu-user, Node's WASI) and compared with the "
                      "host's `tract run` at `--approx %s`.\n\n" % (
                          chosen.describe(), args.approx))
            out.write("| test | " + " | ".join(runnable) + " |\n")
            out.write("|---|" + "---|" * len(runnable) + "\n")
            for name in sorted(table):
                cells = []
                for target in runnable:
                    status, message = table[name][target]
                    cells.append(status + (": " + message.replace("|", "\\|")
                                           if message else ""))
                out.write("| %s | %s |\n" % (name, " | ".join(cells)))
    short = [t for t in runnable if node_cases < args.min]
    if short:
        print("fewer than %d node tests compared on %s" %
              (args.min, ", ".join(short)))
    if failed or short:
        return 1
    # CTest counts the run skipped (SKIP_RETURN_CODE) when a target could
    # not run: its reason is printed above.
    return 77 if len(runnable) < len(targets) else 0


if __name__ == "__main__":
    sys.exit(main())

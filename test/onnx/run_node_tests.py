#!/usr/bin/env python3
"""Runs the ONNX backend tests through `tract MODEL run`.

For each test of each group (node, simple, pytorch-converted,
pytorch-operator), the model is imported as `import_node_tests.py` does
(retrying with parameter inputs given as constants from the test's data),
then compiled and run on every test_data_set_N, and its outputs checked with
`--assert-output-bundle` at the chosen approximation. With
`--without-constants`, each test also runs as onnxruntime runs it, every
input an input (no retry), in a second column. Each test is:

  pass         every data set matches;
  fail         an output differs, or the run reports an error;
  unsupported  the import or the lowering refuses an op, attribute or type;
  crash        the process dies on a signal or times out.

Writes a markdown report and fails when fewer than --min node tests pass or
when anything crashes.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import import_node_tests  # noqa: E402
import sample  # noqa: E402

GROUPS = ["node", "simple", "pytorch-converted", "pytorch-operator"]


def first_error(stderr):
    lines = [line for line in stderr.splitlines() if "error:" in line]
    if not lines:
        lines = stderr.splitlines() or ["no message"]
    line = lines[0]
    message = line.split("error:", 1)[1].strip() if "error:" in line else line
    # The inputs are the test's own: the report names no folder.
    return re.sub(r" \(inputs from [^()]*\)$", "", message)


# Ops whose outputs are draws: a test's data holds one draw, which no other
# generator reproduces. Such a test that differs in values is checked by
# statistics instead (random_statistics), as onnxruntime's own runner
# cannot compare them either.
RANDOM_OPS = {"Bernoulli", "RandomUniform", "RandomUniformLike",
              "RandomNormal", "RandomNormalLike"}


def random_kind(model_path):
    """'bernoulli' (0/1 draws of the probabilities in input 0: Bernoulli or
    its expansion), 'dropout' (Dropout given a training mode), or None."""
    import onnx
    nodes = onnx.load(model_path, load_external_data=False).graph.node
    types = {node.op_type for node in nodes}
    if "Bernoulli" in types or (
            "RandomUniformLike" in types and types & {"Less", "Greater"}):
        return "bernoulli"
    if any(node.op_type == "Dropout" and len(node.input) >= 3 and
           node.input[2] for node in nodes):
        return "dropout"
    return None


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def random_statistics(kind, data, saved):
    """None when tract's draws in `saved` (an .npz) fit the distribution the
    test's inputs in `data` describe, else the reason: Bernoulli outputs are
    0 or 1, not all the same, with a mean within 3 standard deviations of
    the probabilities'; a training Dropout keeps each element as
    x / (1 - ratio) or drops it to 0, its mask says which, and the share
    kept is within 3 standard deviations of 1 - ratio. tract's draws are
    the same on every run (seeded per op), so the check is too."""
    import numpy as np
    got = np.load(saved)
    outputs = [got[name] for name in got.files]
    x = read_pb(os.path.join(data, "input_0.pb")).astype(np.float64)
    if kind == "bernoulli":
        y = outputs[0].astype(np.float64)
        if not np.all((y == 0) | (y == 1)):
            return "Bernoulli draws other than 0 and 1"
        n = max(1, x.size)
        if n > 1 and np.all(y == y.flat[0]) and np.all((x > 0) & (x < 1)):
            return "every draw is %g" % y.flat[0]
        sigma = np.sqrt(np.sum(x * (1 - x))) / n
        if abs(y.mean() - x.mean()) > 3 * sigma + 1e-12:
            return "mean of the draws %.3f, of the probabilities %.3f" % (
                y.mean(), x.mean())
        return None
    ratio = 0.5
    if os.path.exists(os.path.join(data, "input_1.pb")):
        ratio = float(read_pb(os.path.join(data, "input_1.pb")))
    y = outputs[0].astype(np.float64)
    scaled = x / (1 - ratio) if ratio < 1 else np.zeros_like(x)
    kept = np.isclose(y, scaled, rtol=1e-5, atol=1e-6) & (y != 0)
    dropped = y == 0
    if not np.all(kept | dropped):
        return "outputs neither 0 nor x / (1 - ratio)"
    if len(outputs) > 1:
        mask = outputs[1].astype(bool)
        if not np.all(mask[kept]) or np.any(mask[dropped & (scaled != 0)]):
            return "the mask does not match the outputs"
    share = np.count_nonzero(~dropped | (scaled == 0)) / max(1, y.size)
    sigma = np.sqrt(ratio * (1 - ratio) / max(1, y.size))
    if abs(share - (1 - ratio)) > 3 * sigma + 1e-12:
        return "kept %.3f of the elements, expected %.3f" % (share, 1 - ratio)
    return None


def run_one(tract, translate, test_dir, approx, timeout, optimize=False,
            threads=1, constants=True, gpu=None):
    model = os.path.join(test_dir, "model.onnx")
    if constants:
        status, message, facts = import_node_tests.import_one(translate, model)
    else:
        status, message = import_node_tests.run_import(translate, model, [])
        facts = []
    result = run_imported(tract, model, test_dir, status, message, facts,
                          approx, timeout, optimize, threads, gpu)
    return result + (bool(facts),)


def run_imported(tract, model, test_dir, status, message, facts, approx,
                 timeout, optimize, threads, gpu=None):
    if status == "crash":
        return "crash", "import: " + message
    if status != "ok":
        return "unsupported", message
    sets = sorted(d for d in os.listdir(test_dir)
                  if d.startswith("test_data_set_"))
    if not sets:
        return "fail", "no test_data_set"
    command = [tract, "--threads", str(threads)] + (["-O"] if optimize else [])
    for fact in facts:
        command += ["-i", fact]
    if not gpu:
        return run_data_sets(command, model, test_dir, sets, approx, timeout)
    # On the GPU, the kernels' code must also pass its checker: SPIR-V
    # spirv-val (and each kernel convert to Metal's MSL, or tract fails),
    # PTX ptxas where the CUDA toolkit is.
    with tempfile.TemporaryDirectory() as code, \
            tempfile.TemporaryDirectory() as msl:
        command += ["--gpu", gpu] + (
            ["--ptx-dir", code] if gpu == "cuda"
            else ["--spirv-dir", code, "--msl-dir", msl])
        status, message = run_data_sets(command, model, test_dir, sets,
                                        approx, timeout)
        problem = status == "pass" and invalid_kernels(code)
        if problem:
            return "fail", problem
        return status, message


def ptxas():
    """NVIDIA's PTX assembler, or None without the CUDA toolkit."""
    import shutil
    found = shutil.which("ptxas")
    for candidate in [os.path.join(os.environ.get("CUDA_PATH", ""), "bin",
                                   "ptxas"), "/usr/local/cuda/bin/ptxas"]:
        found = found or (candidate if os.path.isfile(candidate) else None)
    return found


def ptx_target(path):
    """The chip a PTX module is for (its `.target`): `run` makes PTX for the
    device's chip, `compile` for sm_80 unless told."""
    with open(path, errors="replace") as f:
        for line in f:
            words = line.split()
            if len(words) >= 2 and words[0] == ".target":
                return words[1].rstrip(",")
    return "sm_80"


def invalid_kernels(folder):
    """The first complaint about a kernel module in `folder` (as `tract
    --spirv-dir` or `--ptx-dir` writes them): spirv-val's for SPIR-V,
    ptxas's (for the PTX's own target, where ptxas is) for PTX; None when
    all are valid."""
    assembler = ptxas()
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".ptx"):
            if not assembler:
                continue
            checker = [assembler, "--gpu-name", ptx_target(path), path,
                       "-o", os.devnull]
        else:
            checker = ["spirv-val", "--target-env", "vulkan1.1", path]
        proc = subprocess.run(checker, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            return "%s: %s: %s" % (os.path.basename(checker[0]), name,
                                   first_error(proc.stdout.decode(
                                       errors="replace")))
    return None


def run_data_sets(command, model, test_dir, sets, approx, timeout):
    random_checked = False
    for data_set in sets:
        status, message = run_data_set(command, model, model,
                                       os.path.join(test_dir, data_set),
                                       approx, timeout)
        if status != "pass":
            return status, message
        random_checked |= bool(message)
    if random_checked:
        return "pass", RANDOM_CHECKED
    return "pass", ""


RANDOM_CHECKED = ("random draws, checked by their statistics (the test's own "
                  "draw cannot be reproduced)")


def run_data_set(command, runnable, model, data, approx, timeout):
    """Runs `runnable` (the ONNX `model` or what it became) with `command`
    on the data set `data`, checking the outputs at `approx`; draws of
    random ops that differ from the test's are checked by their statistics
    instead. Returns (status, message): pass with an empty message, or with
    RANDOM_CHECKED; fail, unsupported or crash with the reason."""
    try:
        proc = subprocess.run(
            command + [runnable, "run", "-q", "--input-from-bundle", data,
                       "--assert-output-bundle", data, "--approx", approx],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out after %d s" % timeout
    if proc.returncode < 0:
        return "crash", "killed by signal %d" % -proc.returncode
    if proc.returncode == 0:
        return "pass", ""
    err = proc.stderr.decode(errors="replace")
    reason = first_error(err)
    if "failed to legalize operation" in err:
        return "unsupported", "lowering: " + reason
    kind = "mismatch at" in err and random_kind(model)
    if not kind:
        return "fail", reason
    with tempfile.TemporaryDirectory() as work:
        saved = os.path.join(work, "outputs.npz")
        proc = subprocess.run(
            command + [runnable, "run", "-q", "--input-from-bundle", data,
                       "--save-outputs-npz", saved],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=timeout)
        if proc.returncode != 0:
            return "fail", first_error(proc.stderr.decode(errors="replace"))
        problem = random_statistics(kind, data, saved)
    if problem:
        return "fail", "random draws: " + problem
    return "pass", RANDOM_CHECKED


def write_report_heading(out, title, script, settings, about):
    """The top of a markdown report of a node-test runner (this one and
    nnef_cycle.py): its title, which script wrote it with which `settings`
    (the approximation and the like), and `about`, what the runs were."""
    out.write("# %s\n\n" % title)
    out.write("Generated by `test/onnx/%s` (%s); do not edit. %s\n\n"
              % (script, settings, about))


def report_cell(status, message):
    """A test's result as a cell of a report's table."""
    return status if not message else "%s: %s" % (
        status, message.replace("|", "\\|"))


def add_run_arguments(parser):
    """The options nnef_cycle.py shares with this runner: the tools, the
    approximation, the report and how the tests run."""
    parser.add_argument("--tract", required=True)
    parser.add_argument("--translate", required=True)
    parser.add_argument("--approx", default="approximate")
    parser.add_argument("--report", help="markdown file to write")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--filter", default="", help="only tests containing this")
    # A sample (the sanitizer build's) is checked for crashes only: --min
    # does not apply.
    sample.add_arguments(parser)


# The columns of the report, as the runs and the shards' results name them.
CONSTANTS, BARE, GPU = "constants", "without constants", "gpu"


def collect_tests(args):
    """(group, name) of every test the run covers, in report order."""
    tests = []
    for group in args.groups.split(","):
        root = os.path.join(args.data, group)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            if args.filter in name and os.path.isfile(
                    os.path.join(root, name, "model.onnx")):
                tests.append((group, name))
    return sample.Sample.from_args(args).pick(tests)


def run_tests(args, tests, gpu_tests):
    """{column: {(group, name): (status, message)}} for `tests`, and the
    GPU column for `gpu_tests`."""
    start = time.time()
    results = {CONSTANTS: {}}

    def run_all(column, jobs):
        gpu = args.gpu_column if column == GPU else args.gpu
        results.setdefault(column, {})
        needed_constants = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, args.tract, args.translate,
                                   os.path.join(args.data, g, t), args.approx,
                                   args.timeout, args.optimize, args.threads,
                                   column != BARE, gpu): (g, t)
                       for g, t in jobs}
            for done, future in enumerate(
                    concurrent.futures.as_completed(futures), 1):
                status, message, used_facts = future.result()
                results[column][futures[future]] = (status, message)
                if used_facts:
                    needed_constants.append(futures[future])
                if done % 50 == 0 or done == len(jobs):
                    print("conformance%s: %d/%d (%.0f s)" % (
                        column_suffix(args, column), done,
                        len(jobs), time.time() - start), file=sys.stderr)
        return needed_constants

    needed_constants = run_all(CONSTANTS, tests)
    if args.without_constants:
        # Only the tests that needed constants can differ.
        results[BARE] = dict(results[CONSTANTS])
        run_all(BARE, sorted(needed_constants))
    if args.gpu_column:
        run_all(GPU, gpu_tests)
    return results


def column_suffix(args, column):
    if column == GPU:
        return " on " + args.gpu_column
    return " without constants" if column == BARE else ""


def write_results(path, tests, results):
    """A shard's results, which --merge reads."""
    with open(path, "w") as out:
        json.dump({"tests": tests,
                   "results": {column: [[g, t, status, message] for (g, t), (
                       status, message) in cells.items()]
                               for column, cells in results.items()}}, out)


def merge_results(paths):
    tests, results = [], {}
    for path in paths:
        try:
            with open(path) as f:
                shard = json.load(f)
        except (OSError, ValueError) as error:
            raise SystemExit("conformance: no results from a shard: %s" % error)
        tests += [tuple(test) for test in shard["tests"]]
        for column, cells in shard["results"].items():
            merged = results.setdefault(column, {})
            for group, name, status, message in cells:
                merged[(group, name)] = (status, message)
    return sorted(tests), results


def committed_results(report, column):
    """{(group, name): status} of `column` ("result", "without constants",
    "vulkan") in a report of this runner (docs/onnx-conformance.md), whose
    "same" cells repeat the result's."""
    found = {}
    with open(report) as f:
        header = None
        for line in f:
            if not line.startswith("| "):
                continue
            cells = [cell.strip() for cell in line.strip().strip("|")
                     .split(" | ")]
            if header is None:
                header = cells
                continue
            row = dict(zip(header, cells))
            cell = row.get(column, "")
            if cell == "same":
                cell = row["result"]
            found[(row["group"], row["test"])] = cell.partition(":")[0]
    return found


def main():
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--groups", default=",".join(GROUPS))
    parser.add_argument("--min", type=int, default=0,
                        help="fail unless at least this many node tests pass")
    parser.add_argument("--threads", type=int, default=1,
                        help="tract --threads for every run")
    parser.add_argument("--gpu", help="tract --gpu for every run (vulkan)")
    parser.add_argument("--gpu-column", metavar="API",
                        help="also run each test with tract --gpu API "
                             "(vulkan), in a column of its own")
    parser.add_argument("--gpu-sample", type=int, default=1, metavar="N",
                        help="the GPU column's sample: every Nth test, from "
                             "an offset the commit chooses (every test under "
                             "%s=1)" % sample.FULL_ENV)
    parser.add_argument("--min-gpu", type=int, default=0,
                        help="fail unless at least this many node tests pass "
                             "on the GPU column's API (when it runs every "
                             "test)")
    parser.add_argument("--expect", metavar="REPORT",
                        help="a committed report: every test of a sampled "
                             "GPU column that passes there must pass")
    parser.add_argument("--optimize", action="store_true",
                        help="run the decluttered models (tract -O)")
    parser.add_argument("--without-constants", action="store_true",
                        help="also run each test with no input made a "
                             "constant, in a second column")
    parser.add_argument("--min-without-constants", type=int, default=0,
                        help="fail unless at least this many node tests pass "
                             "without constants")
    parser.add_argument("--onnxruntime",
                        help="onnxruntime's results on the node tests (as "
                             "scripts/reference-outputs/"
                             "node_tests_onnxruntime.py writes them), shown "
                             "in a column of the report")
    sample.add_shard_argument(parser)
    parser.add_argument("--results", metavar="JSON",
                        help="write this shard's results for --merge, "
                             "instead of the report and the floors")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="report on the shards' results instead of "
                             "running tests")
    args = parser.parse_args()

    tests = collect_tests(args)
    gpu_sample = sample.Sample(args.gpu_sample, args.sample_offset)
    if args.merge:
        run, results = merge_results(args.merge)
        if run != sorted(tests):
            sys.exit("conformance: the shards ran %d tests, not the %d of "
                     "the run" % (len(run), len(tests)))
    else:
        if args.results and os.path.exists(args.results):
            os.remove(args.results)  # never merged stale
        mine = sample.shard(tests, args.shard)
        in_shard = set(mine)
        results = run_tests(args, mine, [
            test for index, test in enumerate(tests)
            if gpu_sample.holds(index) and test in in_shard])
        if args.results:
            write_results(args.results, mine, results)
            sys.exit(1 if any(status == "crash" for cells in results.values()
                              for status, _ in cells.values()) else 0)
    sys.exit(report(args, tests, results, gpu_sample))


def report(args, tests, results, gpu_sample):
    """Prints the summary, writes the report, and returns the exit status:
    1 on a crash, below a floor or a sampled GPU test that regressed."""
    if not sample.Sample.from_args(args).full:
        args.min = args.min_without_constants = args.min_gpu = 0
    if not gpu_sample.full:
        args.min_gpu = 0
    columns = [CONSTANTS] + ([BARE] if args.without_constants else []) + (
        [GPU] if args.gpu_column else [])
    onnxruntime = {}
    onnxruntime_title = ""
    if args.onnxruntime:
        with open(args.onnxruntime) as f:
            onnxruntime_title = f.readline().lstrip("# ").strip()
            for line in f:
                name, _, result = line.rstrip("\n").partition("\t")
                onnxruntime[name] = result

    kinds = ["pass", "fail", "unsupported", "crash"]

    def summary(cells, suffix):
        totals = {}
        for (group, _), (status, _) in cells.items():
            totals.setdefault(group, dict.fromkeys(kinds, 0))[status] += 1
        lines = []
        for group in args.groups.split(","):
            if group in totals:
                t = totals[group]
                count = sum(t.values())
                lines.append("%s%s: %d of %d pass (%.1f%%); %d fail, "
                             "%d unsupported, %d crash" % (
                                 group, suffix, t["pass"], count,
                                 100.0 * t["pass"] / max(1, count), t["fail"],
                                 t["unsupported"], t["crash"]))
        return totals, lines

    totals, lines = {}, []
    for column in columns:
        suffix = column_suffix(args, column)
        if column == GPU and not gpu_sample.full:
            suffix += " (%s)" % gpu_sample.describe()
        totals[column], column_lines = summary(results[column], suffix)
        lines += column_lines
    for line in lines:
        print(line)
    regressed = []
    if args.gpu_column and not gpu_sample.full and args.expect:
        expected = committed_results(args.expect, args.gpu_column)
        regressed = sorted(
            test for test, (status, _) in results[GPU].items()
            if expected.get(test) == "pass" and status != "pass")
        print("%s sample: %d tests, %d of them pass in %s, %d no longer do" % (
            args.gpu_column, len(results[GPU]),
            sum(expected.get(test) == "pass" for test in results[GPU]),
            os.path.basename(args.expect), len(regressed)))
        for group, name in regressed:
            print("regressed on %s: %s/%s: %s" % (
                args.gpu_column, group, name, results[GPU][(group, name)][1]),
                file=sys.stderr)
    if args.report:
        with open(args.report, "w") as out:
            write_report_heading(
                out, "ONNX backend tests through `tract run`",
                "run_node_tests.py", "approximation `%s`%s" % (
                    args.approx, ", decluttered with `-O`"
                    if args.optimize else ""),
                "Each test's model is imported as in "
                "[onnx-import.md](onnx-import.md), compiled, and run on its "
                "data sets with `--input-from-bundle` and "
                "`--assert-output-bundle`.")
            for line in lines:
                out.write("* %s\n" % line)
            if onnxruntime_title:
                out.write("* %s, run the same way (every input an input, the "
                          "same tolerance) by `scripts/reference-outputs/"
                          "node_tests_onnxruntime.py`\n" % onnxruntime_title)
            headings = ["group", "test", "result"]
            if args.without_constants:
                out.write("\n*Without constants*: every input stays an "
                          "input, as onnxruntime runs the tests (no retry "
                          "with parameter inputs made constants).\n")
                headings.append("without constants")
            if args.gpu_column:
                out.write("\n*%s*: each test again with `tract --gpu %s`: "
                          "its tensor ops as kernels on the device, each "
                          "kernel module checked (SPIR-V by `spirv-val`, "
                          "PTX by `ptxas`).\n" % (
                              args.gpu_column, args.gpu_column))
                headings.append(args.gpu_column)
            if onnxruntime:
                headings.append("onnxruntime")
            out.write("\n| %s |\n|%s\n" % (" | ".join(headings),
                                              "---|" * len(headings)))
            for group, name in tests:
                result = results[CONSTANTS][(group, name)]
                row = [report_cell(*result)]
                for column in columns[1:]:
                    cell = results[column].get((group, name))
                    row.append("not in the sample" if cell is None else
                               "same" if cell == result else
                               report_cell(*cell))
                if onnxruntime:
                    known = onnxruntime.get(name) if group == "node" else None
                    # Its messages name the model files: under the data
                    # folder, which the report does not name.
                    row.append("" if known is None
                               else known.replace(args.data + "/", "")
                               .replace("|", "\\|"))
                out.write("| %s | %s | %s |\n" % (group, name,
                                                  " | ".join(row)))
    crashes = [((column, k), v) for column in columns
               for k, v in results[column].items() if v[0] == "crash"]
    for (column, (group, name)), (_, message) in crashes:
        print("crash: %s/%s%s: %s" % (group, name, column_suffix(args, column),
                                      message), file=sys.stderr)

    def node_pass(column):
        return totals.get(column, {}).get("node", {}).get("pass", 0)
    if crashes or regressed or node_pass(CONSTANTS) < args.min or (
            args.without_constants and
            node_pass(BARE) < args.min_without_constants
    ) or (args.gpu_column and node_pass(GPU) < args.min_gpu):
        return 1
    return 0


if __name__ == "__main__":
    main()

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
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_node_tests  # noqa: E402

GROUPS = ["node", "simple", "pytorch-converted", "pytorch-operator"]


def first_error(stderr):
    lines = [line for line in stderr.splitlines() if "error:" in line]
    if not lines:
        lines = stderr.splitlines() or ["no message"]
    line = lines[0]
    return line.split("error:", 1)[1].strip() if "error:" in line else line


def run_one(tract, translate, test_dir, approx, timeout, optimize=False,
            threads=1, constants=True):
    model = os.path.join(test_dir, "model.onnx")
    if constants:
        status, message, facts = import_node_tests.import_one(translate, model)
    else:
        status, message = import_node_tests.run_import(translate, model, [])
        facts = []
    result = run_imported(tract, model, test_dir, status, message, facts,
                          approx, timeout, optimize, threads)
    return result + (bool(facts),)


def run_imported(tract, model, test_dir, status, message, facts, approx,
                 timeout, optimize, threads):
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
    for data_set in sets:
        data = os.path.join(test_dir, data_set)
        try:
            proc = subprocess.run(
                command + [model, "run", "-q", "--input-from-bundle", data,
                           "--assert-output-bundle", data, "--approx", approx],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                timeout=timeout)
        except subprocess.TimeoutExpired:
            return "crash", "timed out after %d s" % timeout
        if proc.returncode < 0:
            return "crash", "killed by signal %d" % -proc.returncode
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            reason = first_error(err)
            if "failed to legalize operation" in err:
                return "unsupported", "lowering: " + reason
            return "fail", reason
    return "pass", ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--translate", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--groups", default=",".join(GROUPS))
    parser.add_argument("--approx", default="approximate")
    parser.add_argument("--report", help="markdown file to write")
    parser.add_argument("--min", type=int, default=0,
                        help="fail unless at least this many node tests pass")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--filter", default="", help="only tests containing this")
    parser.add_argument("--threads", type=int, default=1,
                        help="tract --threads for every run")
    parser.add_argument("--optimize", action="store_true",
                        help="run the decluttered models (tract -O)")
    parser.add_argument("--without-constants", action="store_true",
                        help="also run each test with no input made a "
                             "constant, in a second column")
    parser.add_argument("--min-without-constants", type=int, default=0,
                        help="fail unless at least this many node tests pass "
                             "without constants")
    args = parser.parse_args()

    start = time.time()
    tests = []
    for group in args.groups.split(","):
        root = os.path.join(args.data, group)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            if args.filter in name and os.path.isfile(
                    os.path.join(root, name, "model.onnx")):
                tests.append((group, name))
    modes = [True] + ([False] if args.without_constants else [])
    results = {mode: {} for mode in modes}

    def run_all(mode, jobs):
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, args.tract, args.translate,
                                   os.path.join(args.data, g, t), args.approx,
                                   args.timeout, args.optimize,
                                   args.threads, mode): (g, t)
                       for g, t in jobs}
            for done, future in enumerate(
                    concurrent.futures.as_completed(futures), 1):
                status, message, used_facts = future.result()
                results[mode][futures[future]] = (status, message)
                if used_facts:
                    needed_constants.append(futures[future])
                if done % 50 == 0 or done == len(jobs):
                    print("conformance%s: %d/%d (%.0f s)" % (
                        "" if mode else " without constants", done,
                        len(jobs), time.time() - start), file=sys.stderr)

    needed_constants = []
    run_all(True, tests)
    if args.without_constants:
        # Only the tests that needed constants can differ.
        results[False] = dict(results[True])
        run_all(False, sorted(needed_constants))

    kinds = ["pass", "fail", "unsupported", "crash"]

    def summary(mode_results, suffix):
        totals = {}
        for (group, _), (status, _) in mode_results.items():
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

    totals, lines = summary(results[True], "")
    bare_totals, bare_lines = ({}, [])
    if args.without_constants:
        bare_totals, bare_lines = summary(results[False],
                                          " without constants")
    lines += bare_lines
    for line in lines:
        print(line)
    if args.report:
        with open(args.report, "w") as out:
            out.write("# ONNX backend tests through `tract run`\n\n")
            out.write("Generated by `test/onnx/run_node_tests.py` (approximation "
                      "`%s`%s); do not edit. Each test's model is imported as in "
                      "[onnx-import.md](onnx-import.md), compiled, and run on "
                      "its data sets with `--input-from-bundle` and "
                      "`--assert-output-bundle`.\n\n" % (
                          args.approx, ", decluttered with `-O`"
                          if args.optimize else ""))
            for line in lines:
                out.write("* %s\n" % line)
            if args.without_constants:
                out.write("\n*Without constants*: every input stays an "
                          "input, as onnxruntime runs the tests (no retry "
                          "with parameter inputs made constants).\n")
                out.write("\n| group | test | result | without constants |"
                          "\n|---|---|---|---|\n")
            else:
                out.write("\n| group | test | result |\n|---|---|---|\n")

            def cell(status, message):
                return status if not message else "%s: %s" % (
                    status, message.replace("|", "\\|"))
            for group, name in tests:
                row = [cell(*results[True][(group, name)])]
                if args.without_constants:
                    bare = results[False][(group, name)]
                    row.append("same" if bare == results[True][(group, name)]
                               else cell(*bare))
                out.write("| %s | %s | %s |\n" % (group, name,
                                                  " | ".join(row)))
    crashes = [((mode, k), v) for mode in modes
               for k, v in results[mode].items() if v[0] == "crash"]
    for (mode, (group, name)), (_, message) in crashes:
        print("crash: %s/%s%s: %s" % (group, name,
                                      "" if mode else " (without constants)",
                                      message), file=sys.stderr)
    node_pass = totals.get("node", {}).get("pass", 0)
    bare_pass = bare_totals.get("node", {}).get("pass", 0)
    if crashes or node_pass < args.min or (
            args.without_constants and bare_pass < args.min_without_constants):
        sys.exit(1)


if __name__ == "__main__":
    main()

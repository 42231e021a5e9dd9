#!/usr/bin/env python3
"""The NNEF cycle over the ONNX node tests: ONNX -> tract -> NNEF -> tract -> run.

Each node test the direct path passes (`tract model.onnx run`, as
run_node_tests.py runs it, or as listed passing in its --report) is written
as NNEF with `tract [-i FACT] model.onnx dump --nnef T.nnef.tgz`, and the
archive is run on every test_data_set_N with `--input-from-bundle` and
`--assert-output-bundle`. Prints how many of the directly passing tests
survive the cycle and why the others fail (grouped by first error), writes a
markdown report, and fails when fewer than --min survive or anything crashes.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_node_tests  # noqa: E402
import run_node_tests  # noqa: E402
import sample  # noqa: E402  (test/, on the path from run_node_tests)


def passing_from_report(path):
    """Node tests marked pass in an onnx-conformance report."""
    return {name for (group, name), status in
            run_node_tests.committed_results(path, "result").items()
            if group == "node" and status == "pass"}


def run(command, timeout):
    try:
        proc = subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out after %d s" % timeout
    if proc.returncode < 0:
        return "crash", "killed by signal %d" % -proc.returncode
    if proc.returncode != 0:
        return "fail", run_node_tests.first_error(
            proc.stderr.decode(errors="replace"))
    return "pass", ""


def cycle_one(tract, translate, test_dir, workdir, approx, timeout, direct,
              threads=1):
    """Returns (status, message): status is pass, export, run, crash, or
    'direct' when the direct path does not pass."""
    model = os.path.join(test_dir, "model.onnx")
    if direct:
        status, message, _ = run_node_tests.run_one(tract, translate, test_dir,
                                                 approx, timeout,
                                                 threads=threads)
        if status != "pass":
            return "direct", message
    status, message, facts = import_node_tests.import_one(translate, model)
    if status != "ok":
        return "direct", message
    archive = os.path.join(workdir, os.path.basename(test_dir) + ".nnef.tgz")
    command = [tract]
    for fact in facts:
        command += ["-i", fact]
    status, message = run(command + [model, "dump", "--nnef", archive],
                          timeout)
    if status != "pass":
        return ("crash" if status == "crash" else "export"), message
    for data_set in sorted(d for d in os.listdir(test_dir)
                           if d.startswith("test_data_set_")):
        data = os.path.join(test_dir, data_set)
        status, message = run_node_tests.run_data_set(
            [tract, "--threads", str(threads)], archive, model, data, approx,
            timeout)
        if status != "pass":
            return ("crash" if status == "crash" else "run"), message
    return "pass", ""


def reason_key(message):
    """A failure message without its file and tensor details, for grouping."""
    message = re.sub(r"loc\([^)]*\)|'[^']*\.(nnef|tgz|onnx)'", "", message)
    message = re.sub(r"\(node '[^']*'\)", "", message)
    return re.sub(r"\s+", " ", message).strip()[:140]


def main():
    parser = argparse.ArgumentParser()
    run_node_tests.add_run_arguments(parser)
    parser.add_argument("--data",
                        default="/usr/share/libonnx-testdata/data/node")
    parser.add_argument("--passing-from",
                        help="an onnx-conformance report: take its passing "
                             "node tests instead of running the direct path")
    parser.add_argument("--min", type=int, default=0,
                        help="fail unless at least this many tests survive")
    parser.add_argument("--threads", type=int, default=1,
                        help="tract --threads for the runs")
    args = parser.parse_args()

    tests = sorted(name for name in os.listdir(args.data)
                   if args.filter in name and os.path.isfile(
                       os.path.join(args.data, name, "model.onnx")))
    chosen = sample.Sample.from_args(args)
    tests = chosen.pick(tests)
    if not chosen.full:
        args.min = 0
    direct = True
    if args.passing_from and os.path.isfile(args.passing_from):
        passing = passing_from_report(args.passing_from)
        tests = [t for t in tests if t in passing]
        direct = False
    start = time.time()
    results = {}
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(cycle_one, args.tract, args.translate,
                               os.path.join(args.data, t), workdir,
                               args.approx, args.timeout, direct,
                               args.threads): t
                   for t in tests}
        for done, future in enumerate(
                concurrent.futures.as_completed(futures), 1):
            results[futures[future]] = future.result()
            if done % 100 == 0 or done == len(tests):
                print("nnef cycle: %d/%d (%.0f s)" % (
                    done, len(tests), time.time() - start), file=sys.stderr)

    counts = collections.Counter(status for status, _ in results.values())
    direct_pass = len(tests) - counts["direct"]
    summary = ("nnef cycle: %d of %d directly passing node tests survive; "
               "%d fail to export, %d fail to run, %d crash" % (
                   counts["pass"], direct_pass, counts["export"],
                   counts["run"], counts["crash"]))
    print(summary)
    reasons = collections.Counter(
        (status, reason_key(message)) for status, message in results.values()
        if status in ("export", "run", "crash"))
    for (status, reason), n in reasons.most_common():
        print("  %3d %s: %s" % (n, status, reason))
    if args.report:
        with open(args.report, "w") as out:
            run_node_tests.write_report_heading(
                out, "NNEF cycle over the ONNX node tests", "nnef_cycle.py",
                "approximation `%s`" % args.approx,
                "Each node test that passes directly is written with "
                "`tract … dump --nnef` and the archive run on its data sets.")
            out.write("* %s\n\n" % summary)
            out.write("| test | result |\n|---|---|\n")
            for name in tests:
                if results[name][0] != "direct":
                    out.write("| %s | %s |\n" % (
                        name, run_node_tests.report_cell(*results[name])))
    if counts["crash"] or counts["pass"] < args.min:
        sys.exit(1)


if __name__ == "__main__":
    main()

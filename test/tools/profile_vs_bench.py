#!/usr/bin/env python3
"""Checks `tract dump --profile` on a real model: every op gets a time, and
their sum is within a tolerance of bench's figure.

    profile_vs_bench.py --tract TRACT [--tolerance PERCENT] MODEL [ARG...]

ARGs go before the model on tract's command line (`-i input:1,576,f32`).
The comparison is with the uninstrumented model that `dump --profile` times
in turns with the instrumented one, compiled and run as `tract bench` does:
both see the same machine load. `tract bench` also runs on its own, and its
figure is printed for information. On a shared machine one measurement may
be off, so up to three are made; one within the tolerance passes.
"""
import argparse
import json
import re
import subprocess
import sys


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}\n{done.stderr.strip()}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--tolerance", type=float, default=10.0)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("model")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    prefix = [options.tract] + options.args + [options.model]

    bench = run(prefix + ["bench"])
    match = re.search(r"Bench ran (\d+) times, ([0-9.]+) ms/i", bench)
    if not match:
        sys.exit(f"FAIL: unexpected bench output: {bench!r}")
    print(f"bench: {match.group(2)} ms/i over {match.group(1)} runs")

    for attempt in range(1, options.attempts + 1):
        listing = json.loads(run(prefix + ["dump", "--profile", "--json"]))
        ops = [n for n in listing["nodes"] if n["op"] != "Source"]
        untimed = [f"{n['id']} {n['op']} {n['name']}" for n in ops
                   if "profile" not in n]
        if untimed:
            sys.exit(f"FAIL: ops without a time: {untimed}")
        profile = listing["profile"]
        total = sum(n["profile"]["ms_per_iteration"] for n in ops)
        ratio = 100.0 * total / profile["bench_ms_per_iteration"]
        print(f"attempt {attempt}: {len(ops)} ops, sum {total:.4f} ms/i, "
              f"bench in turns {profile['bench_ms_per_iteration']:.4f} ms/i "
              f"({ratio:.1f}%), alone {match.group(2)} ms/i "
              f"({100.0 * total / float(match.group(2)):.1f}%); "
              f"instrumented {profile['instrumented_ms_per_iteration']:.4f} ms/i; {profile['runs']} runs, "
              f"{profile['instrumentation_ns_per_op']:.0f} ns per op removed")
        if abs(ratio - 100.0) <= options.tolerance:
            print("ok")
            return
    sys.exit(f"FAIL: the sum of the op times is not within "
             f"{options.tolerance}% of bench's figure")


if __name__ == "__main__":
    main()

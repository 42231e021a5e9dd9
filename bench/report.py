#!/usr/bin/env python3
"""Writes docs/performance.md from the measurements of scripts/bench.sh.

Usage: report.py RESULTS.tsv OUT.md

RESULTS.tsv has one measurement a line, MODEL <tab> KEY <tab> VALUE, with
MODEL '-' for the run's facts (date, cpu, fma_peak, command...). Keys
repeated over rounds (tract_ms, ort_ms) keep every round.
"""
import collections
import math
import os
import sys

# Below this, a model is not matmul/conv-heavy enough for GFLOP/s to mean
# much (Silero's few MFLOP are dwarfed by per-op and per-step overhead).
GFLOPS_MIN_FLOPS = 10e6

# Issue 16's targets ("Checked by").
TARGET_GEOMEAN = 1.0
TARGET_MAX_RATIO = 2.0
TARGET_MATMUL_PEAK = 0.85
TARGET_RESNET_MB = 250
TARGET_MOBILENET_COMPILE_S = 10
# Issue 17's: on two threads.
TARGET_GEOMEAN_2T = 1.0
TARGET_SPEEDUP_2T = 1.7
TARGET_SPEEDUP_MODELS = ("resnet18", "mobilenet_v2", "ppocr_det_640")
TARGET_MATMUL_PEAK_2T = 0.80


def load(path):
    values = collections.defaultdict(lambda: collections.defaultdict(list))
    order = []
    with open(path) as f:
        for line in f:
            model, key, value = line.rstrip("\n").split("\t", 2)
            if model != "-" and model not in order:
                order.append(model)
            values[model][key].append(value)
    return values, order


def ms(value):
    """Milliseconds to about 3 significant digits."""
    for limit, digits in ((1, 3), (10, 2), (100, 1)):
        if value < limit:
            return "%.*f" % (digits, value)
    return "%.0f" % value


def best_and_spread(rounds):
    """The best round, and the rounds' spread as (max - min) / min."""
    figures = [float(x) for x in rounds if x]
    if not figures:
        return None, None
    best = min(figures)
    return best, (max(figures) - best) / best if len(figures) > 1 else None


def timing_cell(best, spread):
    if best is None:
        return "—"
    return ms(best) + (" ±%.0f%%" % (100 * spread) if spread is not None
                       else "")


def duration(seconds):
    return ("%d s" % seconds if seconds < 120
            else "%d min" % round(seconds / 60))


def error_cell(engine, message):
    message = message.replace("|", "\\|")
    if len(message) > 140:
        message = message[:137] + "..."
    return "**%s fails**: %s" % (engine, message)


def two_threads(values, models, peak, status):
    """The section on two threads: each engine's figure, its speed-up over
    its own one-thread figure, and issue 17's targets."""
    rows, ratios, speedups, figures = [], {}, {}, {}
    for model in models:
        v = values[model]
        if not v.get("tract_ms_2t") and not v.get("ort_ms_2t"):
            continue
        failed = {e: bool(v.get(e + "_error")) for e in ("tract", "ort")}
        cells = [model]
        best = {}
        for engine in ("tract", "ort"):
            one, _ = best_and_spread(v.get(engine + "_ms", []))
            two, spread = best_and_spread(v.get(engine + "_ms_2t", []))
            if failed[engine]:
                one = two = None
            best[engine] = (one, two)
            cells += [timing_cell(two, spread),
                      "%.2f×" % (one / two) if one and two else "—"]
        tract1, tract2 = best["tract"]
        ort2 = best["ort"][1]
        if tract1 and tract2:
            speedups[model] = tract1 / tract2
        if tract2 and ort2:
            ratios[model] = tract2 / ort2
        figures[model] = tract2
        cells.append("%.2f" % ratios[model] if model in ratios else "—")
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    lines = [
        "## Two threads",
        "",
        "The same models with `tract --threads 2` and onnxruntime's "
        "`intraOpNumThreads: 2`, in the same rounds; the speed-up is each "
        "engine's one-thread figure over its two-thread one.",
        "",
        "| model | tract ms | tract speed-up | onnxruntime ms | "
        "onnxruntime speed-up | tract / ort |",
        "|---|--:|--:|--:|--:|--:|",
    ] + rows + [""]
    checks = []
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios.values()) /
                           len(ratios))
        lines += ["**Geometric mean of tract / onnxruntime on two threads: "
                  "%.2f** over %d models." % (geomean, len(ratios)), ""]
        checks.append(status(geomean <= TARGET_GEOMEAN_2T, "%.2f" % geomean,
                             "geometric mean on two threads ≤ %.1f" %
                             TARGET_GEOMEAN_2T))
    for model in TARGET_SPEEDUP_MODELS:
        if model in speedups:
            checks.append(status(speedups[model] >= TARGET_SPEEDUP_2T,
                                 "%.2f×" % speedups[model],
                                 "%s two-thread speed-up ≥ %.1f×" %
                                 (model, TARGET_SPEEDUP_2T)))
    matmul = values.get("matmul512")
    flops = matmul and matmul.get("flops") and float(matmul["flops"][0])
    if flops and figures.get("matmul512"):
        share = flops / figures["matmul512"] * 1e-6 / (2 * peak)
        lines += ["**512³ MatMul on two threads**: %.1f GFLOP/s, %.1f%% of "
                  "the two-core peak." % (flops / figures["matmul512"] * 1e-6,
                                          100 * share), ""]
        checks.append(status(share >= TARGET_MATMUL_PEAK_2T,
                             "%.1f%%" % (100 * share),
                             "512³ MatMul ≥ %.0f%% of the two-core peak" %
                             (100 * TARGET_MATMUL_PEAK_2T)))
    if checks:
        lines += ["## Issue 17's targets", "",
                  "| target | measured | |", "|---|---|---|"] + checks + [""]
    return lines


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    values, models = load(sys.argv[1])
    run = {key: vals[-1] for key, vals in values["-"].items()}
    peak = float(run["fma_peak"])
    rows, ratios = [], {}
    figures = {}
    for model in models:
        v = values[model]
        first = lambda key: v[key][0] if v.get(key) else None
        tract, tract_spread = best_and_spread(v.get("tract_ms", []))
        ort, ort_spread = best_and_spread(v.get("ort_ms", []))
        flops = float(first("flops")) if first("flops") else None
        tract_error, ort_error = first("tract_error"), first("ort_error")
        # A failure in a later round keeps the earlier rounds' figures out:
        # a model is measured fully or reported as failing.
        if tract_error:
            tract = None
        if ort_error:
            ort = None
        ratio = tract / ort if tract and ort else None
        if ratio:
            ratios[model] = ratio
        gflops = lambda t: ("%.1f" % (flops / t * 1e-6)
                            if t and flops and flops >= GFLOPS_MIN_FLOPS
                            else "—")
        rss, compile_s = first("rss_kb"), first("compile_s")
        figures[model] = dict(tract=tract, ort=ort, flops=flops, rss=rss,
                              compile=compile_s)
        cells = [
            model,
            first("input") or "—",
            error_cell("tract", tract_error) if tract_error
            else timing_cell(tract, tract_spread),
            error_cell("onnxruntime", ort_error) if ort_error
            else timing_cell(ort, ort_spread),
            "%.2f" % ratio if ratio else "—",
            gflops(tract),
            gflops(ort),
            "%.0f" % (int(rss) / 1024) if rss else "—",
            "%.2f" % float(compile_s) if compile_s else "—",
        ]
        rows.append("| " + " | ".join(cells) + " |")

    lines = [
        "# Performance",
        "",
        "tract against onnxruntime %s (onnxruntime-node), one thread each, on "
        "the same inputs, then two threads each. Written by "
        "`scripts/bench.sh`; rerun it rather than editing this file." %
        run["ort_version"],
        "",
        "* Made on %s by `%s`." % (run["date"], run["command"]),
        "* Machine: %s, %s cores; one core's FP32 FMA peak %.1f GFLOP/s "
        "(%s, `bench/fma_peak.c`)." % (run["cpu"], run["cores"], peak,
                                       run["fma_isa"] or "scalar"),
        "* tract: %s, commit %s (binary %s); onnxruntime-node %s." % (
            run["tract_version"], run["commit"], run["tract_build"],
            run["ort_version"]),
        "* %s round%s of about %s ms per engine per model; the run took "
        "%s." % (run["rounds"], "" if run["rounds"] == "1" else "s",
                 run["time_ms"], duration(int(run["seconds"]))),
    ] + ([
        "* **tract was rebuilt during the run** (binary %s at the end): the "
        "rows may come from two builds." % run["tract_rebuilt"]
    ] if "tract_rebuilt" in run else []) + [
        "",
        "| model | input | tract ms | onnxruntime ms | tract / ort | "
        "tract GFLOP/s | ort GFLOP/s | tract peak MB | compile s |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ] + rows + [""]

    geomean = None
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios.values()) /
                           len(ratios))
        worst = max(ratios, key=ratios.get)
        best = min(ratios, key=ratios.get)
        lines.append(
            "**Geometric mean of tract / onnxruntime: %.2f** over %d model%s "
            "(above 1, tract is slower); from %.2f (%s) to %.2f (%s)." % (
                geomean, len(ratios), "" if len(ratios) == 1 else "s",
                ratios[best], best, ratios[worst], worst))
        missing = [m for m in models if m not in ratios]
        if missing:
            lines.append("Not in the mean (a failure or no figure): %s." %
                         ", ".join(missing))
        lines.append("")

    matmul = figures.get("matmul512")
    matmul_share = None
    if matmul and matmul["flops"]:
        parts = []
        for engine, label in (("tract", "tract"), ("ort", "onnxruntime")):
            if matmul[engine]:
                gflops = matmul["flops"] / matmul[engine] * 1e-6
                if engine == "tract":
                    matmul_share = gflops / peak
                parts.append("%s %.1f GFLOP/s, %.1f%% of the peak" % (
                    label, gflops, 100 * gflops / peak))
        if parts:
            lines += ["**512³ MatMul**: " + "; ".join(parts) + ".", ""]

    # Issue 16's targets, met or missed and by how much.
    def status(ok, measured, target):
        return "| %s | %s | %s |" % (target, measured,
                                     "met" if ok else "**missed**")
    checks = []
    if geomean is not None:
        checks.append(status(geomean <= TARGET_GEOMEAN, "%.2f" % geomean,
                             "geometric mean ≤ %.1f" % TARGET_GEOMEAN))
        over = sorted((m for m in ratios if ratios[m] > TARGET_MAX_RATIO),
                      key=ratios.get, reverse=True)
        checks.append(status(
            not over,
            "%d of %d above%s" % (len(over), len(ratios),
                                  "; worst %s at %.2f" % (over[0],
                                                          ratios[over[0]])
                                  if over else ""),
            "no model above %.1f" % TARGET_MAX_RATIO))
    if matmul_share is not None:
        checks.append(status(matmul_share >= TARGET_MATMUL_PEAK,
                             "%.1f%%" % (100 * matmul_share),
                             "512³ MatMul ≥ %.0f%% of the FMA peak" %
                             (100 * TARGET_MATMUL_PEAK)))
    resnet = figures.get("resnet18")
    if resnet and resnet["rss"]:
        mb = int(resnet["rss"]) / 1024
        checks.append(status(mb < TARGET_RESNET_MB, "%.0f MB" % mb,
                             "ResNet-18 peak memory < %d MB" %
                             TARGET_RESNET_MB))
    mobilenet = figures.get("mobilenet_v2")
    if mobilenet and mobilenet["compile"]:
        seconds = float(mobilenet["compile"])
        checks.append(status(seconds < TARGET_MOBILENET_COMPILE_S,
                             "%.2f s" % seconds,
                             "MobileNetV2 compiles in < %d s" %
                             TARGET_MOBILENET_COMPILE_S))
    if checks:
        lines += ["## Issue 16's targets", "",
                  "| target | measured | |", "|---|---|---|"] + checks + [""]
    lines += two_threads(values, models, peak, status)

    lines += [
        "## How it is measured",
        "",
        "* **Latency**: `tract -O -i FACT... MODEL bench --threads N "
        "--max-time T --warmup-loops 1 --warmup-time W --input-from-bundle "
        "B` prints the mean of its runs over T ms; `bench/ort_bench.js "
        "--threads N` times onnxruntime the same way (graph optimizations "
        "`all`, N intra-op threads and one inter-op thread, the native "
        "binding's synchronous `run`) and its mean is used. Each round runs "
        "both engines, the first alternating, each on one thread then two; "
        "the tables show each engine's best round and ± the spread of the "
        "rounds ((max − min) / min).",
        "* **Inputs**: the real models (fetched by `scripts/fetch-models.sh`) "
        "run on their onnxruntime reference bundles "
        "(`test/onnx/reference/MODEL.npz`), but ppocr_det_640: PaddleOCR's "
        "detector on a 640×640 page (`bench/make_large_bundles.py`, with "
        "onnxruntime's outputs), a realistic size where the reference's "
        "64×96 takes under a millisecond; the synthetic ones "
        "(`bench/make_models.py`: seeded random weights and inputs, opset "
        "17) on the bundles written next to them. tract is given the "
        "bundle's shapes as input facts (`bench/bundle_facts.py`); "
        "onnxruntime gets the model as it is. Silero VAD v5 and jjhbw get "
        "`sr` as the constant 16000 in tract, as the example and the tests "
        "give it; onnxruntime gets it as an input.",
        "* **Correctness**: before timing, both engines' outputs are checked "
        "against the bundle's at tract's `--approx approximate` (`tract run "
        "--assert-output-bundle`, and `bench/ort_bench.js` itself): "
        "onnxruntime's reference outputs for the real models, float64 "
        "numpy/torch outputs for the synthetic ones.",
        "* **GFLOP/s**: the total of `tract dump --cost` (a multiply-add "
        "counts 2) divided by each engine's time; shown for models of at "
        "least %d MFLOP." % (GFLOPS_MIN_FLOPS / 1e6),
        "* **Peak MB**: the maximum resident set of `tract -O MODEL run` "
        "(`/usr/bin/time`), which compiles the model in the same process "
        "(JIT) and runs it once.",
        "* **Compile s**: the wall time of `tract -O MODEL compile --cpu "
        "native -o MODEL.o`.",
        "",
    ]
    # The analysis of what is slow or missed, written by hand from profiles
    # (`tract dump --profile`, heaptrack) next to this script.
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            lines += [f.read().rstrip(), ""]
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

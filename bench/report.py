#!/usr/bin/env python3
"""Writes docs/performance.md from the measurements of scripts/bench.sh.

Usage: report.py RESULTS.tsv OUT.md

RESULTS.tsv has one measurement a line, MODEL <tab> KEY <tab> VALUE, with
MODEL '-' for the run's facts (date, cpu, fma_peak, command...). Keys
repeated over rounds (tract_ms, ort_ms) keep every round. A model whose
key 'table' is 'vision' (bench/make_vision_models.py's) goes to the second
table, "Convolutional networks outside the suite", with its own means and
targets; one whose 'table' is 'int8' to the third, "8-bit models", with
tract's time on the float model it comes from (tract_f32_ms); the suite's
figures and checks leave both out.
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
# Issue 49's: a whole `tract run` of MobileNetV2 and ResNet-18.
TARGET_FIRST_COLD_S = 2.0
TARGET_FIRST_WARM_S = 0.5
# Issue 17's: on two threads.
TARGET_GEOMEAN_2T = 1.0
TARGET_SPEEDUP_2T = 1.7
TARGET_SPEEDUP_MODELS = ("resnet18", "mobilenet_v2", "ppocr_det_640")
TARGET_MATMUL_PEAK_2T = 0.80
# Issue 49's, for the convolutional networks outside the suite, at one and
# at two threads.
TARGET_VISION_GEOMEAN = 0.85
TARGET_VISION_MAX_RATIO = 1.2
# Issue 46's, for the 8-bit models.
TARGET_INT8_GEOMEAN = 0.8
TARGET_INT8_RESNET_SPEEDUP = 2.0


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


def geomean_of(ratios):
    return math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))


def vision(values, models, status):
    """The second table: the convolutional networks outside the suite, each
    engine on one thread and on two, with their own geometric means and
    worst ratios, and issue 49's targets for them. Returns the section's
    lines and the targets' rows."""
    threads = [(1, "", "one thread")]
    if any(values[m].get("tract_ms_2t") or values[m].get("ort_ms_2t")
           for m in models):
        threads.append((2, "_2t", "two threads"))
    rows, failed = [], []
    ratios = {count: {} for count, _, _ in threads}
    for model in models:
        v = values[model]
        first = lambda key: v[key][0] if v.get(key) else None
        tract_error, ort_error = first("tract_error"), first("ort_error")
        if tract_error:
            failed.append(model)
        flops = float(first("flops")) if first("flops") else None
        cells = [model, first("input") or "—"]
        for count, suffix, _ in threads:
            tract, tract_spread = best_and_spread(v.get("tract_ms" + suffix,
                                                        []))
            ort, ort_spread = best_and_spread(v.get("ort_ms" + suffix, []))
            # As in the suite's table: a model is measured fully or reported
            # as failing.
            if tract_error:
                tract = None
            if ort_error:
                ort = None
            if tract and ort:
                ratios[count][model] = tract / ort
            if count == 1:
                tract_1t = tract
            cells += [
                error_cell("tract", tract_error) if tract_error and count == 1
                else timing_cell(tract, tract_spread),
                error_cell("onnxruntime", ort_error)
                if ort_error and count == 1 else timing_cell(ort, ort_spread),
                "%.2f" % ratios[count][model] if model in ratios[count]
                else "—",
            ]
        rss = first("rss_kb")
        cold = best_and_spread(v.get("first_cold_s", []))[0]
        warm = best_and_spread(v.get("first_warm_s", []))[0]
        cells += [
            "%.1f" % (flops / tract_1t * 1e-6)
            if tract_1t and flops and flops >= GFLOPS_MIN_FLOPS else "—",
            "%.0f" % (int(rss) / 1024) if rss else "—",
            "%.2f" % float(cold) if cold else "—",
            "%.2f" % float(warm) if warm else "—",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return [], []

    header = ["model", "input"]
    for count, _, _ in threads:
        at = "" if count == 1 else ", %d threads" % count
        header += ["tract ms" + at, "onnxruntime ms" + at, "tract / ort" + at]
    header += ["tract GFLOP/s", "tract peak MB", "first result s, cold",
               "warm"]
    lines = [
        "## Convolutional networks outside the suite",
        "",
        "torchvision's architectures that the suite does not have "
        "(`bench/make_vision_models.py`: random weights, batch-norm "
        "statistics estimated on random images, batch 1, opset 17), measured "
        "as the suite is but reported apart, with means of their own, so that "
        "the suite's fast audio and OCR models cannot hide a slow vision "
        "one.",
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|" + "--:|" * (len(header) - 2),
    ] + rows + [""]

    checks = []
    for count, _, label in threads:
        measured = ratios[count]
        if not measured:
            continue
        geomean = geomean_of(measured)
        worst = max(measured, key=measured.get)
        best = min(measured, key=measured.get)
        lines.append(
            "**Geometric mean of tract / onnxruntime on %s: %.2f** over %d "
            "network%s; the worst %.2f (%s), the best %.2f (%s)." % (
                label, geomean, len(measured),
                "" if len(measured) == 1 else "s", measured[worst], worst,
                measured[best], best))
        lines.append("")
        checks.append(status(geomean <= TARGET_VISION_GEOMEAN,
                             "%.2f" % geomean,
                             "outside the suite: geometric mean on %s ≤ %.2f"
                             % (label, TARGET_VISION_GEOMEAN)))
        over = sorted((m for m in measured
                       if measured[m] > TARGET_VISION_MAX_RATIO),
                      key=measured.get, reverse=True)
        # A network tract fails on misses this target too.
        checks.append(status(
            not over and not failed,
            "%d of %d above; the worst %s at %.2f%s" % (
                len(over), len(measured), worst, measured[worst],
                "; tract fails on %s" % ", ".join(failed) if failed else ""),
            "outside the suite: no network above %.1f on %s" %
            (TARGET_VISION_MAX_RATIO, label)))
    missing = [m for m in models if m not in ratios[1]]
    if missing:
        lines += ["Not in the means (a failure or no figure): %s." %
                  ", ".join(missing), ""]
    return lines, checks


def int8(values, models, status):
    """The third table: 8-bit models, each engine on one thread and two on
    the same file, and tract's time on the float model each comes from;
    issue 46's targets. Returns the section's lines and the targets' rows."""
    threads = [(1, "", "one thread")]
    if any(values[m].get("tract_ms_2t") or values[m].get("ort_ms_2t")
           for m in models):
        threads.append((2, "_2t", "two threads"))
    rows = []
    ratios = {count: {} for count, _, _ in threads}
    speedups = {count: {} for count, _, _ in threads}
    for model in models:
        v = values[model]
        first = lambda key: v[key][0] if v.get(key) else None
        tract_error, ort_error = first("tract_error"), first("ort_error")
        cells = [model, first("float_model") or "—", first("input") or "—"]
        for count, suffix, _ in threads:
            tract, tract_spread = best_and_spread(v.get("tract_ms" + suffix,
                                                        []))
            ort, ort_spread = best_and_spread(v.get("ort_ms" + suffix, []))
            f32, _ = best_and_spread(v.get("tract_f32_ms" + suffix, []))
            if tract_error:
                tract = None
            if ort_error:
                ort = None
            if tract and ort:
                ratios[count][model] = tract / ort
            if tract and f32:
                speedups[count][model] = f32 / tract
            cells += [
                error_cell("tract", tract_error) if tract_error and count == 1
                else timing_cell(tract, tract_spread),
                error_cell("onnxruntime", ort_error)
                if ort_error and count == 1 else timing_cell(ort, ort_spread),
                "%.2f" % ratios[count][model] if model in ratios[count]
                else "—",
                "%.2f×" % speedups[count][model]
                if model in speedups[count] else "—",
            ]
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return [], []
    header = ["model", "float model", "input"]
    for count, _, _ in threads:
        at = "" if count == 1 else ", %d threads" % count
        header += ["tract ms" + at, "onnxruntime ms" + at,
                   "tract / ort" + at, "tract f32 / int8" + at]
    lines = [
        "## 8-bit models",
        "",
        "The suite's models quantized by `bench/quantize_models.py` in the "
        "QDQ form (`_qdq`) or the QOperator form (`_qop`: QLinearConv, "
        "QLinearMatMul, QLinearAdd...), both with int8 weights per output "
        "channel and uint8 activations per tensor calibrated on the "
        "reference input, or dynamically (`_dyn`: DynamicQuantizeLinear and "
        "MatMulInteger); the reference outputs are onnxruntime's on the "
        "quantized file, with its graph optimizations, which run it on its "
        "integer kernels; and "
        "`bench/make_models.py`'s QLinearMatMul and QLinearConv. Both "
        "engines run the same 8-bit file; *tract f32 / int8* is tract's "
        "time on the float model it was quantized from over its time on the "
        "8-bit one (above 1, the 8-bit model is faster).",
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|---|" + "--:|" * (len(header) - 3),
    ] + rows + [""]
    checks = []
    for count, _, label in threads:
        measured = ratios[count]
        if not measured:
            continue
        geomean = geomean_of(measured)
        lines += ["**Geometric mean of tract / onnxruntime on %s: %.2f** "
                  "over %d 8-bit models." % (label, geomean, len(measured)),
                  ""]
        checks.append(status(geomean <= TARGET_INT8_GEOMEAN,
                             "%.2f" % geomean,
                             "8-bit: geometric mean on %s ≤ %.2f" %
                             (label, TARGET_INT8_GEOMEAN)))
    speedup = speedups[1].get("resnet18_qdq")
    if speedup:
        checks.append(status(speedup >= TARGET_INT8_RESNET_SPEEDUP,
                             "%.2f×" % speedup,
                             "8-bit ResNet-18 ≥ %.0f× faster than tract's "
                             "f32 one (one thread)" %
                             TARGET_INT8_RESNET_SPEEDUP))
    return lines, checks


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    values, order = load(sys.argv[1])
    vision_models = [m for m in order
                     if values[m].get("table", [""])[-1] == "vision"]
    int8_models = [m for m in order
                   if values[m].get("table", [""])[-1] == "int8"]
    # The suite: what every figure and check below is about, but the
    # second and third tables'.
    models = [m for m in order
              if m not in vision_models and m not in int8_models]
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
        rss = first("rss_kb")
        cold = best_and_spread(v.get("first_cold_s", []))[0]
        warm = best_and_spread(v.get("first_warm_s", []))[0]
        figures[model] = dict(tract=tract, ort=ort, flops=flops, rss=rss,
                              cold=cold, warm=warm)
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
            "%.2f" % float(cold) if cold else "—",
            "%.2f" % float(warm) if warm else "—",
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
    ] + ([
        "| model | input | tract ms | onnxruntime ms | tract / ort | "
        "tract GFLOP/s | ort GFLOP/s | tract peak MB | first result s, "
        "cold | warm |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ] + rows + [""] if rows else [])

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
    for name, label in (("mobilenet_v2", "MobileNetV2"),
                        ("resnet18", "ResNet-18")):
        figure = figures.get(name)
        for key, target in (("cold", TARGET_FIRST_COLD_S),
                            ("warm", TARGET_FIRST_WARM_S)):
            if figure and figure[key]:
                seconds = float(figure[key])
                checks.append(status(seconds < target, "%.2f s" % seconds,
                                     "%s's first result, %s, < %g s" %
                                     (label, key, target)))
    vision_lines, vision_checks = vision(values, vision_models, status)
    checks += vision_checks
    int8_lines, int8_checks = int8(values, int8_models, status)
    checks += int8_checks
    if checks:
        lines += ["## Targets (issues 16, 46 and 49)", "",
                  "| target | measured | |", "|---|---|---|"] + checks + [""]
    lines += two_threads(values, models, peak, status)
    lines += vision_lines
    lines += int8_lines

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
        "* **First result s**: the wall time of a whole `tract -O -i FACT... "
        "MODEL run --input-from-bundle B` (process start, load, compile, one "
        "run), cold on an empty compile cache and warm from the entry the "
        "cold run stored (`TRACT_CACHE_DIR`), once in each round at tract's "
        "turn; the best round is shown.",
    ] + ([
        "* **Outside the suite**: the second table's networks run on the "
        "bundles `bench/make_vision_models.py` writes next to them "
        "(`models/vision/`): a seeded random input and torch's float32 "
        "outputs, which both engines are checked against as above.",
    ] if vision_models else []) + [
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

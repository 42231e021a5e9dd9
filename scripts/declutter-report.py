#!/usr/bin/env python3
"""Writes docs/declutter.md: op counts of the real models before and after
`tract-declutter-pipeline` (what `tract -O` runs).

Each model is imported with `tract-translate --import-onnx` (facts as below),
decluttered with `tract-opt --tract-declutter-pipeline`, and both texts are
counted: ops of the tract dialect in every region (scan bodies included),
constants apart, transposes (move_axis), and batch norms left (a conv or
einsum whose result is multiplied by or added to a constant).

Usage: scripts/declutter-report.py [--build DIR] [--models DIR] [--out FILE]
"""
import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (model, facts): the facts of test/onnx/import_real_models.sh, with Silero's
# sample rate a constant so that its If on it folds.
MODELS = [
    ("silero_vad_v5.onnx",
     ["input:1,576,f32", "state:2,1,128,f32", "sr:i64=16000"]),
    ("silero_vad_jjhbw.onnx",
     ["input:1,576,f32", "state:2,1,128,f32", "sr:i64=16000"]),
    ("silero_vad_legacy.onnx", []),
    ("ppocr_det.onnx", ["1,3,32*H,32*W,f32"]),
    ("ppocr_rec.onnx", ["1,3,48,W,f32"]),
    ("ppocr_cls.onnx", []),
    ("blazeface_front.onnx", []),
    ("blazeface_back.onnx", []),
    ("mobilenet_v2.onnx", ["1,3,224,224,f32"]),
    ("resnet18.onnx", ["1,3,224,224,f32"]),
]

OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"?tract\.([a-z_]+)')
DEF = re.compile(r'^\s*(%[\w#:]+)(?:,\s*%[\w#:]+)*\s*=\s*"?tract\.([a-z_]+)\s*(.*)')


def count(text):
    ops = collections.Counter()
    producer = {}
    uses = collections.Counter()
    for line in text.splitlines():
        m = OP.match(line)
        if not m:
            continue
        ops[m.group(1)] += 1
        d = DEF.match(line)
        if d:
            producer[d.group(1).split(":")[0]] = (d.group(2), d.group(3))
        for name in re.findall(r"%[\w#]+", line.split("=", 1)[-1]):
            uses[name] += 1
    # Batch norms left: the only user of a conv (or einsum) result multiplies
    # it by a constant, or adds one to a conv's (an add after an einsum is
    # the bias of a 1x1 conv).
    affine = 0
    for name, (op, rest) in producer.items():
        if op not in ("mul", "add"):
            continue
        operands = re.findall(r"%[\w#]+", rest.split(":")[0])[:2]
        kinds = [producer.get(o, ("arg", ""))[0] for o in operands]
        if "const" not in kinds:
            continue
        for operand, kind in zip(operands, kinds):
            if uses[operand] == 1 and (kind == "conv" or
                                       (kind == "einsum" and op == "mul")):
                affine += 1
    return ops, affine


def run(command):
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors="replace").strip()
                           .splitlines()[-1])
    return proc.stdout.decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.environ.get(
        "TRACT_BUILD_DIR", os.path.join(ROOT, "build")))
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs",
                                                      "declutter.md"))
    args = parser.parse_args()
    translate = os.path.join(args.build, "bin", "tract-translate")
    opt = os.path.join(args.build, "bin", "tract-opt")

    rows, details = [], []
    for model, facts in MODELS:
        path = os.path.join(args.models, model)
        if not os.path.exists(path):
            print("missing %s (scripts/fetch-models.sh)" % path,
                  file=sys.stderr)
            return 1
        command = [translate, "--import-onnx", path]
        command += ["--input-fact=" + fact for fact in facts]
        imported = run(command)
        decluttered = subprocess.run(
            [opt, "--tract-declutter-pipeline"], input=imported.encode(),
            stdout=subprocess.PIPE, check=True).stdout.decode()
        before, bn_before = count(imported)
        after, bn_after = count(decluttered)
        total = lambda c: sum(v for k, v in c.items() if k != "const")
        rows.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            model, " ".join("`-i %s`" % f for f in facts) or "",
            total(before), total(after), before["const"], after["const"],
            before["move_axis"], after["move_axis"], bn_before, bn_after))
        changed = sorted(set(before) | set(after),
                         key=lambda k: (-(before[k] - after[k]), k))
        cells = ["%s %d→%d" % (k, before[k], after[k]) for k in changed
                 if before[k] != after[k]]
        details.append("* **%s**: %s" % (model, ", ".join(cells) or
                                          "no change"))
        print("%s: %d -> %d ops" % (model, total(before), total(after)),
              file=sys.stderr)

    with open(args.out, "w") as out:
        out.write("""# Declutter on the real models

Generated by `scripts/declutter-report.py`; do not edit. Each model is
imported with `tract-translate --import-onnx` (with the facts shown) and
decluttered with `tract-opt --tract-declutter-pipeline`, the pipeline
`tract -O` runs. *Ops* counts the tract ops of every region (scan bodies
included) but constants, which have their own columns; *transposes* counts
`move_axis`; *batch norms* counts a conv or einsum result whose only user
multiplies it by a constant, or adds a constant to a conv's (an affine left
unfolded; the add after an einsum that was a 1x1 conv is its bias, and is
not counted).

The transposes left are those no rewrite can remove: BlazeFace takes
NHWC images and its first convolution wants channels first. In
PaddleOCR's recognizer the transpose into the transformer's sequence
layout splits per reader and vanishes into the einsums; its attention's
q, k, v transpose too. Silero v5 runs one frame here: its LSTM scan has
one iteration and is inlined.

The rewrites are listed in [reference/passes.md](reference/passes.md);
outputs are checked against onnxruntime with `tract -O` by
`test/onnx/run_real_models.py --optimize`.

| model | facts | ops before | ops after | consts before | consts after | transposes before | transposes after | batch norms before | batch norms after |
|---|---|---|---|---|---|---|---|---|---|
""")
        out.write("\n".join(rows) + "\n\n## Changes per op\n\n")
        out.write("\n".join(details) + "\n")
    print("wrote %s" % os.path.relpath(args.out, ROOT), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

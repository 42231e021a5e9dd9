#!/usr/bin/env python3
"""Writes the onnxruntime reference bundle of each real model.

For each model: builds deterministic inputs (fixed seed per model, realistic
shapes and value ranges), runs onnxruntime-node on them
(run_onnxruntime.js) and writes MODEL-STEM.npz holding the inputs and the
outputs under the model's own names, plus models.sha256, the hashes of the
model files the references were made from (the test refuses a model that
differs). Called by scripts/make-reference-outputs.sh.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# Above this a bundle is not committed: pick smaller dynamic dims instead.
MAX_BYTES = 1 << 20
# An output whose values are all this close to zero would match anything
# near zero at --approx approximate (atol 1e-4): change the inputs.
VACUOUS = 1e-2


# (F1, F2, F3) of the vowels of "father", "beet", "boot", "bet", "bought".
VOWELS = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240),
          (530, 1840, 2480), (570, 840, 2410)]


def speech(rng, samples, rate=16000):
    """Voiced speech, roughly: 200 ms syllables, each a vowel (harmonics of a
    wandering 120 Hz pitch shaped by the vowel's three formants) under a
    syllable envelope, at a normal recording level, plus noise."""
    t = np.arange(samples) / rate
    f0 = (120 + 25 * np.sin(2 * np.pi * 1.5 * t) +
          10 * np.sin(2 * np.pi * 5.3 * t))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    syllable = (t / 0.2).astype(int)
    formants = np.array([VOWELS[i % len(VOWELS)] for i in syllable])
    wave = np.zeros(samples)
    for k in range(1, 40):
        resonance = sum(1 / (1 + ((k * f0 - f) / (80 + 0.05 * f)) ** 2)
                        for f in formants.T)
        wave += resonance / np.sqrt(k) * np.sin(k * phase)
    wave *= np.sqrt(np.sin(np.pi * (t / 0.2 % 1)))
    wave = 0.3 * wave / np.abs(wave).max() + rng.normal(0, 0.003, samples)
    return wave.astype(np.float32)


def silero(rng, run, states, context=0, rate=16000):
    """A chunk of 512 samples at 16 kHz (256 at 8 kHz), preceded by
    `context` samples of the previous one as Silero's own wrapper feeds its
    v5 models, with the state the model reaches on the speech before it: six
    chunks run from a zero state (the speech probability is then about 0.9,
    not saturated). `states` maps each state input to the output carrying
    it on."""
    chunk, warmup = (512 if rate == 16000 else 256), 6
    audio = speech(rng, context + chunk * (warmup + 1), rate)[np.newaxis]
    shapes = {"state": (2, 1, 128), "h": (2, 1, 64), "c": (2, 1, 64)}
    carried = {name: np.zeros(shapes[name], np.float32) for name in states}
    for i in range(warmup + 1):
        inputs = {"input": audio[:, chunk * i:context + chunk * (i + 1)],
                  "sr": np.array(rate, dtype=np.int64), **carried}
        if i == warmup:
            return inputs
        outputs = run(inputs)
        carried = {name: outputs[states[name]] for name in states}


def pixels(rng, height, width):
    """An 8-bit RGB image (H, W, 3): smooth shapes plus sensor noise."""
    y, x = np.mgrid[0:height, 0:width] / max(height, width)
    image = np.zeros((height, width, 3))
    for _ in range(6):
        fy, fx = rng.uniform(0.5, 6, 2)
        phase = rng.uniform(0, 6)
        image += rng.uniform(-60, 60, 3) * np.sin(
            2 * np.pi * (fy * y + fx * x) + phase)[..., np.newaxis]
    image += 128 + rng.normal(0, 8, image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def text(rng, height, width, lines, scale):
    """An 8-bit RGB image (H, W, 3) of dark printed text on paper: Pillow's
    built-in bitmap font (no system font involved), enlarged `scale` times
    and blurred a little by the resize, plus sensor noise."""
    from PIL import Image, ImageDraw, ImageFont
    page = Image.new("L", (width // scale, height // scale), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default()
    for row, line in enumerate(lines):
        draw.text((2, 1 + 12 * row), line, fill=0, font=font)
    page = np.asarray(page.resize((width, height), Image.BILINEAR), np.float64)
    image = (40 + 0.8 * page)[..., np.newaxis] * rng.uniform(0.9, 1.0, 3)
    image = image + rng.normal(0, 6, image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def nchw(image, mean, std):
    planes = (image.astype(np.float32) / 255.0 - mean) / std
    return planes.transpose(2, 0, 1)[np.newaxis].astype(np.float32)


IMAGENET_MEAN = np.array([0.485, 0.456, 0.406])
IMAGENET_STD = np.array([0.229, 0.224, 0.225])


def imagenet(rng, size):
    return nchw(pixels(rng, size, size), IMAGENET_MEAN, IMAGENET_STD)


def ocr_detection(rng, height, width, lines, scale):
    """PaddleOCR's detector normalizes with ImageNet's statistics."""
    return nchw(text(rng, height, width, lines, scale), IMAGENET_MEAN,
                IMAGENET_STD)


def ocr_line(rng, height, width, line, scale):
    """The recognizer and the direction classifier take a text line in
    [-1, 1]."""
    return nchw(text(rng, height, width, [line], scale), 0.5, 0.5)


def blazeface(rng, size):
    """NHWC in [-1, 1], as MediaPipe feeds it."""
    image = pixels(rng, size, size).astype(np.float32) / 127.5 - 1.0
    return image[np.newaxis].astype(np.float32)


# model -> function of a numpy Generator and of a function running the model
# on onnxruntime (inputs -> outputs), giving {input name: array}. Dynamic
# dims are kept small so that the bundles stay small. `MODEL:VARIANT` is a
# second bundle of the same model, MODEL-STEM.VARIANT.npz.
MODELS = {
    "silero_vad_v5.onnx": lambda rng, run: silero(
        rng, run, {"state": "stateN"}),
    # Its other branch: 8 kHz audio, 256-sample chunks.
    "silero_vad_v5.onnx:8k": lambda rng, run: silero(
        rng, run, {"state": "stateN"}, rate=8000),
    # This Silero v5 build says "no speech" (p < 0.01) to any 512-sample
    # chunk without its 64 samples of context.
    "silero_vad_jjhbw.onnx": lambda rng, run: silero(
        rng, run, {"state": "stateN"}, context=64),
    "silero_vad_legacy.onnx": lambda rng, run: silero(
        rng, run, {"h": "hn", "c": "cn"}),
    "ppocr_det.onnx": lambda rng, _: {
        "x": ocr_detection(rng, 64, 96, ["tract", "MLIR"], 2)},
    "ppocr_rec.onnx": lambda rng, _: {
        "x": ocr_line(rng, 48, 160, "ONNX 17", 3)},
    "ppocr_cls.onnx": lambda rng, _: {
        "x": ocr_line(rng, 48, 192, "tract run", 2)},
    "blazeface_front.onnx": lambda rng, _: {"input:0": blazeface(rng, 128)},
    "blazeface_back.onnx": lambda rng, _: {"input:0": blazeface(rng, 256)},
    "mobilenet_v2.onnx": lambda rng, _: {"input": imagenet(rng, 224)},
    "resnet18.onnx": lambda rng, _: {"input": imagenet(rng, 224)},
}

DTYPES = {"float32": np.float32, "float64": np.float64, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
          "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
          "uint64": np.uint64, "bool": np.bool_}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_hashes(path):
    """models.sha256 as {model file: hash}, empty when there is none. Shared
    with test/onnx/run_real_models.py, which refuses a model whose hash
    differs from the one its bundle was made from."""
    hashes = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                digest, name = line.split()
                hashes[name] = digest
    return hashes


def add_bundle_arguments(parser):
    """The options of the scripts that write bundles from the real models
    (this one and bench/make_large_bundles.py)."""
    parser.add_argument("--models", required=True, help="the models folder")
    parser.add_argument("--out", required=True, help="the references folder")
    parser.add_argument("--node-path", required=True,
                        help="node_modules holding onnxruntime-node")


def write_npz(path, arrays):
    """np.savez_compressed, with fixed member dates so that the same arrays
    make the same file."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(name + ".npy",
                                     date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(member, "w") as f:
                np.lib.format.write_array(f, np.asarray(array),
                                          allow_pickle=False)


def run_onnxruntime(node_path, model, inputs, optimized=False):
    with tempfile.TemporaryDirectory() as work:
        entries = []
        for index, (name, array) in enumerate(inputs.items()):
            file = "input_%d.bin" % index
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")) \
                .tofile(os.path.join(work, file))
            entries.append({"name": name, "dtype": array.dtype.name,
                            "dims": list(array.shape), "file": file})
        with open(os.path.join(work, "inputs.json"), "w") as f:
            json.dump(entries, f)
        env = dict(os.environ, NODE_PATH=node_path)
        subprocess.run(["node", os.path.join(HERE, "run_onnxruntime.js")] +
                       (["--optimized"] if optimized else []) + [model, work],
                       check=True, env=env)
        with open(os.path.join(work, "outputs.json")) as f:
            entries = json.load(f)
        outputs = {}
        for entry in entries:
            dtype = np.dtype(DTYPES[entry["dtype"]]).newbyteorder("<")
            data = np.fromfile(os.path.join(work, entry["file"]), dtype=dtype)
            outputs[entry["name"]] = data.reshape(entry["dims"])
        return outputs


def bundle_name(name):
    """The reference bundle of MODELS entry `name`: MODEL-STEM.npz, or
    MODEL-STEM.VARIANT.npz for `MODEL:VARIANT`."""
    file, _, variant = name.partition(":")
    return os.path.splitext(file)[0] + ("." + variant if variant else "") + \
        ".npz"


def write_cases(doc, seed, cases, script, optimized=False):
    """The main of the scripts that write test models with onnxruntime's
    outputs (test/onnx/*/make_*models.py): `cases(rng)` yields (name, model,
    inputs) from a generator seeded with `seed`; `doc` describes the models
    and `script` is the caller's __file__, whose folder is the default
    OUT_DIR. With `optimized`, onnxruntime runs with its graph
    optimizations (run_onnxruntime.js --optimized)."""
    parser = argparse.ArgumentParser(
        description=doc,
        epilog="Writes each model as OUT_DIR/NAME.onnx, runs onnxruntime-node "
               "on its seeded inputs and writes the inputs and outputs as "
               "OUT_DIR/NAME.npz; commit what it writes. NODE_MODULES is "
               "what scripts/install-onnxruntime.sh prints.")
    parser.add_argument("--node-path", required=True, metavar="NODE_MODULES")
    parser.add_argument("out", nargs="?", metavar="OUT_DIR",
                        default=os.path.dirname(os.path.abspath(script)))
    args = parser.parse_args()
    for name, model, inputs in cases(np.random.default_rng(seed)):
        path = os.path.join(args.out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        outputs = run_onnxruntime(args.node_path, path, inputs, optimized)
        write_npz(os.path.join(args.out, name + ".npz"), {**inputs, **outputs})
        print(name, {k: v.shape for k, v in outputs.items()})


def main():
    parser = argparse.ArgumentParser()
    add_bundle_arguments(parser)
    parser.add_argument("names", nargs="*", help="models (default: all)")
    args = parser.parse_args()
    names = args.names or list(MODELS)
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        sys.exit("make_references: unknown model(s) %s; known: %s"
                 % (", ".join(unknown), ", ".join(MODELS)))
    os.makedirs(args.out, exist_ok=True)
    hashes_path = os.path.join(args.out, "models.sha256")
    hashes = read_hashes(hashes_path)
    status = 0
    for name in names:
        file, _, variant = name.partition(":")
        model = os.path.join(args.models, file)
        if not os.path.exists(model):
            sys.exit("make_references: %s is missing "
                     "(scripts/fetch-models.sh fetches it)" % model)
        # A seed of its own per model: adding a model changes no other bundle.
        rng = np.random.default_rng(zlib.crc32(name.encode()))

        def run(inputs):
            return run_onnxruntime(args.node_path, model, inputs)
        inputs = MODELS[name](rng, run)
        outputs = run(inputs)
        clash = set(inputs) & set(outputs)
        if clash:
            sys.exit("make_references: %s: names both input and output: %s"
                     % (name, ", ".join(sorted(clash))))
        bundle = os.path.join(args.out, bundle_name(name))
        write_npz(bundle, {**inputs, **outputs})
        hashes[file] = sha256(model)
        size = os.path.getsize(bundle)
        shapes = ", ".join(
            "%s %s" % (key, "x".join(map(str, value.shape)) or "scalar")
            for key, value in list(inputs.items()) + list(outputs.items()))
        print("%s: %d KiB (%s)"
              % (os.path.basename(bundle), size // 1024, shapes))
        for key, value in outputs.items():
            if (value.dtype.kind == "f" and
                    not np.abs(value).max(initial=0) > VACUOUS):
                print("  output '%s' is all within %g of zero: the check would "
                      "be vacuous; choose other inputs" % (key, VACUOUS),
                      file=sys.stderr)
                status = 1
        if size > MAX_BYTES:
            print("  too large to commit: choose smaller dynamic dims",
                  file=sys.stderr)
            status = 1
    with open(hashes_path, "w") as f:
        for name in sorted(hashes):
            f.write("%s  %s\n" % (hashes[name], name))
    return status


if __name__ == "__main__":
    sys.exit(main())

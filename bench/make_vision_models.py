#!/usr/bin/env python3
"""Writes the convolutional networks of the benchmark's second table
(scripts/bench.sh --vision) into a folder (default models/vision/, not
committed): torchvision architectures that are not in the suite, so that a
fast audio or OCR model cannot hide a slow vision one in the suite's mean.

Each is exported with random weights (torch.manual_seed(0), weights=None, no
download), its batch-norm statistics estimated on random images as
scripts/export-torchvision.py does (with the initial ones, mean 0 and
variance 1, deep networks' activations fade or blow up through the blocks),
at opset 17 with a FIXED batch of 1 (no dynamic axes). Next to each
NAME.onnx, NAME.npz holds its input (named as the graph's input, seeded
random normal) and its outputs computed by torch in float32 (named as the
graph's outputs), for `tract run --input-from-bundle X.npz
--assert-output-bundle X.npz` and bench/ort_bench.js.

The sizes keep one run under about 300 ms on one core (onnxruntime, on
the 2-core machine of docs/performance.md), but r3d_18's, about 440 ms on
8 frames of 112x112, kept as a realistic clip; none had to be dropped, and
each exports, and runs and matches its bundle in tract and onnxruntime:

  mobilenet_v3_small      1x3x224x224  SE, hard-swish
  mobilenet_v3_large      1x3x224x224  SE, hard-swish
  efficientnet_b0         1x3x224x224  SE, SiLU
  convnext_tiny           1x3x160x160  7x7 depthwise, layer norm, GELU
  regnet_y_400mf          1x3x224x224  grouped convolutions, SE
  shufflenet_v2_x1_0      1x3x224x224  channel shuffle, split
  squeezenet1_1           1x3x224x224  fire modules, concat
  densenet121             1x3x160x160  dense concat
  googlenet               1x3x224x224  inception branches (no aux logits)
  mnasnet1_0              1x3x224x224
  resnext50_32x4d         1x3x160x160  grouped 3x3 convolutions
  deeplabv3_mobilenet_v3_large  1x3x256x256  atrous convolutions, bilinear
                          resize to the input's size; output 'out' only
  lraspp_mobilenet_v3_large     1x3x256x256  its 'out'
  r3d_18                  1x3x8x112x112  3-D convolutions (torchvision's
                          video ResNet on 8 frames of 112x112)

resnet18 is in the suite already (models/resnet18.onnx), so it is not here.

Run with /usr/bin/python3 (Debian's, with torch, torchvision and onnx).
Every run writes the files again (about two minutes for all on two cores,
570 MB); the same seeds give the same files. scripts/bench.sh writes only
the missing ones.
"""
import argparse
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torchvision

OPSET = 17
# Batch-norm calibration: this many random images, in batches of this many.
CALIBRATION_IMAGES = 32
CALIBRATION_BATCH = 8


class OutOnly(torch.nn.Module):
    """A segmentation model's 'out' (torchvision's return a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def classifier(name, **kwargs):
    return lambda: getattr(torchvision.models, name)(weights=None, **kwargs)


def segmentation(name):
    # weights_backbone=None: the default would download ImageNet weights.
    return lambda: OutOnly(getattr(torchvision.models.segmentation, name)(
        weights=None, weights_backbone=None))


# NAME: (builder, input shape, output name)
MODELS = {
    "mobilenet_v3_small": (classifier("mobilenet_v3_small"),
                           (1, 3, 224, 224), "logits"),
    "mobilenet_v3_large": (classifier("mobilenet_v3_large"),
                           (1, 3, 224, 224), "logits"),
    "efficientnet_b0": (classifier("efficientnet_b0"),
                        (1, 3, 224, 224), "logits"),
    "convnext_tiny": (classifier("convnext_tiny"), (1, 3, 160, 160),
                      "logits"),
    "regnet_y_400mf": (classifier("regnet_y_400mf"), (1, 3, 224, 224),
                       "logits"),
    "shufflenet_v2_x1_0": (classifier("shufflenet_v2_x1_0"),
                           (1, 3, 224, 224), "logits"),
    "squeezenet1_1": (classifier("squeezenet1_1"), (1, 3, 224, 224),
                      "logits"),
    "densenet121": (classifier("densenet121"), (1, 3, 160, 160), "logits"),
    "googlenet": (classifier("googlenet", aux_logits=False,
                             init_weights=True), (1, 3, 224, 224), "logits"),
    "mnasnet1_0": (classifier("mnasnet1_0"), (1, 3, 224, 224), "logits"),
    "resnext50_32x4d": (classifier("resnext50_32x4d"), (1, 3, 160, 160),
                        "logits"),
    "deeplabv3_mobilenet_v3_large": (
        segmentation("deeplabv3_mobilenet_v3_large"), (1, 3, 256, 256),
        "out"),
    "lraspp_mobilenet_v3_large": (segmentation("lraspp_mobilenet_v3_large"),
                                  (1, 3, 256, 256), "out"),
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None),
               (1, 3, 8, 112, 112), "logits"),
}


def calibrate_batch_norm(model, shape):
    """Estimates the batch-norm statistics on random inputs of `shape`
    (but the batch), as scripts/export-torchvision.py does."""
    norms = [m for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for module in norms:
        module.reset_running_stats()
        module.momentum = None  # a plain average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_IMAGES // CALIBRATION_BATCH):
            model(torch.randn(CALIBRATION_BATCH, *shape[1:]))
    model.eval()


def export(name, directory, seed):
    builder, shape, output_name = MODELS[name]
    torch.manual_seed(0)
    model = builder()
    calibrate_batch_norm(model, shape)
    model.eval()
    rng = np.random.default_rng(seed)
    example = rng.standard_normal(shape, dtype=np.float32)
    path = os.path.join(directory, name + ".onnx")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's notes
        torch.onnx.export(model, (torch.from_numpy(example),), path,
                          opset_version=OPSET, input_names=["input"],
                          output_names=[output_name],
                          do_constant_folding=True)  # no dynamic_axes
    graph = onnx.load(path).graph
    onnx.checker.check_model(path)
    weights = {tensor.name for tensor in graph.initializer}
    inputs = [v.name for v in graph.input if v.name not in weights]
    outputs = [v.name for v in graph.output]
    if inputs != ["input"] or outputs != [output_name]:
        sys.exit("make_vision_models: %s has inputs %s and outputs %s" %
                 (name, inputs, outputs))
    with torch.no_grad():
        expected = model(torch.from_numpy(example)).numpy()
    np.savez(os.path.join(directory, name + ".npz"),
             **{"input": example,
                output_name: expected.astype(np.float32)})
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out",
                        default=os.path.join(here, "..", "models", "vision"))
    parser.add_argument("names", nargs="*", metavar="MODEL",
                        help="models to write (default: all)")
    args = parser.parse_args()
    for name in args.names:
        if name not in MODELS:
            parser.error("unknown model %s (known: %s)" %
                         (name, ", ".join(MODELS)))
    os.makedirs(args.out, exist_ok=True)
    for name in args.names or MODELS:
        # One seed per model, so that writing one does not change another.
        path = export(name, args.out, list(MODELS).index(name) + 49)
        print("make_vision_models: %s" % os.path.relpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

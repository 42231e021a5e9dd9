#!/usr/bin/env python3
"""Exports a torchvision classifier (random weights, fixed seed) to ONNX at
opset 17 with a symbolic batch axis B: the shapes and ops of the real thing
without downloading weights.

The batch-norm statistics are then estimated on random images, as training
would: with the initial ones (mean 0, variance 1) MobileNetV2's activations
fade through its blocks to logits of about 1e-9, which any output near zero
would match, while calibrated they are of order 0.1 to 1. Batch norm is
folded into the convolutions by the export, so the ops do not change."""
import inspect
import sys

import torch
import torchvision


def calibrate_batch_norm(model):
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # a plain average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224))
    model.eval()


def main():
    name, output = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    calibrate_batch_norm(model)
    example = torch.randn(1, 3, 224, 224)
    options = dict(opset_version=17, input_names=["input"],
                   output_names=["logits"],
                   dynamic_axes={"input": {0: "B"}, "logits": {0: "B"}})
    # torch 2.9 and later export through dynamo unless told otherwise; the
    # suite's models come from the TorchScript exporter.
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False
    torch.onnx.export(model, example, output, **options)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Exports a torchvision classifier (random weights, fixed seed) to ONNX at
opset 17 with a symbolic batch axis B: the shapes and ops of the real thing
without downloading weights."""
import sys

import torch
import torchvision


def main():
    name, output = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    example = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, example, output, opset_version=17,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "B"}, "logits": {0: "B"}})


if __name__ == "__main__":
    main()

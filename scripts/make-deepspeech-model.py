#!/usr/bin/python3
"""Exports the DeepSpeech-like streaming model of the pulsification tests.

BatchNorm1d(64), Conv1d(64->128, k=3, stride 2), ReLU, Conv1d(128->128, k=5),
ReLU, MaxPool1d(2), a 2-layer GRU of hidden 256, Linear(256->32), exported
to ONNX with dynamic axes B (batch) and S (frames). The input is [B, 64, S],
the output [B, T, 32] with T = ((S-3)/2 - 3)/2 frames.

Usage: make-deepspeech-model.py OUT.onnx [IO.npz [B S]]
IO.npz, when given, gets a random input of B x 64 x S frames (1 x 64 x 100
by default) and the model's output computed by torch, as `tract run
--input-from-bundle` reads it.
"""
import sys

import numpy as np
import torch


class DeepSpeechLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(64)
        self.conv1 = torch.nn.Conv1d(64, 128, 3, stride=2)
        self.conv2 = torch.nn.Conv1d(128, 128, 5)
        self.pool = torch.nn.MaxPool1d(2)
        self.gru = torch.nn.GRU(128, 256, num_layers=2, batch_first=True)
        self.linear = torch.nn.Linear(256, 32)

    def forward(self, x):
        x = self.bn(x)
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = self.pool(x)
        x, _ = self.gru(x.transpose(1, 2))
        return self.linear(x)


def main():
    torch.manual_seed(0)
    model = DeepSpeechLike()
    # Calibrated-looking batch-norm statistics, so that folding them matters.
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
        model.bn.weight.uniform_(0.5, 1.5)
        model.bn.bias.uniform_(-0.2, 0.2)
    model.eval()
    example = torch.randn(1, 64, 100)
    torch.onnx.export(model, (example,), sys.argv[1], input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "B", 2: "S"}, "y": {0: "B", 1: "T"}})
    if len(sys.argv) > 2:
        batch, frames = (int(sys.argv[3]), int(sys.argv[4])) \
            if len(sys.argv) > 4 else (1, 100)
        x = torch.randn(batch, 64, frames)
        with torch.no_grad():
            y = model(x)
        np.savez(sys.argv[2], x=x.numpy(), y=y.numpy())


if __name__ == "__main__":
    main()

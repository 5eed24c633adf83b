"""Writes `tests/onnx/torch_block.onnx`: a small attention block exported by PyTorch
(`torch.onnx.export`), float64, fixed weights (seed 0). mad's tests import it and check its
derivative models in ONNX Runtime; the file is committed, so the tests need no PyTorch.

    python3 tests/onnx/torch_model.py [OUT.onnx]
"""
import os
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.v = torch.nn.Linear(d, d)
        self.norm = torch.nn.LayerNorm(d)
        self.out = torch.nn.Linear(d, 4)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.norm(x)
        attention = torch.softmax(self.q(h) @ self.k(h).transpose(-1, -2) * self.scale, dim=-1)
        mixed = attention @ self.v(h) + x
        return torch.tanh(self.out(torch.nn.functional.gelu(mixed, approximate="tanh"))).sum(dim=-2)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "torch_block.onnx")
    torch.manual_seed(0)
    model = Block().double().eval()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    torch.onnx.export(model, (x,), out, input_names=["x"], output_names=["y"], opset_version=17, dynamo=False)


if __name__ == "__main__":
    main()

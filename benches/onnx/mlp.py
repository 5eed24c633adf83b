"""Writes an MLP as an ONNX model: `layers` of MatMul + Add + Tanh (3 nodes each), width
`width`, float64, input `x` of shape [batch, width], output `y`; weights are initializers.

    python3 benches/onnx/mlp.py OUT.onnx NODES [--width 16] [--batch 1] [--seed 0]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(nodes, width=16, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    layers = max(1, nodes // 3)
    inits, graph_nodes = [], []
    h = "x"
    for i in range(layers):
        w = rng.standard_normal((width, width)) / np.sqrt(width)
        b = 0.1 * rng.standard_normal(width)
        inits += [numpy_helper.from_array(w, "W%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        out = "y" if i == layers - 1 else "h%d" % i
        graph_nodes += [
            helper.make_node("MatMul", [h, "W%d" % i], ["m%d" % i]),
            helper.make_node("Add", ["m%d" % i, "b%d" % i], ["a%d" % i]),
            helper.make_node("Tanh", ["a%d" % i], [out]),
        ]
        h = out
    graph = helper.make_graph(
        graph_nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [batch, width])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [batch, width])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("nodes", type=int)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    onnx.save(mlp(a.nodes, a.width, a.batch, a.seed), a.out)

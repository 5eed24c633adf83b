"""Writes the ONNX models of mad's derivative tests into a folder, one file per model,
each checked with `onnx.checker.check_model(full_check=True)`.

    python3 tests/onnx/models.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

rng = np.random.default_rng(7)


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, shape, dtype=np.float64):
    return numpy_helper.from_array((0.5 * rng.standard_normal(shape)).astype(dtype), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def mlp(elem=T.DOUBLE, dtype=np.float64):
    return ([helper.make_node("MatMul", ["x", "W0"], ["m0"]), helper.make_node("Add", ["m0", "b0"], ["a0"]),
             helper.make_node("Tanh", ["a0"], ["h0"]), helper.make_node("MatMul", ["h0", "W1"], ["m1"]),
             helper.make_node("Add", ["m1", "b1"], ["a1"]), helper.make_node("Tanh", ["a1"], ["y"])],
            [vi("x", elem, [2, 4])], [vi("y", elem, [2, 3])],
            [init("W0", [4, 5], dtype), init("b0", [5], dtype), init("W1", [5, 3], dtype), init("b1", [3], dtype)])


MODELS = {
    "mlp": lambda: model("mlp", *mlp()),
    "mlp_f32": lambda: model("mlp_f32", *mlp(T.FLOAT, np.float32)),
    "gemm": lambda: model("gemm", [
        helper.make_node("Gemm", ["x", "W", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Sigmoid", ["g"], ["y"])],
        [vi("x", T.DOUBLE, [3, 4])], [vi("y", T.DOUBLE, [3, 5])], [init("W", [5, 4]), init("c", [5])]),
    "broadcast": lambda: model("broadcast", [
        helper.make_node("Mul", ["x", "v"], ["xv"]), helper.make_node("Sub", ["xv", "s"], ["d"]),
        helper.make_node("Exp", ["d"], ["e"]), helper.make_node("Abs", ["x"], ["ax"]),
        helper.make_node("Add", ["ax", "one"], ["den"]), helper.make_node("Div", ["e", "den"], ["y"]),
        helper.make_node("ReduceSum", ["y", "axis1"], ["z"], keepdims=0)],
        [vi("x", T.DOUBLE, [2, 3]), vi("v", T.DOUBLE, [3]), vi("s", T.DOUBLE, [])],
        [vi("y", T.DOUBLE, [2, 3]), vi("z", T.DOUBLE, [2])],
        [numpy_helper.from_array(np.array(1.0), "one"), ints("axis1", [1])]),
    "shapes": lambda: model("shapes", [
        helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Sin", ["r"], ["s"]),
        helper.make_node("ReduceMean", ["s"], ["m"], axes=[0], keepdims=1),
        helper.make_node("Mul", ["r", "m"], ["p"]), helper.make_node("Flatten", ["p"], ["f"], axis=1),
        helper.make_node("Unsqueeze", ["f", "axis0"], ["u"]), helper.make_node("Squeeze", ["u", "axis0"], ["q"]),
        helper.make_node("Cos", ["x"], ["c"]), helper.make_node("Mul", ["c", "x"], ["y3"]),
        helper.make_node("Identity", ["q"], ["y"])],
        [vi("x", T.DOUBLE, [2, 3, 2])], [vi("y", T.DOUBLE, [6, 2]), vi("y3", T.DOUBLE, [2, 3, 2])],
        [ints("shape", [-1, 2]), ints("axis0", [0])]),
    "vectors": lambda: model("vectors", [
        helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Relu", ["xw"], ["r"]),
        helper.make_node("Sigmoid", ["xw"], ["sp"]), helper.make_node("Max", ["r", "sp"], ["mx"]),
        helper.make_node("Pow", ["x", "two"], ["x2"]), helper.make_node("Add", ["x2", "one"], ["x21"]),
        helper.make_node("Sqrt", ["x21"], ["sq"]), helper.make_node("MatMul", ["sq", "x"], ["dot"]),
        helper.make_node("Mul", ["mx", "dot"], ["y"]), helper.make_node("Min", ["x", "sq"], ["mn"]),
        helper.make_node("Tanh", ["mn"], ["z"])],
        [vi("x", T.DOUBLE, [4])], [vi("y", T.DOUBLE, [3]), vi("z", T.DOUBLE, [4])],
        [init("W", [4, 3]), numpy_helper.from_array(np.array(2.0), "two"),
         numpy_helper.from_array(np.array(1.0), "one")]),
    "variadic": lambda: model("variadic", [
        helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Reciprocal", ["x"], ["rc"]),
        helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Log", ["e"], ["le"]),
        helper.make_node("Sum", ["n", "rc", "le", "k"], ["s"]), helper.make_node("Sum", ["s", "x"], ["y"]),
        helper.make_node("Cast", ["i"], ["fi"], to=T.DOUBLE), helper.make_node("Mul", ["y", "fi"], ["yi"]),
        helper.make_node("ReduceSum", ["yi"], ["total"], keepdims=0)],
        [vi("x", T.DOUBLE, [3]), vi("k", T.DOUBLE, [3]), vi("i", T.INT64, [3])],
        [vi("y", T.DOUBLE, [3]), vi("total", T.DOUBLE, [])]),
    "batched": lambda: model("batched", [
        helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Tanh", ["h"], ["t"]),
        helper.make_node("Transpose", ["t"], ["p"], perm=[0, 2, 1]), helper.make_node("MatMul", ["p", "x"], ["q"]),
        helper.make_node("MatMul", ["q", "v"], ["y"]), helper.make_node("Transpose", ["x"], ["xt"], perm=[2, 0, 1]),
        helper.make_node("Transpose", ["xt"], ["xs"], perm=[1, 0, 2]), helper.make_node("MatMul", ["v", "xs"], ["z"])],
        [vi("x", T.DOUBLE, [2, 3, 4]), vi("v", T.DOUBLE, [4])],
        [vi("y", T.DOUBLE, [2, 5]), vi("z", T.DOUBLE, [2, 3])], [init("W", [4, 5])]),
    "nn": lambda: model("nn", [
        helper.make_node("Softmax", ["x"], ["sm"], axis=1), helper.make_node("LogSoftmax", ["x"], ["ls"], axis=0),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-3),
        helper.make_node("Add", ["sm", "ls"], ["s1"]), helper.make_node("Mul", ["s1", "ln"], ["y"]),
        helper.make_node("ReduceMax", ["x", "axis1"], ["rmax"], keepdims=1),
        helper.make_node("ReduceMin", ["x", "axis0"], ["rmin"], keepdims=0),
        helper.make_node("ReduceLogSumExp", ["x", "axis1"], ["rlse"], keepdims=0),
        helper.make_node("ReduceL2", ["x", "axis0"], ["rl2"], keepdims=0),
        helper.make_node("ReduceSumSquare", ["x"], ["rss"], keepdims=1),
        helper.make_node("ReduceMean", ["x", "axis1"], ["rmean"], keepdims=0),
        helper.make_node("Clip", ["x", "lo", "hi"], ["cl"]), helper.make_node("Sign", ["x"], ["sg"]),
        helper.make_node("Mul", ["cl", "rmax"], ["c1"]), helper.make_node("Add", ["c1", "rss"], ["c2"]),
        helper.make_node("Mul", ["c2", "sg"], ["z"]), helper.make_node("Add", ["rmin", "rl2"], ["w0"]),
        helper.make_node("Mul", ["rlse", "rmean"], ["w1"]), helper.make_node("ReduceSum", ["w1"], ["w1s"], keepdims=0),
        helper.make_node("Add", ["w0", "w1s"], ["w"])],
        [vi("x", T.DOUBLE, [3, 4])],
        [vi("y", T.DOUBLE, [3, 4]), vi("z", T.DOUBLE, [3, 4]), vi("w", T.DOUBLE, [4])],
        [init("gamma", [4]), init("beta", [4]), ints("axis0", [0]), ints("axis1", [1]),
         numpy_helper.from_array(np.array(-0.3), "lo"), numpy_helper.from_array(np.array(0.4), "hi")], opset=18),
    "activations": lambda: model("activations", [
        helper.make_node("LeakyRelu", ["x"], ["a1"], alpha=0.1), helper.make_node("Elu", ["x"], ["a2"], alpha=0.7),
        helper.make_node("Selu", ["x"], ["a3"]), helper.make_node("Celu", ["x"], ["a4"], alpha=1.3),
        helper.make_node("HardSigmoid", ["x"], ["a5"], alpha=0.3, beta=0.4), helper.make_node("HardSwish", ["x"], ["a6"]),
        helper.make_node("Softsign", ["x"], ["a7"]), helper.make_node("ThresholdedRelu", ["x"], ["a8"], alpha=0.2),
        helper.make_node("PRelu", ["x", "slope"], ["a9"]), helper.make_node("Gelu", ["x"], ["a10"]),
        helper.make_node("Gelu", ["x"], ["a11"], approximate="tanh"), helper.make_node("Mish", ["x"], ["a12"]),
        helper.make_node("Sum", ["a1", "a2", "a3", "a4", "a5", "a6"], ["s1"]),
        helper.make_node("Sum", ["a7", "a8", "a9", "a10", "a11", "a12"], ["s2"]),
        helper.make_node("Mul", ["s1", "s2"], ["y"])],
        [vi("x", T.FLOAT, [2, 5])], [vi("y", T.FLOAT, [2, 5])],
        [init("slope", [5], np.float32)], opset=20),
    "layout": lambda: model("layout", [
        helper.make_node("Slice", ["x", "s0", "e0", "a0", "st0"], ["sl"]),
        helper.make_node("Split", ["x", "sizes"], ["p1", "p2"], axis=1),
        helper.make_node("Tile", ["p1", "reps"], ["tl"]),
        helper.make_node("Pad", ["p2", "pads", "pv"], ["pd"], mode="constant"),
        helper.make_node("CumSum", ["x", "ax1"], ["cs"], reverse=1),
        helper.make_node("CumSum", ["x", "ax0"], ["ce"], exclusive=1),
        helper.make_node("Dropout", ["cs"], ["dr"]),
        helper.make_node("Mul", ["dr", "ce"], ["y"]),
        helper.make_node("Sin", ["sl"], ["z"]), helper.make_node("Mul", ["tl", "tl"], ["w"]),
        helper.make_node("Exp", ["pd"], ["v"])],
        [vi("x", T.DOUBLE, [3, 4])],
        [vi("y", T.DOUBLE, [3, 4]), vi("z", T.DOUBLE, [2, 2]), vi("w", T.DOUBLE, [3, 2]),
         vi("v", T.DOUBLE, [4, 5])],
        [ints("s0", [2, 0]), ints("e0", [-4, 4]), ints("a0", [0, 1]), ints("st0", [-2, 2]),
         ints("sizes", [1, 3]), ints("reps", [1, 2]), ints("pads", [1, 0, 0, 2]),
         numpy_helper.from_array(np.array(0.25), "pv"), ints("ax1", [1]), ints("ax0", [0])], opset=18),
    "constant_if": lambda: model("constant_if", [
        helper.make_node("If", ["c"], ["b"], then_branch=helper.make_graph(
            [helper.make_node("Mul", ["x", "x"], ["t"]), helper.make_node("Sin", ["t"], ["r"])], "then", [],
            [vi("r", T.DOUBLE, [3])]), else_branch=helper.make_graph(
            [helper.make_node("Neg", ["x"], ["r2"])], "else", [], [vi("r2", T.DOUBLE, [3])])),
        helper.make_node("Exp", ["b"], ["y"])],
        [vi("x", T.DOUBLE, [3])], [vi("y", T.DOUBLE, [3])], [numpy_helper.from_array(np.array(True), "c")]),
    # A branch on a value computed from the input: one model takes each branch at the
    # checker's point.
    **{name: (lambda compare: lambda: model("if_" + compare.lower(), [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node(compare, ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["b"], then_branch=helper.make_graph(
            [helper.make_node("Mul", ["x", "x"], ["t"]), helper.make_node("Sin", ["t"], ["r"])], "then", [],
            [vi("r", T.DOUBLE, [3])]), else_branch=helper.make_graph(
            [helper.make_node("Neg", ["x"], ["r2"]), helper.make_node("Mul", ["r2", "w"], ["r3"])], "else", [],
            [vi("r3", T.DOUBLE, [3])])),
        helper.make_node("Exp", ["b"], ["y"])],
        [vi("x", T.DOUBLE, [3]), vi("w", T.DOUBLE, [3])], [vi("y", T.DOUBLE, [3])],
        [numpy_helper.from_array(np.array(0.0), "zero")]))(compare)
       for name, compare in [("if_greater", "Greater"), ("if_less", "Less")]},
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in MODELS.items():
        onnx.save(make(), os.path.join(out, name + ".onnx"))
        print(name)
    # The MLP again, its weights in an external data file beside it.
    onnx.save(MODELS["mlp"](), os.path.join(out, "mlp_external.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="mlp_external.data", size_threshold=0)
    print("mlp_external")

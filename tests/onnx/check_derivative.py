"""Checks a derivative model written by `madc onnx forward|reverse` with ONNX Runtime,
against central finite differences of the primal model (also run by ONNX Runtime): the
reference knows nothing of mad's rules.

    python3 tests/onnx/check_derivative.py PRIMAL DERIVATIVE --mode reverse|forward
        [--layout casadi|onnx] [--prefix P] [--seeds K] [--inputs X…] [--outputs Y…]
    python3 tests/onnx/check_derivative.py --batch FILE   (one such command line per line)

Exits 0 and prints `ok <max error>` when every derivative output matches; 1 otherwise.
"""
import argparse
import sys

import numpy as np
import onnx
import onnxruntime as ort

FLOAT = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64}
NUMPY = {**FLOAT, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.BOOL: np.bool_}


def shape_of(value, symbolic=2):
    """A concrete shape: a symbolic extent is `symbolic`, times c for CasADi's packed `n_x<c>`."""
    def extent(d):
        if d.HasField("dim_value"):
            return d.dim_value
        tail = d.dim_param.rsplit("_x", 1)
        return symbolic * int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else symbolic
    return [extent(d) for d in value.type.tensor_type.shape.dim]


ort.set_default_logger_severity(3)


def session(model):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def to_layout(internal, layout):
    """[k, *shape] -> the seed layout."""
    k, shape = internal.shape[0], internal.shape[1:]
    if layout == "onnx":
        return np.moveaxis(internal, 0, -1)
    if len(shape) == 0:
        return internal.reshape(1, k)
    if len(shape) == 1:
        return internal.T
    if len(shape) == 2:
        return np.transpose(internal, (1, 0, 2)).reshape(shape[0], -1)
    return internal.reshape(k, -1).T


def from_layout(value, shape, layout):
    """The seed layout -> [k, *shape]."""
    if layout == "onnx":
        return np.moveaxis(value, -1, 0)
    if len(shape) == 0:
        return value.reshape(-1)
    if len(shape) == 1:
        return value.T
    if len(shape) == 2:
        return np.transpose(value.reshape(shape[0], -1, shape[1]), (1, 0, 2))
    return value.T.reshape([-1] + list(shape))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("primal")
    p.add_argument("derivative")
    p.add_argument("--mode", choices=["forward", "reverse"], required=True)
    p.add_argument("--layout", choices=["casadi", "onnx"], default="casadi")
    p.add_argument("--prefix")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--inputs", nargs="+")
    p.add_argument("--outputs", nargs="+")
    p.add_argument("--tol", type=float)
    a = p.parse_args(argv)
    primal, deriv = onnx.load(a.primal), onnx.load(a.derivative)
    onnx.checker.check_model(deriv, full_check=True)
    prefix = a.prefix or ("adj_" if a.mode == "reverse" else "fwd_")
    inits = {t.name for t in primal.graph.initializer}
    inputs = [v for v in primal.graph.input if v.name not in inits]
    rng = np.random.default_rng(1)
    feeds = {}
    for v in inputs:
        dtype = NUMPY[v.type.tensor_type.elem_type]
        if dtype in (np.float32, np.float64):
            feeds[v.name] = np.asarray(0.5 * rng.standard_normal(shape_of(v))).astype(dtype)
        elif dtype == np.bool_:
            feeds[v.name] = rng.standard_normal(shape_of(v)) > 0
        else:
            feeds[v.name] = rng.integers(0, 2, shape_of(v)).astype(dtype)
    xs = [v for v in inputs if v.type.tensor_type.elem_type in FLOAT and (a.inputs is None or v.name in a.inputs)]
    outputs = list(primal.graph.output)
    ys = [v for v in outputs if v.type.tensor_type.elem_type in FLOAT and (a.outputs is None or v.name in a.outputs)]
    if a.inputs:
        xs = [next(v for v in xs if v.name == n) for n in a.inputs]
    if a.outputs:
        ys = [next(v for v in ys if v.name == n) for n in a.outputs]
    single = any(v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT for v in xs + ys)
    tol = a.tol or (2e-2 if single else 1e-6)

    run = session(primal)
    names = [v.name for v in outputs]
    base = dict(zip(names, run.run(names, feeds)))

    def evaluate(name, flat_index, step):
        shifted = dict(feeds)
        x = feeds[name].astype(np.float64).copy()
        x.reshape(-1)[flat_index] += step
        shifted[name] = x.astype(feeds[name].dtype)
        return dict(zip(names, run.run(names, shifted)))

    # J[y][x]: [numel(y), numel(x)] by central differences.
    jac = {}
    for x in xs:
        n = feeds[x.name].size
        h = 1e-3 if feeds[x.name].dtype == np.float32 else 1e-6
        for i in range(n):
            up, down = evaluate(x.name, i, h), evaluate(x.name, i, -h)
            for y in ys:
                col = ((up[y.name].astype(np.float64) - down[y.name].astype(np.float64)) / (2 * h)).reshape(-1)
                jac.setdefault((y.name, x.name), np.zeros((col.size, n)))[:, i] = col

    k = a.seeds
    seeded = ys if a.mode == "reverse" else xs
    seeds, dfeeds = {}, dict(feeds)
    for v in seeded:
        shape = list(base[v.name].shape) if a.mode == "reverse" else list(feeds[v.name].shape)
        s = rng.standard_normal([k] + shape).astype(FLOAT[v.type.tensor_type.elem_type])
        seeds[v.name] = s
        dfeeds[prefix + v.name] = to_layout(s, a.layout)
    dnames = [o.name for o in deriv.graph.output]
    got = dict(zip(dnames, session(deriv).run(dnames, dfeeds)))
    worst = 0.0
    for y in outputs:
        err = np.max(np.abs(got[y.name].astype(np.float64) - base[y.name].astype(np.float64)), initial=0.0)
        if err > tol:
            print("primal output %s differs by %g" % (y.name, err))
            return 1
    results = xs if a.mode == "reverse" else ys
    for v in results:
        shape = list(feeds[v.name].shape) if a.mode == "reverse" else list(base[v.name].shape)
        value = from_layout(got[prefix + v.name], shape, a.layout).reshape(k, -1).astype(np.float64)
        want = np.zeros_like(value)
        for s in range(k):
            if a.mode == "reverse":
                for y in ys:
                    want[s] += jac[(y.name, v.name)].T @ seeds[y.name][s].reshape(-1)
            else:
                for x in xs:
                    want[s] += jac[(v.name, x.name)] @ seeds[x.name][s].reshape(-1)
        scale = max(1.0, np.max(np.abs(want), initial=0.0))
        err = np.max(np.abs(value - want), initial=0.0) / scale
        worst = max(worst, err)
        if not err <= tol:
            print("%s%s differs from finite differences by %g (relative)" % (prefix, v.name, err))
            return 1
    print("ok %.3g" % worst)
    return 0


def batch(path):
    """Runs the checks listed in `path`, one command line per line; returns 1 if any fails."""
    failed = 0
    for line in open(path):
        if line.strip():
            print(line.strip(), end=": ", flush=True)
            failed |= main(line.split())
    return failed


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        sys.exit(batch(sys.argv[2]))
    sys.exit(main())

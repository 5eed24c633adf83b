"""mad against onnx-ad on generated MLPs (MatMul + Add + Tanh, width 16, float64): whole-process
wall time of `madc onnx reverse|forward|family` and `onnx-ad reverse|forward|family` on the same
file (interleaved runs, median), node counts of the models written (for `family`, of
`fwd_adj_f.onnx`), and ONNX Runtime's run time of each (median over evaluations, one seed
direction).

    python3 benches/onnx/compare.py [--madc target/release/madc] [--nodes 1000 3000] [--runs 5]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)

sys.path.insert(0, os.path.dirname(__file__))
from mlp import mlp  # noqa: E402


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def ort_time(path, runs=200):
    model = onnx.load(path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {}
    for v in s.get_inputs():
        # one seed direction: a packed CasADi dimension `nadj_x<c>` is then c
        shape = [d if isinstance(d, int) else int(d.rsplit("_x", 1)[1]) if "_x" in d else 1 for d in v.shape]
        feeds[v.name] = np.random.default_rng(0).standard_normal(shape)
    s.run(None, feeds)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, feeds)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--madc", default="target/release/madc")
    p.add_argument("--nodes", type=int, nargs="+", default=[1000, 3000])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--modes", nargs="+", default=["reverse", "forward", "family"])
    a = p.parse_args()
    tmp = tempfile.mkdtemp()
    print("| nodes | pass | mad (s) | onnx-ad (s) | onnx-ad / mad | nodes mad | nodes onnx-ad | ORT mad (µs) | ORT onnx-ad (µs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in a.nodes:
        primal = os.path.join(tmp, "mlp%d.onnx" % n)
        onnx.save(mlp(n), primal)
        primal_nodes = len(onnx.load(primal).graph.node)
        for mode in a.modes:
            if mode == "family":
                # the primal goes to DIR/f.onnx; the model counted and run is fwd_adj_f.onnx
                dirs = {t: os.path.join(tmp, "%s_family_%d" % (t, n)) for t in ("mad", "onnx-ad")}
                outs = {t: os.path.join(d, "fwd_adj_f.onnx") for t, d in dirs.items()}
                cmds = {"mad": [a.madc, "onnx", "family", primal, os.path.join(dirs["mad"], "f.onnx")],
                        "onnx-ad": [sys.executable, "-m", "onnx_ad", "family", primal,
                                    os.path.join(dirs["onnx-ad"], "f.onnx")]}
            else:
                outs = {"mad": os.path.join(tmp, "mad_%s_%d.onnx" % (mode, n)),
                        "onnx-ad": os.path.join(tmp, "ad_%s_%d.onnx" % (mode, n))}
                cmds = {"mad": [a.madc, "onnx", mode, primal, outs["mad"]],
                        "onnx-ad": [sys.executable, "-m", "onnx_ad", mode, primal, outs["onnx-ad"]]}
            times = {"mad": [], "onnx-ad": []}
            for _ in range(a.runs):
                for tool in ("mad", "onnx-ad"):
                    times[tool].append(wall(cmds[tool]))
            med = {t: statistics.median(v) for t, v in times.items()}
            nodes = {t: len(onnx.load(o).graph.node) for t, o in outs.items()}
            run = {t: ort_time(o) * 1e6 for t, o in outs.items()}
            print("| %d | %s | %.4f | %.3f | %.1f | %d (%.1f×) | %d (%.1f×) | %.0f | %.0f |" % (
                primal_nodes, mode, med["mad"], med["onnx-ad"], med["onnx-ad"] / med["mad"],
                nodes["mad"], nodes["mad"] / primal_nodes, nodes["onnx-ad"],
                nodes["onnx-ad"] / primal_nodes, run["mad"], run["onnx-ad"]), flush=True)


if __name__ == "__main__":
    main()

"""onnx-ad's own test suite (from its sdist) run with mad's `forward` and `reverse` in place of
onnx-ad's: each derivative model its tests check (against finite differences, analytic
Jacobians and forward-against-reverse, in ONNX Runtime) is written by `madc onnx
forward|reverse`. Prints, per test module, how many of its tests pass, and why the others fail.

    pip download onnx-ad==0.3.0 --no-deps --no-binary :all: -d /tmp/onnxad && tar xzf /tmp/onnxad/onnx_ad-0.3.0.tar.gz -C /tmp
    python3 benches/onnx/onnxad_suite.py /tmp/onnx_ad-0.3.0/tests target/release/madc [MODULE…]
"""
import os
import subprocess
import sys
import tempfile
import unittest

import onnx

tests_dir, madc = sys.argv[1], os.path.abspath(sys.argv[2])
sys.path.insert(0, tests_dir)
tmp = tempfile.mkdtemp()
counter = [0]


def via_madc(kind):
    def derive(model, inputs=None, outputs=None, prefix=None, dim=None, layout="casadi"):
        counter[0] += 1
        src = os.path.join(tmp, "m%d.onnx" % counter[0])
        out = os.path.join(tmp, "d%d.onnx" % counter[0])
        onnx.save(model, src)
        cmd = [madc, "onnx", kind, src, out, "--layout", layout]
        if inputs:
            cmd += ["--inputs"] + list(inputs)
        if outputs:
            cmd += ["--outputs"] + list(outputs)
        if prefix:
            cmd += ["--prefix", prefix]
        if dim:
            cmd += ["--dim", dim]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("madc: " + r.stderr.strip())
        return onnx.load(out)
    return derive


import importlib  # noqa: E402

import onnxruntime  # noqa: E402

onnxruntime.set_default_logger_severity(3)

modules = sys.argv[3:] or ["test_ad", "test_more_ops", "test_control", "test_functions", "test_recurrent"]
for name in modules:
    module = importlib.import_module(name)
    for attr in ("forward", "reverse"):
        if hasattr(module, attr):
            setattr(module, attr, via_madc(attr))
    if hasattr(module, "assert_closed"):
        module.assert_closed = lambda derivative: None
    # helpers imported from test_ad by the other modules
    import test_ad
    test_ad.forward, test_ad.reverse = via_madc("forward"), via_madc("reverse")
    test_ad.assert_closed = lambda derivative: None
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    result = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, "w")).run(suite)
    failed = {getattr(t, "test_case", t).id() for t, _ in result.failures + result.errors}
    print("%s: %d of %d tests pass" % (name, result.testsRun - len(failed), result.testsRun))
    reasons = {}
    for test, trace in result.errors + result.failures:
        line = [l for l in trace.strip().splitlines() if l.strip()][-1][:150]
        reasons.setdefault(line, []).append(test.id().split(".")[-1])
    for line, tests in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print("  %3d  %s   e.g. %s" % (len(tests), line, tests[0]))

"""Shared by the ADBench jax scripts: jax on the CPU in float64, and the median time of
repeated calls after a warm-up call (which compiles)."""

import time

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")


def median_time(f, *args, reps):
    jax.block_until_ready(f(*args))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))

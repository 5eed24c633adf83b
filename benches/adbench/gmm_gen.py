"""Makes a GMM problem (ADBench's shapes: d points' dimension, k components, n points) as
.npy files PREFIX_{alphas,means,icf,x}.npy, deterministic for a given (d, k, n)."""

import sys

import numpy as np


def main():
    prefix = sys.argv[1]
    d, k, n = (int(a) for a in sys.argv[2:5])
    rng = np.random.default_rng(d * 1_000_003 + k * 1009 + n)
    icf_len = d + d * (d - 1) // 2
    np.save(f"{prefix}_alphas.npy", rng.standard_normal(k))
    np.save(f"{prefix}_means.npy", rng.random((k, d)))
    np.save(f"{prefix}_icf.npy", rng.random((k, icf_len)) * 0.5)
    np.save(f"{prefix}_x.npy", rng.random((n, d)))


if __name__ == "__main__":
    main()

"""Makes a GMM problem (ADBench's shapes: d the points' dimension, k components, n points) as
an instance file in ADBench's text format, PREFIX.txt: `d k n`, the k alphas, the k×d means,
the k×d(d+1)/2 icf rows, the n×d points (all of them, not one standing for all), and the
Wishart prior's `gamma m` (1.0 0). Deterministic for a given (d, k, n). `madc adbench gmm
PREFIX.txt` turns it into the .npy arguments of gmm.mad (PREFIX_alphas.npy, ...)."""

import sys

import numpy as np


def main():
    prefix = sys.argv[1]
    d, k, n = (int(a) for a in sys.argv[2:5])
    rng = np.random.default_rng(d * 1_000_003 + k * 1009 + n)
    icf_len = d + d * (d - 1) // 2
    alphas = rng.standard_normal(k)
    means = rng.random((k, d))
    icf = rng.random((k, icf_len)) * 0.5
    x = rng.random((n, d))
    # repr() of a float reads back as the same float.
    row = lambda xs: " ".join(repr(float(v)) for v in xs)
    with open(f"{prefix}.txt", "w") as f:
        f.write(f"{d} {k} {n}\n")
        f.writelines(f"{a!r}\n" for a in map(float, alphas))
        f.writelines(row(r) + "\n" for r in means)
        f.writelines(row(r) + "\n" for r in icf)
        f.writelines(row(r) + "\n" for r in x)
        f.write("1.0 0\n")


if __name__ == "__main__":
    main()

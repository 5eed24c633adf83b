"""Makes a bundle-adjustment problem of ADBench's shape (n cameras, m points, p
observations; observation i sees point i % m from camera i % n) as .npy files
PREFIX_{cams,x,w,obs,feats}.npy, deterministic for a given (n, m, p).

cams: n×11 rows [r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2] (angle-axis rotation, camera centre,
focal length, principal point, radial distortion); x: m×3 points; w: p weights; obs: p×2
(camera, point) indices as int64; feats: p×2 measured image coordinates. Camera 0 has a
zero rotation, so the first-order branch of the Rodrigues rotation is exercised too. The
cameras look along +z at points near the origin, so every projection is well defined."""

import sys

import numpy as np


def main():
    prefix = sys.argv[1]
    n, m, p = (int(a) for a in sys.argv[2:5])
    rng = np.random.default_rng(n * 1_000_003 + m * 1009 + p)
    cams = np.empty((n, 11))
    cams[:, 0:3] = 0.3 * rng.standard_normal((n, 3))
    cams[0, 0:3] = 0.0
    cams[:, 3:5] = 0.5 * rng.standard_normal((n, 2))
    cams[:, 5] = -10.0 + 0.5 * rng.standard_normal(n)
    cams[:, 6] = 400.0 + 50.0 * rng.random(n)
    cams[:, 7:9] = 5.0 * rng.standard_normal((n, 2))
    cams[:, 9] = 0.1 * rng.random(n)
    cams[:, 10] = 0.01 * rng.random(n)
    x = rng.uniform(-1.0, 1.0, (m, 3))
    w = rng.uniform(0.3, 1.0, p)
    i = np.arange(p, dtype=np.int64)
    obs = np.stack([i % n, i % m], axis=1)
    feats = rng.uniform(-60.0, 60.0, (p, 2))
    for name, a in (("cams", cams), ("x", x), ("w", w), ("obs", obs), ("feats", feats)):
        np.save(f"{prefix}_{name}.npy", a)


if __name__ == "__main__":
    main()

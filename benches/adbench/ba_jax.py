"""ADBench's bundle-adjustment objective and its sparse Jacobian in jax (CPU, float64,
jit): the reference the mad benchmark runs beside. Reads the same .npy files as `ba.mad`
(see run_ba.sh). The objective is the residual vector (2p reprojection errors, then p
weight errors); the Jacobian is that of the per-observation function, as ADBench's
PyTorch port takes it (one observation at a time there), batched here with `vmap`: `vmap`
of `jacfwd` (forward mode; or `jacrev` with the argument `rev`), laid out as `ba.mad`'s
p×31 matrix. Usage: ba_jax.py PREFIX REPS [fwd|rev].
Prints `objective <sum of squares> <seconds>` and `jacobian <sum of |entries|> <seconds>`,
each time the median of repeated calls after a warm-up (compilation excluded)."""

import sys

import numpy as np

import jax
import jax.numpy as jnp

from jax_timing import median_time


def rodrigues_rotate_point(rot, x):
    sqtheta = jnp.sum(rot * rot)
    nonzero = sqtheta != 0.0
    # Both branches are evaluated; the angle is taken of 1 where it is 0, so that the
    # branch not taken has finite derivatives.
    theta = jnp.sqrt(jnp.where(nonzero, sqtheta, 1.0))
    costheta = jnp.cos(theta)
    sintheta = jnp.sin(theta)
    w = rot * (1.0 / theta)
    tmp = jnp.dot(w, x) * (1.0 - costheta)
    rotated = x * costheta + jnp.cross(w, x) * sintheta + w * tmp
    return jnp.where(nonzero, rotated, x + jnp.cross(rot, x))


def project(cam, x):
    xcam = rodrigues_rotate_point(cam[0:3], x - cam[3:6])
    p = xcam[0:2] / xcam[2]
    rsq = jnp.sum(p * p)
    l = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    return p * l * cam[6] + cam[7:9]


def reproj_error(cam, x, w, feat):
    return w * (project(cam, x) - feat)


def weight_error(w):
    return 1.0 - w * w


def ba_objective(cams, x, w, obs, feats):
    r = jax.vmap(reproj_error)(cams[obs[:, 0]], x[obs[:, 1]], w, feats)
    return jnp.concatenate([r.reshape(-1), weight_error(w)])


def ba_jacobian(cams, x, w, obs, feats, jac=jax.jacfwd):
    jc, jx, jw = jax.vmap(jac(reproj_error, argnums=(0, 1, 2)))(cams[obs[:, 0]], x[obs[:, 1]], w, feats)
    block = jnp.concatenate([jc, jx, jw[:, :, None]], axis=2)  # p×2×15
    dw = jax.vmap(jax.grad(weight_error))(w)
    return jnp.concatenate([block.reshape(w.shape[0], 30), dw[:, None]], axis=1)


def main():
    prefix = sys.argv[1]
    reps = int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "fwd"
    jac_of = {"fwd": jax.jacfwd, "rev": jax.jacrev}[mode]
    cams, x, w, obs, feats = (np.load(f"{prefix}_{name}.npy") for name in ("cams", "x", "w", "obs", "feats"))
    obj = jax.jit(ba_objective)
    jac = jax.jit(lambda *a: ba_jacobian(*a, jac=jac_of))
    value = float(jnp.sum(obj(cams, x, w, obs, feats) ** 2))
    j1 = float(jnp.sum(jnp.abs(jac(cams, x, w, obs, feats))))
    t_obj = median_time(obj, cams, x, w, obs, feats, reps=reps)
    t_jac = median_time(jac, cams, x, w, obs, feats, reps=reps)
    print(f"objective {value!r} {t_obj}")
    print(f"jacobian {j1!r} {t_jac}")


if __name__ == "__main__":
    main()

"""ADBench's GMM objective and its gradient in jax (CPU, float64, jit): the reference the
mad benchmark runs beside. Reads the same .npy files as `gmm.mad` (`madc adbench gmm`'s
output, see run_gmm.sh; the Wishart prior gamma = 1, m = 0 as gmm_gen.py writes it) and
prints `objective <value> <seconds>` and `gradient <|g|_1> <seconds>`, each time the median
of repeated calls after a warm-up (compilation excluded)."""

import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln, logsumexp

from jax_timing import median_time


def log_gamma_distrib(a, p):
    return 0.25 * p * (p - 1) * np.log(np.pi) + sum(gammaln(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def qtimesx(qdiag, ltri, d, x):
    # out[b] = qdiag[b] x[b] + sum_{a<b} L[b,a] x[a], L's strict lower triangle column by column.
    out = qdiag * x
    t = 0
    for a in range(d):
        for b in range(a + 1, d):
            out = out.at[..., b].add(ltri[..., t] * x[..., a])
            t += 1
    return out


def gmm_objective(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    qdiag = jnp.exp(icf[:, :d])
    sum_qs = jnp.sum(icf[:, :d], axis=1)
    ltri = icf[:, d:]
    xc = x[:, None, :] - means[None, :, :]
    qx = qtimesx(qdiag[None, :, :], ltri[None, :, :], d, xc)
    main = alphas[None, :] + sum_qs[None, :] - 0.5 * jnp.sum(qx * qx, axis=2)
    slse = jnp.sum(logsumexp(main, axis=1))
    nn = d + m + 1
    c = nn * d * (jnp.log(gamma) - 0.5 * jnp.log(2.0)) - log_gamma_distrib(0.5 * nn, d)
    frob = jnp.sum(qdiag * qdiag, axis=1) + jnp.sum(ltri * ltri, axis=1)
    prior = jnp.sum(0.5 * gamma * gamma * frob - m * sum_qs) - k * c
    constant = -n * d * 0.5 * np.log(2 * np.pi)
    return constant + slse - n * logsumexp(alphas) + prior


def main():
    d, k, n, reps = (int(a) for a in sys.argv[2:6])
    prefix = sys.argv[1]
    alphas, means, icf, x = (np.load(f"{prefix}_{name}.npy") for name in ("alphas", "means", "icf", "x"))
    gamma, m = 1.0, 0
    obj = jax.jit(lambda a, mu, q, xx: gmm_objective(a, mu, q, xx, gamma, m))
    grad = jax.jit(jax.grad(lambda a, mu, q, xx: gmm_objective(a, mu, q, xx, gamma, m), argnums=(0, 1, 2)))
    value = float(obj(alphas, means, icf, x))
    g = grad(alphas, means, icf, x)
    g1 = float(sum(jnp.sum(jnp.abs(p)) for p in g))
    t_obj = median_time(obj, alphas, means, icf, x, reps=reps)
    t_grad = median_time(grad, alphas, means, icf, x, reps=reps)
    print(f"objective {value!r} {t_obj}")
    print(f"gradient {g1!r} {t_grad}")


if __name__ == "__main__":
    main()

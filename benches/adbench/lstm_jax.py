"""ADBench's LSTM objective and its gradient in jax (CPU, float64, jit): the reference the
mad benchmark runs beside. Reads the same .npy files as `lstm.mad` (see run_lstm.sh); the
time steps run in `lax.scan`, the layers in a Python loop (l is fixed per problem). Prints
`objective <value> <seconds>` and `gradient <|g|_1> <seconds>` (the gradient with respect
to the main and extra parameters), each time the median of repeated calls after a warm-up
(compilation excluded)."""

import sys

import numpy as np

import jax
import jax.numpy as jnp

from jax_timing import median_time


def lstm_model(weight, bias, hidden, cell, x):
    b = hidden.shape[0]
    gates = jnp.concatenate([x, hidden, x, hidden]) * weight + bias
    forget = jax.nn.sigmoid(gates[0:b])
    ingate = jax.nn.sigmoid(gates[b:2 * b])
    outgate = jax.nn.sigmoid(gates[2 * b:3 * b])
    change = jnp.tanh(gates[3 * b:])
    cell = cell * forget + ingate * change
    hidden = outgate * jnp.tanh(cell)
    return hidden, cell


def lstm_objective(main_params, extra_params, state, seq):
    l = main_params.shape[0] // 2

    def step(s, xs):
        x, ygold = xs
        x = x * extra_params[0]
        new = []
        for k in range(l):
            hidden, cell = lstm_model(main_params[2 * k], main_params[2 * k + 1], s[2 * k], s[2 * k + 1], x)
            new += [hidden, cell]
            x = hidden
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
        return jnp.stack(new), jnp.sum(ygold * ynorm)

    _, totals = jax.lax.scan(step, state, (seq[:-1], seq[1:]))
    return -jnp.sum(totals) / ((seq.shape[0] - 1) * seq.shape[1])


def main():
    prefix = sys.argv[1]
    reps = int(sys.argv[2])
    args = [np.load(f"{prefix}_{name}.npy") for name in ("main_params", "extra_params", "state", "sequence")]
    obj = jax.jit(lstm_objective)
    grad = jax.jit(jax.grad(lstm_objective, argnums=(0, 1)))
    value = float(obj(*args))
    g1 = float(sum(jnp.sum(jnp.abs(p)) for p in grad(*args)))
    t_obj = median_time(obj, *args, reps=reps)
    t_grad = median_time(grad, *args, reps=reps)
    print(f"objective {value!r} {t_obj}")
    print(f"gradient {g1!r} {t_grad}")


if __name__ == "__main__":
    main()

"""Makes an LSTM problem of ADBench's shape (l layers, c characters, b = 14 bits per
character) as an instance file in ADBench's text format, PREFIX.txt (`l c b`, then the main
parameters, the extra parameters, the state and the sequence, one row per line),
deterministic for a given (l, c, b). `madc adbench lstm PREFIX.txt` turns it into the .npy
arguments of lstm.mad (PREFIX_main_params.npy, PREFIX_extra_params.npy, PREFIX_state.npy,
PREFIX_sequence.npy).

main: 2l×4b, per layer a row of weights and a row of biases, each the forget, input,
output and change gates' b entries in turn; extra: 3×b, the input weights, output weights
and output biases; state: 2l×b, per layer the hidden and the cell state; seq: c×b, each
row the bits of one character code (most significant first), as ADBench encodes text."""

import sys

import numpy as np


def main():
    prefix = sys.argv[1]
    l, c = (int(a) for a in sys.argv[2:4])
    b = int(sys.argv[4]) if len(sys.argv) > 4 else 14
    rng = np.random.default_rng(l * 1_000_003 + c * 1009 + b)
    main_params = rng.random((2 * l, 4 * b))
    extra = rng.random((3, b))
    state = rng.random((2 * l, b))
    codes = rng.integers(0, 2**b, c)
    seq = ((codes[:, None] >> np.arange(b - 1, -1, -1)[None, :]) & 1).astype(np.float64)
    # repr() of a float reads back as the same float.
    with open(f"{prefix}.txt", "w") as f:
        f.write(f"{l} {c} {b}\n")
        for a in (main_params, extra, state, seq):
            f.writelines(" ".join(repr(float(v)) for v in row) + "\n" for row in a)


if __name__ == "__main__":
    main()

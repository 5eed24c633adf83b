"""Prints one row of an ADBench table (run_gmm.sh, run_ba.sh, run_lstm.sh): the size
columns as given, mad's and jax's objective and derivative times (ms) and their ratios, and
whether mad's objective value and derivative checksum agree with jax's to 1e-10 relative.
Usage: table_row.py K SIZE_1 … SIZE_K MAD_OBJ MAD_DERIV JAX_OBJ JAX_DERIV MAD_VALUE JAX_VALUE
MAD_CHECKSUM JAX_CHECKSUM"""

import sys


def main():
    k = int(sys.argv[1])
    sizes = sys.argv[2:2 + k]
    mo, md, jo, jd, mv, jv, ml, jl = map(float, sys.argv[2 + k:])
    close = lambda a, b: abs(a - b) <= 1e-10 * max(1.0, abs(b))
    agree = "yes" if close(mv, jv) and close(ml, jl) else f"no: {mv} vs {jv}, checksum {ml} vs {jl}"
    cells = [*sizes, f"{mo:.3f}", f"{md:.3f}", f"{md / mo:.1f}", f"{jo:.3f}", f"{jd:.3f}", f"{jd / jo:.1f}", f"{mo / jo:.1f}", agree]
    print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

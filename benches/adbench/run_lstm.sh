#!/usr/bin/env bash
# ADBench-style LSTM benchmark: for each (l, c), makes the data (b = 14 bits per
# character) as an instance file in ADBench's text format (lstm_gen.py), converts it with
# `madc adbench lstm` to .npy files, then times mad's objective and gradient (`madc bench
# --entry`, median of runs) and jax's (CPU, float64, jit, median of runs) on those files,
# one after the other, and prints one row each.
# Needs a release madc (`cargo build --release -p mad`), python3 with numpy and jax[cpu].
# Usage: benches/adbench/run_lstm.sh [L:C ...]   (default: ADBench's 2:1024 2:4096 4:1024 4:4096)
# LSTM_PROGRAM=path/to/other.mad times another formulation (e.g. lstm_vectors.mad).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
madc="$here/../../target/release/madc"
program="${LSTM_PROGRAM:-$here/lstm.mad}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(2:1024 2:4096 4:1024 4:4096)
b=14
printf '| l | c | b | mad objective (ms) | mad gradient (ms) | mad ratio | jax objective (ms) | jax gradient (ms) | jax ratio | objective mad/jax | objective and gradient agree with jax |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for s in "${sizes[@]}"; do
  l=${s%%:*}; c=${s##*:}
  f="$work/l${l}c${c}"
  python3 "$here/lstm_gen.py" "$f" "$l" "$c" "$b"
  read -r -a args <<< "$("$madc" adbench lstm "$f.txt")"
  mo=$("$madc" bench --entry lstm_objective --runs 21 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mg=$("$madc" bench --entry lstm_gradient --runs 11 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mv=$("$madc" run --entry lstm_objective "$program" -- "${args[@]}")
  ml=$("$madc" run --entry lstm_gradient_l1 "$program" -- "${args[@]}")
  jx=$(python3 "$here/lstm_jax.py" "$f" 21)
  jv=$(echo "$jx" | awk '/^objective/ {print $2}')
  jl=$(echo "$jx" | awk '/^gradient/ {print $2}')
  jo=$(echo "$jx" | awk '/^objective/ {print $3 * 1000}')
  jg=$(echo "$jx" | awk '/^gradient/ {print $3 * 1000}')
  python3 "$here/table_row.py" 3 "$l" "$c" "$b" "$mo" "$mg" "$jo" "$jg" "$mv" "$jv" "$ml" "$jl"
done

#!/usr/bin/env bash
# ADBench-style GMM benchmark: for each (d, K), makes the data (n = 1000 points) as an
# instance file in ADBench's text format (gmm_gen.py), converts it with `madc adbench gmm` to
# .npy files, then times mad's objective and gradient (`madc bench --entry`, median of runs)
# and jax's (CPU, float64, jit, median of runs) on those files, one after the other, and
# prints one row each.
# Needs a release madc (`cargo build --release -p mad`), python3 with numpy and jax[cpu].
# Usage: benches/adbench/run_gmm.sh [D:K ...]   (default: 2:5 10:5 10:25 20:25)
# GMM_PROGRAM=path/to/other.mad times another formulation (e.g. gmm_vectors.mad).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
madc="$here/../../target/release/madc"
program="${GMM_PROGRAM:-$here/gmm.mad}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(2:5 10:5 10:25 20:25)
n=1000
printf '| d | K | n | mad objective (ms) | mad gradient (ms) | mad ratio | jax objective (ms) | jax gradient (ms) | jax ratio | objective mad/jax | objective and gradient agree with jax |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for s in "${sizes[@]}"; do
  d=${s%%:*}; k=${s##*:}
  p="$work/d${d}k${k}"
  python3 "$here/gmm_gen.py" "$p" "$d" "$k" "$n"
  read -r -a args <<< "$("$madc" adbench gmm "$p.txt")"
  mo=$("$madc" bench --entry gmm_objective --runs 21 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mg=$("$madc" bench --entry gmm_gradient --runs 11 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mv=$("$madc" run --entry gmm_objective "$program" -- "${args[@]}")
  ml=$("$madc" run --entry gmm_gradient_l1 "$program" -- "${args[@]}")
  jx=$(python3 "$here/gmm_jax.py" "$p" "$d" "$k" "$n" 21)
  jv=$(echo "$jx" | awk '/^objective/ {print $2}')
  jl=$(echo "$jx" | awk '/^gradient/ {print $2}')
  jo=$(echo "$jx" | awk '/^objective/ {print $3 * 1000}')
  jg=$(echo "$jx" | awk '/^gradient/ {print $3 * 1000}')
  python3 "$here/table_row.py" 3 "$d" "$k" "$n" "$mo" "$mg" "$jo" "$jg" "$mv" "$jv" "$ml" "$jl"
done

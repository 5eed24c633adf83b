#!/usr/bin/env bash
# ADBench-style bundle-adjustment benchmark: for each (n, m, p), makes the data, then times
# mad's objective (the residual vector) and sparse Jacobian (`madc bench --entry`, median of
# runs) and jax's (CPU, float64, jit, median of runs) on the same .npy files, one after the
# other, and prints one row each.
# Needs a release madc (`cargo build --release -p mad`), python3 with numpy and jax[cpu].
# Usage: benches/adbench/run_ba.sh [N:M:P ...]   (default: ADBench's ba1, ba2 and ba3:
#   49:7776:31843 21:11315:36455 161:48126:182072)
# BA_JACOBIAN=vjp times the reverse-mode formulation (`ba_jacobian_vjp` beside jax's
# `jacrev`) instead of `jacobian` (`ba_jacobian` beside jax's `jacfwd`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
madc="$here/../../target/release/madc"
program="$here/ba.mad"
case "${BA_JACOBIAN:-jacobian}" in
  jacobian) entry=ba_jacobian; jaxmode=fwd ;;
  vjp) entry=ba_jacobian_vjp; jaxmode=rev ;;
  *) echo "BA_JACOBIAN must be jacobian or vjp" >&2; exit 1 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(49:7776:31843 21:11315:36455 161:48126:182072)
printf '| n | m | p | mad objective (ms) | mad Jacobian (ms) | mad ratio | jax objective (ms) | jax Jacobian (ms) | jax ratio | objective mad/jax | objective and Jacobian agree with jax |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for s in "${sizes[@]}"; do
  IFS=: read -r n m p <<<"$s"
  f="$work/n${n}m${m}p${p}"
  python3 "$here/ba_gen.py" "$f" "$n" "$m" "$p"
  args=("${f}_cams.npy" "${f}_x.npy" "${f}_w.npy" "${f}_obs.npy" "${f}_feats.npy")
  mo=$("$madc" bench --entry ba_objective --runs 21 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mj=$("$madc" bench --entry "$entry" --runs 11 "$program" -- "${args[@]}" | awk '/^median/ {print $2}')
  mv=$("$madc" run --entry ba_objective_sumsq "$program" -- "${args[@]}")
  ml=$("$madc" run --entry "${entry}_l1" "$program" -- "${args[@]}")
  jx=$(python3 "$here/ba_jax.py" "$f" 21 "$jaxmode")
  jv=$(echo "$jx" | awk '/^objective/ {print $2}')
  jl=$(echo "$jx" | awk '/^jacobian/ {print $2}')
  jo=$(echo "$jx" | awk '/^objective/ {print $3 * 1000}')
  jj=$(echo "$jx" | awk '/^jacobian/ {print $3 * 1000}')
  python3 "$here/table_row.py" 3 "$n" "$m" "$p" "$mo" "$mj" "$jo" "$jj" "$mv" "$jv" "$ml" "$jl"
done

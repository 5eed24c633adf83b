//! Typed `f64` kernels for the heap-tensor ops that dominate numeric code
//! (matrix product, transpose, sum, fill, elementwise arithmetic, insert).
//! [`fast`] answers an op site directly on `f64` data when it can, with the same
//! results bit for bit as the general path in [`super::tensor`] (same operation
//! order: sums and dot products add left to right starting from `0.0`, multiply
//! then add, no fused multiply-add); it declines (returns `None`) for everything
//! else, including every case that is an error.

use super::layout::Arg;
use super::tensor::TensorOp;
use crate::ops::BinaryOp;
use crate::value::{Tensor, TensorData, Value};

/// `out = a · b` for row-major `a` (m×k) and `b` (k×n); `out` has m·n entries.
/// Each entry is `((0 + a[i,0]·b[0,j]) + a[i,1]·b[1,j]) + …`, in that order.
pub fn matmul_f64(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, out: &mut [f64]) {
    assert!(
        a.len() == m * k && b.len() == k * n && out.len() == m * n,
        "matmul_f64: extents"
    );
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        if k == 0 {
            row.fill(0.0);
            continue;
        }
        // The first product starts each entry (see [`sum_f64`]).
        let ai0 = a[i * k];
        for (o, &bv) in row.iter_mut().zip(&b[..n]) {
            *o = ai0 * bv;
        }
        for p in 1..k {
            let aip = a[i * k + p];
            let brow = &b[p * n..(p + 1) * n];
            for (o, &bv) in row.iter_mut().zip(brow) {
                *o += aip * bv;
            }
        }
    }
}

/// The sum of `v` left to right from its first element, `((v0 + v1) + v2) + …`; 0 when it
/// is empty. Every back end sums (and forms matmul entries) this way, so they give the same
/// bits; starting from the first term rather than from 0 keeps the sign of a sum of negative
/// zeros, as IEEE addition of the terms alone does.
pub fn sum_f64(v: &[f64]) -> f64 {
    match v.split_first() {
        Some((&first, rest)) => rest.iter().fold(first, |s, x| s + x),
        None => 0.0,
    }
}

/// Appends the transpose of row-major `a` (m×n), row-major n×m, to `out`.
pub fn transpose_f64(a: &[f64], m: usize, n: usize, out: &mut Vec<f64>) {
    out.reserve(m * n);
    for j in 0..n {
        out.extend((0..m).map(|i| a[i * n + j]));
    }
}

fn f64_tensor<'a>(a: &'a Arg<'_>) -> Option<(&'a [usize], &'a [f64])> {
    match a {
        Arg::Tensor(t) => match &t.data {
            TensorData::F64(v) => Some((&t.shape, v)),
            _ => None,
        },
        _ => None,
    }
}

fn f64_scalar(a: &Arg<'_>) -> Option<f64> {
    match a {
        Arg::Scalar(Value::F64(x)) => Some(*x),
        _ => None,
    }
}

fn tensor(shape: Vec<usize>, v: Vec<f64>) -> Option<Value> {
    Some(Value::Tensor(Tensor {
        shape,
        data: TensorData::F64(v),
    }))
}

fn arith(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div
    )
}

/// The result of `op` on `args` computed on `f64` data, or `None` where the
/// general path must answer (other kinds, shapes it checks, errors).
pub fn fast(op: &TensorOp, args: &[Arg<'_>]) -> Option<Value> {
    match (op, args) {
        (TensorOp::MatMul, [a, b]) => {
            let ((sa, va), (sb, vb)) = (f64_tensor(a)?, f64_tensor(b)?);
            if sa.len() != 2 || !(1..=2).contains(&sb.len()) || sa[1] != sb[0] {
                return None;
            }
            let (m, k) = (sa[0], sa[1]);
            let n = if sb.len() == 2 { sb[1] } else { 1 };
            // Large results take the general path, which checks their size.
            if m.checked_mul(n).is_none_or(|t| t > 1 << 22) {
                return None;
            }
            let mut out = vec![0.0; m * n];
            matmul_f64(va, vb, m, k, n, &mut out);
            tensor(if sb.len() == 2 { vec![m, n] } else { vec![m] }, out)
        }
        (TensorOp::Transpose, [a]) => {
            let (s, v) = f64_tensor(a)?;
            let &[m, n] = s else { return None };
            let mut out = Vec::new();
            transpose_f64(v, m, n, &mut out);
            tensor(vec![n, m], out)
        }
        (TensorOp::Sum, [a]) => {
            let (_, v) = f64_tensor(a)?;
            Some(Value::F64(sum_f64(v)))
        }
        (TensorOp::Full, [v, dims @ ..]) => {
            let x = f64_scalar(v)?;
            let mut shape = Vec::with_capacity(dims.len());
            for d in dims {
                match d {
                    Arg::Scalar(Value::I64(n)) if (0..=1 << 20).contains(n) => {
                        shape.push(*n as usize)
                    }
                    _ => return None,
                }
            }
            let total = shape
                .iter()
                .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                .filter(|&t| t <= 1 << 26)?;
            tensor(shape, vec![x; total])
        }
        (TensorOp::Binary(op), [a, b]) if arith(*op) => match (f64_tensor(a), f64_tensor(b)) {
            (Some((sa, va)), Some((sb, vb))) if sa == sb => tensor(
                sa.to_vec(),
                va.iter().zip(vb).map(|(x, y)| op.f64(*x, *y)).collect(),
            ),
            (Some((sa, va)), None) => {
                let y = f64_scalar(b)?;
                tensor(sa.to_vec(), va.iter().map(|x| op.f64(*x, y)).collect())
            }
            (None, Some((sb, vb))) => {
                let x = f64_scalar(a)?;
                tensor(sb.to_vec(), vb.iter().map(|y| op.f64(x, *y)).collect())
            }
            _ => None,
        },
        (TensorOp::Insert, [t, v, idx @ ..]) => {
            let (s, data) = f64_tensor(t)?;
            let x = f64_scalar(v)?;
            if idx.len() != s.len() {
                return None;
            }
            let mut off = 0usize;
            for (axis, i) in idx.iter().enumerate() {
                match i {
                    Arg::Scalar(Value::I64(i)) if *i >= 0 && (*i as u64) < s[axis] as u64 => {
                        off = off * s[axis] + *i as usize;
                    }
                    _ => return None,
                }
            }
            let mut out = data.to_vec();
            out[off] = x;
            tensor(s.to_vec(), out)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::tensor::apply_general as apply;

    fn t(shape: Vec<usize>, v: Vec<f64>) -> Arg<'static> {
        Arg::Tensor(std::borrow::Cow::Owned(Tensor {
            shape,
            data: TensorData::F64(v),
        }))
    }

    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
            (Value::Tensor(x), Value::Tensor(y)) => {
                x.shape == y.shape
                    && (0..x.data.len()).all(|i| same(&x.data.get(i), &y.data.get(i)))
            }
            _ => a == b,
        }
    }

    #[test]
    fn matmul_by_hand() {
        let mut out = [0.0; 4];
        matmul_f64(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0],
            2,
            2,
            2,
            &mut out,
        );
        assert_eq!(out, [19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    fn fast_paths_agree_with_the_general_path_bit_for_bit() {
        let a: Vec<f64> = (0..12)
            .map(|k| (0.7 * k as f64).sin() * 1e3_f64.powi(k % 3))
            .collect();
        let b: Vec<f64> = (0..12)
            .map(|k| (0.3 * k as f64 + 1.0).cos() - 0.5)
            .collect();
        let cases: Vec<(TensorOp, Vec<Arg<'static>>)> = vec![
            (
                TensorOp::MatMul,
                vec![t(vec![3, 4], a.clone()), t(vec![4, 3], b.clone())],
            ),
            (
                TensorOp::MatMul,
                vec![t(vec![3, 4], a.clone()), t(vec![4], b[..4].to_vec())],
            ),
            (TensorOp::Transpose, vec![t(vec![3, 4], a.clone())]),
            (TensorOp::Sum, vec![t(vec![12], a.clone())]),
            (
                TensorOp::Full,
                vec![
                    Arg::Scalar(Value::F64(-0.0)),
                    Arg::Scalar(Value::I64(2)),
                    Arg::Scalar(Value::I64(3)),
                ],
            ),
            (
                TensorOp::Binary(BinaryOp::Div),
                vec![t(vec![12], a.clone()), t(vec![12], b.clone())],
            ),
            (
                TensorOp::Binary(BinaryOp::Sub),
                vec![Arg::Scalar(Value::F64(2.5)), t(vec![12], b.clone())],
            ),
            (
                TensorOp::Binary(BinaryOp::Mul),
                vec![t(vec![12], a.clone()), Arg::Scalar(Value::F64(-3.0))],
            ),
            (
                TensorOp::Insert,
                vec![
                    t(vec![3, 4], a.clone()),
                    Arg::Scalar(Value::F64(9.0)),
                    Arg::Scalar(Value::I64(2)),
                    Arg::Scalar(Value::I64(1)),
                ],
            ),
        ];
        for (op, args) in &cases {
            let fast = fast(op, args).expect("fast path taken");
            let general = apply(op, args).expect("general path");
            assert!(same(&fast, &general), "{op:?}: {fast:?} vs {general:?}");
        }
    }

    #[test]
    fn errors_are_left_to_the_general_path() {
        let a = t(vec![2, 2], vec![1.0; 4]);
        assert!(fast(&TensorOp::MatMul, &[a.clone(), t(vec![3, 1], vec![1.0; 3])]).is_none());
        let idx = [
            a.clone(),
            Arg::Scalar(Value::F64(1.0)),
            Arg::Scalar(Value::I64(2)),
            Arg::Scalar(Value::I64(0)),
        ];
        assert!(fast(&TensorOp::Insert, &idx).is_none());
        assert!(
            fast(
                &TensorOp::Binary(BinaryOp::Add),
                &[a, t(vec![4], vec![1.0; 4])]
            )
            .is_none()
        );
    }
}

//! Numpy broadcasting as two ops that are each other's transpose: `tensor.broadcast`
//! (a tensor stretched to a target shape, right-aligned: each source extent is 1 or the
//! target's) and `tensor.sum_to` (a tensor summed down to a target shape by the same
//! rule). Element sums add in row-major order of the source, starting from zero.

use crate::ops::RtError;
use crate::value::{ScalarKind, Tensor, TensorData};

/// The target extents as `usize`, rejecting negative ones.
fn extents(dims: &[i64], what: &str) -> Result<Vec<usize>, RtError> {
    dims.iter()
        .map(|&d| usize::try_from(d).map_err(|_| RtError::Other(format!("`{what}` to a negative extent {d}"))))
        .collect()
}

/// For each axis of `big`, the stride of `small`'s matching axis (0 where `small` is
/// broadcast along it): `small` is right-aligned against `big`, each of its extents 1 or
/// `big`'s. `None` when the shapes do not broadcast.
pub fn broadcast_strides(small: &[usize], big: &[usize]) -> Option<Vec<usize>> {
    if small.len() > big.len() {
        return None;
    }
    let lead = big.len() - small.len();
    let mut strides = vec![0; big.len()];
    let mut stride = 1;
    for (i, &n) in small.iter().enumerate().rev() {
        let target = big[lead + i];
        if n == target {
            strides[lead + i] = if n == 1 { 0 } else { stride };
        } else if n != 1 {
            return None;
        }
        stride *= n;
    }
    Some(strides)
}

/// The row-major position in the small tensor of every element of `big`, in order.
fn source_positions(strides: &[usize], big: &[usize]) -> Vec<usize> {
    let count: usize = big.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0usize; big.len()];
    let mut at = 0usize;
    for _ in 0..count {
        out.push(at);
        for axis in (0..big.len()).rev() {
            index[axis] += 1;
            at += strides[axis];
            if index[axis] < big[axis] {
                break;
            }
            at -= strides[axis] * index[axis];
            index[axis] = 0;
        }
    }
    out
}

fn mismatch(what: &str, from: &[usize], to: &[usize]) -> RtError {
    RtError::ShapeMismatch(format!("`{what}` of shape {from:?} to shape {to:?}"))
}

/// `t` stretched to the extents `dims` (numpy's `broadcast_to`).
pub fn broadcast_to(t: &Tensor, dims: &[i64]) -> Result<Tensor, RtError> {
    let shape = extents(dims, "broadcast")?;
    let strides = broadcast_strides(&t.shape, &shape).ok_or_else(|| mismatch("broadcast", &t.shape, &shape))?;
    super::tensor::tensor_size(&shape, "broadcast")?;
    let data = super::reshape::gather(&t.data, &source_positions(&strides, &shape));
    Ok(Tensor { shape, data })
}

/// How `tensor.sum_to`, `tensor.max_to` and `tensor.min_to` combine the elements they fold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    Sum,
    /// As the elementwise `max`: a NaN element is passed over unless all are NaN.
    Max,
    /// As the elementwise `min`.
    Min,
}

impl Reduce {
    pub const ALL: [Reduce; 3] = [Reduce::Sum, Reduce::Max, Reduce::Min];

    /// The op's name in the IR's text form.
    pub fn name(self) -> &'static str {
        match self {
            Reduce::Sum => "tensor.sum_to",
            Reduce::Max => "tensor.max_to",
            Reduce::Min => "tensor.min_to",
        }
    }
}

/// `t` folded down to the extents `dims` by `how`, each element of `t` into the element it
/// would have been broadcast from, in row-major order (sums start from zero). `Sum` is the
/// transpose of [`broadcast_to`].
pub fn reduce_to(t: &Tensor, dims: &[i64], how: Reduce) -> Result<Tensor, RtError> {
    let what = &how.name()["tensor.".len()..];
    let shape = extents(dims, what)?;
    let strides = broadcast_strides(&shape, &t.shape).ok_or_else(|| mismatch(what, &t.shape, &shape))?;
    let count: usize = shape.iter().product();
    if how != Reduce::Sum && count > 0 && t.data.is_empty() {
        return Err(RtError::Other(format!("`{what}` of an empty tensor")));
    }
    let at = source_positions(&strides, &t.shape);
    fn fold<T: Copy>(src: &[T], at: &[usize], zero: T, n: usize, f: impl Fn(T, T) -> T, first_is_start: bool) -> Vec<T> {
        let mut out = vec![zero; n];
        let mut seen = vec![!first_is_start; n];
        for (x, &i) in src.iter().zip(at) {
            out[i] = if seen[i] { f(out[i], *x) } else { *x };
            seen[i] = true;
        }
        out
    }
    let start = how != Reduce::Sum;
    let data = match (&t.data, how) {
        (TensorData::F64(v), Reduce::Sum) => TensorData::F64(fold(v, &at, 0.0, count, |a, b| a + b, false)),
        (TensorData::F64(v), Reduce::Max) => TensorData::F64(fold(v, &at, 0.0, count, f64::max, start)),
        (TensorData::F64(v), Reduce::Min) => TensorData::F64(fold(v, &at, 0.0, count, f64::min, start)),
        (TensorData::F32(v), Reduce::Sum) => TensorData::F32(fold(v, &at, 0.0, count, |a, b| a + b, false)),
        (TensorData::F32(v), Reduce::Max) => TensorData::F32(fold(v, &at, 0.0, count, f32::max, start)),
        (TensorData::F32(v), Reduce::Min) => TensorData::F32(fold(v, &at, 0.0, count, f32::min, start)),
        (TensorData::I64(v), Reduce::Sum) => TensorData::I64(fold(v, &at, 0, count, i64::wrapping_add, false)),
        (TensorData::I64(v), Reduce::Max) => TensorData::I64(fold(v, &at, 0, count, i64::max, start)),
        (TensorData::I64(v), Reduce::Min) => TensorData::I64(fold(v, &at, 0, count, i64::min, start)),
        (TensorData::Bool(_), _) => return Err(RtError::Other(format!("`{what}` of a {} tensor", ScalarKind::Bool.name()))),
    };
    Ok(Tensor { shape, data })
}

/// `t` summed down to the extents `dims` ([`reduce_to`] with [`Reduce::Sum`]).
pub fn sum_to(t: &Tensor, dims: &[i64]) -> Result<Tensor, RtError> {
    reduce_to(t, dims, Reduce::Sum)
}

/// The layout of a matrix product with batch axes (numpy's `matmul`, a matrix or vector on
/// the right): `[…, m, k] × […, k, n]` or `[…, m, k] × [k]`, the batch extents broadcast.
#[derive(Clone, Debug, PartialEq)]
pub struct MatMulShape {
    pub batch: Vec<usize>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// The right operand is a vector (no `n` axis in the result).
    pub vector: bool,
    /// For each batch index, in row-major order, the offset of its matrix in each operand.
    pub a_offsets: Vec<usize>,
    pub b_offsets: Vec<usize>,
}

impl MatMulShape {
    /// The result's extents.
    pub fn result(&self) -> Vec<usize> {
        let mut s = self.batch.clone();
        s.push(self.m);
        if !self.vector {
            s.push(self.n);
        }
        s
    }
}

/// The layout of `a × b` for operand extents `sa`, `sb`; `None` when they do not fit.
pub fn matmul_shape(sa: &[usize], sb: &[usize]) -> Option<MatMulShape> {
    if sa.len() < 2 || sb.is_empty() {
        return None;
    }
    let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
    let vector = sb.len() == 1;
    let (k2, n, b_batch) = if vector { (sb[0], 1, &sb[..0]) } else { (sb[sb.len() - 2], sb[sb.len() - 1], &sb[..sb.len() - 2]) };
    if k != k2 {
        return None;
    }
    let a_batch = &sa[..sa.len() - 2];
    let rank = a_batch.len().max(b_batch.len());
    let mut batch = Vec::with_capacity(rank);
    for axis in 0..rank {
        let pick = |s: &[usize]| (axis + s.len()).checked_sub(rank).map_or(1, |i| s[i]);
        let (x, y) = (pick(a_batch), pick(b_batch));
        batch.push(match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => return None,
        });
    }
    let offsets = |own: &[usize], size: usize| -> Option<Vec<usize>> {
        let strides = broadcast_strides(own, &batch)?;
        Some(source_positions(&strides, &batch).into_iter().map(|i| i * size).collect())
    };
    let a_offsets = offsets(a_batch, m * k)?;
    let b_offsets = offsets(b_batch, k * n)?;
    Some(MatMulShape { batch, m, k, n, vector, a_offsets, b_offsets })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], xs: &[f64]) -> Tensor {
        Tensor { shape: shape.to_vec(), data: TensorData::F64(xs.to_vec()) }
    }

    #[test]
    fn broadcasts_right_aligned() {
        let row = t(&[3], &[1., 2., 3.]);
        assert_eq!(broadcast_to(&row, &[2, 3]).unwrap(), t(&[2, 3], &[1., 2., 3., 1., 2., 3.]));
        let col = t(&[2, 1], &[1., 2.]);
        assert_eq!(broadcast_to(&col, &[2, 3]).unwrap(), t(&[2, 3], &[1., 1., 1., 2., 2., 2.]));
        let one = t(&[1, 1], &[5.]);
        assert_eq!(broadcast_to(&one, &[2, 1, 2]).unwrap(), t(&[2, 1, 2], &[5.; 4]));
        let e = broadcast_to(&row, &[2, 2]).unwrap_err().to_string();
        assert!(e.contains("`broadcast` of shape [3] to shape [2, 2]"), "{e}");
        assert!(broadcast_to(&row, &[3, -1]).is_err());
    }

    #[test]
    fn sum_to_is_the_transpose_of_broadcast() {
        let m = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        assert_eq!(sum_to(&m, &[3]).unwrap(), t(&[3], &[5., 7., 9.]));
        assert_eq!(sum_to(&m, &[2, 1]).unwrap(), t(&[2, 1], &[6., 15.]));
        assert_eq!(sum_to(&m, &[]).unwrap(), t(&[], &[21.]));
        assert_eq!(sum_to(&m, &[2, 3]).unwrap(), m);
        assert!(sum_to(&m, &[2]).is_err());
        // <broadcast(x), y> == <x, sum_to(y)>
        let x = t(&[3], &[0.5, -1., 2.]);
        let b = broadcast_to(&x, &[2, 3]).unwrap();
        let dot = |a: &Tensor, b: &Tensor| match (&a.data, &b.data) {
            (TensorData::F64(a), TensorData::F64(b)) => a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>(),
            _ => unreachable!(),
        };
        assert_eq!(dot(&b, &m), dot(&x, &sum_to(&m, &[3]).unwrap()));
    }

    #[test]
    fn max_and_min_fold_like_the_elementwise_ops() {
        let m = t(&[2, 3], &[1., 7., 3., 4., f64::NAN, -6.]);
        assert_eq!(reduce_to(&m, &[3], Reduce::Max).unwrap(), t(&[3], &[4., 7., 3.]));
        assert_eq!(reduce_to(&m, &[2, 1], Reduce::Min).unwrap(), t(&[2, 1], &[1., -6.]));
        let empty = t(&[0, 2], &[]);
        assert!(reduce_to(&empty, &[2], Reduce::Max).unwrap_err().to_string().contains("empty"));
        assert_eq!(reduce_to(&empty, &[2], Reduce::Sum).unwrap(), t(&[2], &[0., 0.]));
    }
}

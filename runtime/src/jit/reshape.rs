//! The shape ops on tensors: `tensor.slice` (rows `lo..hi` of the first axis),
//! `tensor.concat` (tensors stacked along the first axis), `tensor.reshape` (the same
//! row-major elements under another shape) and `tensor.permute` (axes reordered). Each copies its elements once, in row-major
//! order; errors name the op as the source writes it (`v[a..b]`, `concat`, `reshape`).

use crate::ops::RtError;
use crate::value::{Tensor, TensorData};

/// Elements `lo..hi` of `d` (row-major positions), as new data of the same kind.
fn range(d: &TensorData, lo: usize, hi: usize) -> TensorData {
    match d {
        TensorData::F64(v) => TensorData::F64(v[lo..hi].to_vec()),
        TensorData::F32(v) => TensorData::F32(v[lo..hi].to_vec()),
        TensorData::I64(v) => TensorData::I64(v[lo..hi].to_vec()),
        TensorData::Bool(v) => TensorData::Bool(v[lo..hi].to_vec()),
    }
}

/// `t[lo..hi]`: rows `lo` to `hi − 1` of the first axis. Needs `0 ≤ lo ≤ hi ≤ len`.
pub fn slice_rows(t: &Tensor, lo: i64, hi: i64) -> Result<Tensor, RtError> {
    let Some(&len) = t.shape.first() else {
        return Err(RtError::ShapeMismatch("a slice `[a..b]` of a scalar".into()));
    };
    if lo < 0 || hi < lo || hi as u64 > len as u64 {
        return Err(RtError::Other(format!("slice {lo}..{hi} is out of bounds for length {len}")));
    }
    let row: usize = t.shape[1..].iter().product();
    let mut shape = t.shape.clone();
    shape[0] = (hi - lo) as usize;
    Ok(Tensor { shape, data: range(&t.data, lo as usize * row, hi as usize * row) })
}

/// The tensors `ts` stacked along their first axis: each must have the kind and the
/// trailing extents of the first.
pub fn concat_rows(ts: &[&Tensor]) -> Result<Tensor, RtError> {
    let Some(first) = ts.first() else {
        return Err(RtError::BadOperand("concat"));
    };
    if first.shape.is_empty() {
        return Err(RtError::ShapeMismatch("`concat` of scalars".into()));
    }
    let mut rows = 0usize;
    for t in ts {
        if t.kind() != first.kind() || t.shape.len() != first.shape.len() || t.shape[1..] != first.shape[1..] {
            return Err(RtError::ShapeMismatch(format!("`concat` of shapes {:?} and {:?}", first.shape, t.shape)));
        }
        rows += t.shape[0];
    }
    let mut shape = first.shape.clone();
    shape[0] = rows;
    super::tensor::tensor_size(&shape, "concat")?;
    let mut data = range(&first.data, 0, 0);
    for t in ts {
        match (&mut data, &t.data) {
            (TensorData::F64(a), TensorData::F64(b)) => a.extend_from_slice(b),
            (TensorData::F32(a), TensorData::F32(b)) => a.extend_from_slice(b),
            (TensorData::I64(a), TensorData::I64(b)) => a.extend_from_slice(b),
            (TensorData::Bool(a), TensorData::Bool(b)) => a.extend_from_slice(b),
            _ => return Err(RtError::BadOperand("concat")),
        }
    }
    Ok(Tensor { shape, data })
}

/// `t`'s elements, row-major, under `dims`: every extent non-negative and their product
/// the element count of `t`.
pub fn reshape(t: &Tensor, dims: &[i64]) -> Result<Tensor, RtError> {
    if let Some(&d) = dims.iter().find(|&&d| d < 0) {
        return Err(RtError::Other(format!("`reshape` to a negative extent {d}")));
    }
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let count = shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n));
    if count != Some(t.data.len()) {
        return Err(RtError::ShapeMismatch(format!(
            "`reshape` of {} elements (shape {:?}) to shape {:?}",
            t.data.len(),
            t.shape,
            shape
        )));
    }
    Ok(Tensor { shape, data: t.data.clone() })
}

/// `t` with its axes reordered: axis `i` of the result is axis `perm[i]` of `t`.
pub fn permute(t: &Tensor, perm: &[u32]) -> Result<Tensor, RtError> {
    let rank = t.shape.len();
    let mut seen = vec![false; rank];
    if perm.len() != rank || perm.iter().any(|&p| (p as usize) >= rank || std::mem::replace(&mut seen[p as usize], true)) {
        return Err(RtError::ShapeMismatch(format!("`permute` by {perm:?} of a tensor of shape {:?}", t.shape)));
    }
    let shape: Vec<usize> = perm.iter().map(|&p| t.shape[p as usize]).collect();
    let mut strides = vec![0usize; rank];
    let mut s = 1;
    for axis in (0..rank).rev() {
        strides[axis] = s;
        s *= t.shape[axis];
    }
    let count: usize = shape.iter().product();
    let mut at = Vec::with_capacity(count);
    for mut flat in 0..count {
        let mut src = 0;
        for axis in (0..rank).rev() {
            src += (flat % shape[axis]) * strides[perm[axis] as usize];
            flat /= shape[axis];
        }
        at.push(src);
    }
    Ok(Tensor { shape, data: gather(&t.data, &at) })
}

/// The elements of `d` at the row-major positions `at`, in that order.
pub fn gather(d: &TensorData, at: &[usize]) -> TensorData {
    match d {
        TensorData::F64(v) => TensorData::F64(at.iter().map(|&i| v[i]).collect()),
        TensorData::F32(v) => TensorData::F32(at.iter().map(|&i| v[i]).collect()),
        TensorData::I64(v) => TensorData::I64(at.iter().map(|&i| v[i]).collect()),
        TensorData::Bool(v) => TensorData::Bool(at.iter().map(|&i| v[i]).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], xs: &[f64]) -> Tensor {
        Tensor { shape: shape.to_vec(), data: TensorData::F64(xs.to_vec()) }
    }

    #[test]
    fn slices_rows_and_checks_bounds() {
        let m = t(&[3, 2], &[1., 2., 3., 4., 5., 6.]);
        assert_eq!(slice_rows(&m, 1, 3).unwrap(), t(&[2, 2], &[3., 4., 5., 6.]));
        assert_eq!(slice_rows(&m, 2, 2).unwrap(), t(&[0, 2], &[]));
        for (lo, hi) in [(-1, 2), (2, 1), (0, 4)] {
            let e = slice_rows(&m, lo, hi).unwrap_err().to_string();
            assert_eq!(e, format!("slice {lo}..{hi} is out of bounds for length 3"));
        }
    }

    #[test]
    fn concatenates_and_reshapes() {
        let a = t(&[1, 2], &[1., 2.]);
        let b = t(&[2, 2], &[3., 4., 5., 6.]);
        let c = concat_rows(&[&a, &b]).unwrap();
        assert_eq!(c, t(&[3, 2], &[1., 2., 3., 4., 5., 6.]));
        assert!(concat_rows(&[&a, &t(&[1, 3], &[0.; 3])]).unwrap_err().to_string().contains("`concat` of shapes [1, 2] and [1, 3]"));
        assert_eq!(reshape(&c, &[2, 3]).unwrap(), t(&[2, 3], &[1., 2., 3., 4., 5., 6.]));
        let p = permute(&reshape(&c, &[1, 3, 2]).unwrap(), &[2, 0, 1]).unwrap();
        assert_eq!(p, t(&[2, 1, 3], &[1., 3., 5., 2., 4., 6.]));
        assert!(permute(&c, &[0, 0]).is_err());
        assert_eq!(reshape(&c, &[6]).unwrap(), t(&[6], &[1., 2., 3., 4., 5., 6.]));
        assert!(reshape(&c, &[4, 2]).is_err());
        assert!(reshape(&c, &[-6, -1]).is_err());
    }
}

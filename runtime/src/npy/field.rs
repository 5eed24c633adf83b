//! The `f64` view of `.npy` arrays that mesh data uses: vertex fields, initial values and
//! vertex ids of any numeric dtype as `f64` values.

use super::{NpyError, header, read, write};
use crate::value::{Tensor, TensorData};
use std::io::Write;

/// A dense `f64` array in C (row-major) order.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// Reads an `.npy` file's contents as `f64` values (integers become the nearest `f64`:
/// exact for vertex ids; a `bool` array is an error).
pub fn read_npy(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let Tensor { shape, data } = read(bytes)?;
    let data = match data {
        TensorData::F64(v) => v,
        TensorData::F32(v) => v.into_iter().map(f64::from).collect(),
        TensorData::I64(v) => v.into_iter().map(|x| x as f64).collect(),
        TensorData::Bool(_) => {
            return Err(NpyError::Value("a bool array where numbers are expected".into()));
        }
    };
    Ok(NpyArray { shape, data })
}

/// Writes `f64` values of the given shape (`data.len()` must match it).
pub fn write_npy<W: Write>(shape: &[usize], data: &[f64], mut w: W) -> Result<(), NpyError> {
    if shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(data.len()) {
        return Err(NpyError::Shape(format!(
            "{} does not hold {} values",
            header::shape_text(shape),
            data.len()
        )));
    }
    write(&mut w, &Tensor { shape: shape.to_vec(), data: TensorData::F64(data.to_vec()) })
}

impl NpyArray {
    /// The data as a per-entity field of `dim` components for `n` entities: accepts shape
    /// `(n, dim)` or the flat `(n·dim,)`.
    pub fn into_field(self, n: usize, dim: usize) -> Result<Vec<f64>, NpyError> {
        let ok = match self.shape[..] {
            [a, b] => a == n && b == dim,
            [a] => Some(a) == n.checked_mul(dim),
            _ => false,
        };
        if !ok {
            return Err(NpyError::Shape(format!(
                "{}, expected ({n}, {dim}) or ({},)",
                header::shape_text(&self.shape),
                n * dim
            )));
        }
        Ok(self.data)
    }
}

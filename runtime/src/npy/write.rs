//! Writing a [`Tensor`] as an `.npy` file.

use super::{NpyError, header, io};
use crate::value::{Tensor, TensorData};
use std::io::Write;

/// Writes a tensor (any rank; rank 0 is a 0-d array) in C order: format version 1.0 (2.0
/// when the header needs more than 64 KiB), the header padded with spaces to a multiple of
/// 64 bytes and ended by a newline, as NumPy writes it.
pub fn write<W: Write>(w: &mut W, tensor: &Tensor) -> Result<(), NpyError> {
    if tensor.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(tensor.data.len()) {
        return Err(NpyError::Shape(format!(
            "{} does not hold {} values",
            header::shape_text(&tensor.shape),
            tensor.data.len()
        )));
    }
    let descr = match tensor.data {
        TensorData::F64(_) => "<f8",
        TensorData::F32(_) => "<f4",
        TensorData::I64(_) => "<i8",
        TensorData::Bool(_) => "|b1",
    };
    let mut text = header::format(descr, &tensor.shape);
    let padded = |prefix: usize| text.len() + 1 + (64 - (prefix + text.len() + 1) % 64) % 64;
    let version = if padded(10) <= u16::MAX as usize { 1u8 } else { 2 };
    let prefix = if version == 1 { 10 } else { 12 };
    text.push_str(&" ".repeat((64 - (prefix + text.len() + 1) % 64) % 64));
    text.push('\n');
    let mut head = Vec::with_capacity(prefix + text.len());
    head.extend_from_slice(b"\x93NUMPY");
    head.extend_from_slice(&[version, 0]);
    if version == 1 {
        head.extend_from_slice(&(text.len() as u16).to_le_bytes());
    } else {
        let len = u32::try_from(text.len()).map_err(|_| NpyError::Shape("the header is too long".into()))?;
        head.extend_from_slice(&len.to_le_bytes());
    }
    head.extend_from_slice(text.as_bytes());
    w.write_all(&head).map_err(io)?;
    let body: Vec<u8> = match &tensor.data {
        TensorData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::Bool(v) => v.iter().map(|b| *b as u8).collect(),
    };
    w.write_all(&body).map_err(io)
}

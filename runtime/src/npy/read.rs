//! Reading an `.npy` file's bytes into a [`Tensor`].

use super::NpyError;
use super::header::{self, Header};
use crate::value::{Tensor, TensorData};

const MAGIC: &[u8] = b"\x93NUMPY";

/// The element types read, by their `descr` (byte order mark included).
#[derive(Clone, Copy)]
enum Dtype {
    F8,
    F4,
    I8,
    I4,
    U8,
    U4,
    B1,
}

impl Dtype {
    fn of(descr: &str) -> Result<Dtype, NpyError> {
        Ok(match descr {
            "<f8" => Dtype::F8,
            "<f4" => Dtype::F4,
            "<i8" => Dtype::I8,
            "<i4" => Dtype::I4,
            "<u8" => Dtype::U8,
            "<u4" => Dtype::U4,
            "|b1" => Dtype::B1,
            d if d.starts_with('>') => return Err(NpyError::BigEndian(d.to_string())),
            d => return Err(NpyError::Dtype(d.to_string())),
        })
    }

    fn width(self) -> usize {
        match self {
            Dtype::F8 | Dtype::I8 | Dtype::U8 => 8,
            Dtype::F4 | Dtype::I4 | Dtype::U4 => 4,
            Dtype::B1 => 1,
        }
    }

    fn decode(self, body: &[u8]) -> Result<TensorData, NpyError> {
        fn words<const N: usize>(body: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
            body.chunks_exact(N).map(|c| {
                let mut w = [0u8; N];
                w.copy_from_slice(c);
                w
            })
        }
        Ok(match self {
            Dtype::F8 => TensorData::F64(words(body).map(f64::from_le_bytes).collect()),
            Dtype::F4 => TensorData::F32(words(body).map(f32::from_le_bytes).collect()),
            Dtype::I8 => TensorData::I64(words(body).map(i64::from_le_bytes).collect()),
            Dtype::I4 => TensorData::I64(words(body).map(|w| i32::from_le_bytes(w) as i64).collect()),
            Dtype::U4 => TensorData::I64(words(body).map(|w| u32::from_le_bytes(w) as i64).collect()),
            Dtype::U8 => TensorData::I64(
                words(body)
                    .map(|w| {
                        let v = u64::from_le_bytes(w);
                        i64::try_from(v).map_err(|_| {
                            NpyError::Value(format!("the uint64 value {v} does not fit an i64"))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Dtype::B1 => TensorData::Bool(body.iter().map(|b| *b != 0).collect()),
        })
    }
}

/// Reads an `.npy` file's contents into a tensor in C order (rank 0 for a 0-d array).
pub fn read(bytes: &[u8]) -> Result<Tensor, NpyError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(NpyError::Magic);
    }
    let truncated = || NpyError::Header("truncated: the file ends inside its header".into());
    let (major, minor) = match bytes.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err(truncated()),
    };
    // The header's length field: 2 bytes in version 1.0, 4 in 2.0 and 3.0.
    let start = match (major, minor) {
        (1, 0) => 10,
        (2 | 3, 0) => 12,
        _ => return Err(NpyError::Version(major, minor)),
    };
    let len_field = bytes.get(8..start).ok_or_else(truncated)?;
    let header_len = len_field
        .iter()
        .rev()
        .fold(0usize, |a, b| (a << 8) | *b as usize);
    let end = start.checked_add(header_len).ok_or_else(truncated)?;
    let text = bytes.get(start..end).ok_or_else(truncated)?;
    let text = std::str::from_utf8(text)
        .map_err(|_| NpyError::Header(format!("the header is not {} text", if major == 3 { "UTF-8" } else { "ASCII" })))?;
    let Header {
        descr,
        fortran_order,
        shape,
    } = header::parse(text)?;
    let dtype = Dtype::of(&descr)?;
    let body = &bytes[end..];
    // The byte count the header asks for, in 128 bits: a lying shape cannot overflow it,
    // and it is compared with the bytes present before anything is allocated.
    let count = shape.iter().try_fold(1u128, |a, &d| a.checked_mul(d as u128));
    let expected = count.and_then(|c| c.checked_mul(dtype.width() as u128));
    let Some(expected) = expected else {
        return Err(NpyError::Header(format!(
            "the shape {} is too large",
            header::shape_text(&shape)
        )));
    };
    if expected != body.len() as u128 {
        return Err(NpyError::Data {
            expected,
            found: body.len(),
        });
    }
    let data = dtype.decode(body)?;
    let data = if fortran_order && shape.len() > 1 {
        to_c_order(&shape, data)
    } else {
        data
    };
    Ok(Tensor { shape, data })
}

/// Reorders Fortran-order (column-major) elements into C (row-major) order.
fn to_c_order(shape: &[usize], data: TensorData) -> TensorData {
    // The Fortran position of every element, visited in C order.
    let count = data.len();
    let mut strides = vec![1usize; shape.len()];
    for k in 1..shape.len() {
        strides[k] = strides[k - 1] * shape[k - 1];
    }
    let mut order = Vec::with_capacity(count);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..count {
        order.push(index.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>());
        for k in (0..shape.len()).rev() {
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    fn gather<T: Copy>(v: &[T], order: &[usize]) -> Vec<T> {
        order.iter().map(|&i| v[i]).collect()
    }
    match &data {
        TensorData::F64(v) => TensorData::F64(gather(v, &order)),
        TensorData::F32(v) => TensorData::F32(gather(v, &order)),
        TensorData::I64(v) => TensorData::I64(gather(v, &order)),
        TensorData::Bool(v) => TensorData::Bool(gather(v, &order)),
    }
}

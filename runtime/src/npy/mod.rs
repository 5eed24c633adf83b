//! NumPy `.npy` files: the format's reader and writer, and the conversions between its
//! arrays and run-time [`Value`]s.
//!
//! - [`read`] / [`load`]: bytes / a file → a [`Tensor`] of the array's shape (rank 0 for a
//!   0-d array), in C (row-major) order. Format versions 1.0, 2.0 and 3.0; little-endian
//!   dtypes `<f8` (→ `f64`), `<f4` (→ `f32`), `<i8`, `<i4`, `<u4`, `<u8` (→ `i64`; a `<u8`
//!   value above `i64::MAX` is an error) and `|b1` (→ `bool`). A Fortran-order array is
//!   transposed into C order. Anything else is a clear [`NpyError`], never a panic: the
//!   data length that the header's shape asks for is checked against the bytes present
//!   before anything is allocated for it.
//! - [`load_value`]: a file → a [`Value`] (a 0-d array is a scalar); [`save_value`]: a
//!   scalar or tensor [`Value`] → a file.
//! - [`write()`] / [`save`]: a [`Tensor`] → format version 1.0 (2.0 when the header needs more
//!   than 64 KiB), C order, header padded to a multiple of 64 bytes as NumPy writes it;
//!   `f64` as `<f8`, `f32` as `<f4`, `i64` as `<i8`, `bool` as `|b1`.
//! - [`read_npy`] / [`write_npy`] → [`NpyArray`]: the `f64` view of mesh data (vertex
//!   fields, ids), with [`NpyArray::into_field`] for per-entity fields.

mod field;
mod header;
mod read;
mod write;

#[cfg(test)]
mod tests;

pub use field::{NpyArray, read_npy, write_npy};
pub use header::shape_text;
pub use read::read;
pub use write::write;

use crate::value::{Tensor, Value};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Why an `.npy` file could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NpyError {
    /// The file could not be opened, read or written.
    Io(String),
    /// The bytes do not start with the `\x93NUMPY` magic.
    Magic,
    /// A format version other than 1.0, 2.0 and 3.0.
    Version(u8, u8),
    /// The header is cut short or is not the dictionary the format prescribes.
    Header(String),
    /// An element type this reader does not take (its `descr`).
    Dtype(String),
    /// A big-endian element type (its `descr`).
    BigEndian(String),
    /// The data is not as long as the header's shape and dtype say.
    Data { expected: u128, found: usize },
    /// A value does not fit the type it is read as.
    Value(String),
    /// The shape does not fit what is expected.
    Shape(String),
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(m) => write!(f, "{m}"),
            NpyError::Magic => write!(f, "not a .npy file (it does not start with the \\x93NUMPY magic)"),
            NpyError::Version(a, b) => {
                write!(f, "unsupported .npy format version {a}.{b} (versions 1.0, 2.0 and 3.0 are read)")
            }
            NpyError::Header(m) => write!(f, "bad .npy header: {m}"),
            NpyError::Dtype(d) => write!(
                f,
                "unsupported dtype '{d}' (supported: float64 '<f8', float32 '<f4', int64 '<i8', \
                 int32 '<i4', uint32 '<u4', uint64 '<u8', bool '|b1')"
            ),
            NpyError::BigEndian(d) => write!(
                f,
                "big-endian dtype '{d}' is not supported: save the array little-endian \
                 (`a.astype(a.dtype.newbyteorder('<'))`)"
            ),
            NpyError::Data { expected, found } if (*found as u128) < *expected => write!(
                f,
                "truncated data: the header's shape and dtype need {expected} bytes, the file has {found}"
            ),
            NpyError::Data { expected, found } => write!(
                f,
                "{} bytes after the data (the header's shape and dtype need {expected} bytes)",
                *found as u128 - expected
            ),
            NpyError::Value(m) => write!(f, "{m}"),
            NpyError::Shape(m) => write!(f, ".npy shape: {m}"),
        }
    }
}

impl std::error::Error for NpyError {}

fn io(e: std::io::Error) -> NpyError {
    NpyError::Io(e.to_string())
}

fn cannot(what: &str) -> impl Fn(std::io::Error) -> NpyError + '_ {
    move |e| NpyError::Io(format!("cannot {what}: {e}"))
}

/// Reads an `.npy` file. Only a regular file is read (so a device or pipe named `x.npy`
/// cannot make the reader grow without bound), and no more bytes than its size.
pub fn load(path: impl AsRef<Path>) -> Result<Tensor, NpyError> {
    let mut file = std::fs::File::open(path.as_ref()).map_err(cannot("read"))?;
    let meta = file.metadata().map_err(cannot("read"))?;
    if !meta.is_file() {
        return Err(NpyError::Io("cannot read: not a regular file".into()));
    }
    let size = usize::try_from(meta.len()).map_err(|_| NpyError::Io("cannot read: too large".into()))?;
    let mut bytes = Vec::with_capacity(size);
    file.by_ref().take(meta.len()).read_to_end(&mut bytes).map_err(cannot("read"))?;
    read(&bytes)
}

/// Writes a tensor to an `.npy` file.
pub fn save(path: impl AsRef<Path>, tensor: &Tensor) -> Result<(), NpyError> {
    let file = std::fs::File::create(path.as_ref()).map_err(cannot("write"))?;
    let mut w = std::io::BufWriter::new(file);
    write(&mut w, tensor).map_err(|e| match e {
        NpyError::Io(m) => NpyError::Io(format!("cannot write: {m}")),
        e => e,
    })?;
    std::io::Write::flush(&mut w).map_err(cannot("write"))
}

/// Reads an `.npy` file as a value: a 0-d array is a scalar, any other a tensor.
///
/// ```
/// use mad_runtime::{Tensor, Value, npy};
/// let path = std::env::temp_dir().join(format!("doc-npy-{}.npy", std::process::id()));
/// let v = Value::Tensor(Tensor::vector(vec![1.0, 2.5]));
/// npy::save_value(&path, &v)?;
/// assert_eq!(npy::load_value(&path)?, v);
/// npy::save_value(&path, &Value::I64(7))?;
/// assert_eq!(npy::load_value(&path)?, Value::I64(7));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), npy::NpyError>(())
/// ```
pub fn load_value(path: impl AsRef<Path>) -> Result<Value, NpyError> {
    Ok(tensor_to_value(load(path)?))
}

/// Writes a scalar (as a 0-d array) or a tensor to an `.npy` file; a tuple is an error.
pub fn save_value(path: impl AsRef<Path>, value: &Value) -> Result<(), NpyError> {
    save(path, &value_to_tensor(value)?)
}

/// A tensor as a value: a rank-0 tensor is its scalar.
pub fn tensor_to_value(t: Tensor) -> Value {
    if t.shape.is_empty() && t.data.len() == 1 {
        t.data.get(0)
    } else {
        Value::Tensor(t)
    }
}

/// A scalar or tensor value as a tensor (a scalar has rank 0); a tuple is an error.
pub fn value_to_tensor(value: &Value) -> Result<Tensor, NpyError> {
    use crate::value::TensorData as D;
    let scalar = |data| Ok(Tensor { shape: Vec::new(), data });
    match value {
        Value::F64(x) => scalar(D::F64(vec![*x])),
        Value::F32(x) => scalar(D::F32(vec![*x])),
        Value::I64(x) => scalar(D::I64(vec![*x])),
        Value::Bool(x) => scalar(D::Bool(vec![*x])),
        Value::Tensor(t) => Ok(t.clone()),
        Value::Tuple(_) => Err(NpyError::Shape(format!(
            "a tuple `{value}` is not one array"
        ))),
    }
}

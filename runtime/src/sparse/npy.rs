//! NumPy `.npy` files of little-endian f64 (`<f8`) arrays, rank 1 or 2.
//!
//! The writer emits format version 1.0, C order, with the header padded to a multiple of 64
//! bytes. The reader accepts versions 1.0, 2.0 and 3.0, C or Fortran order (Fortran order is
//! transposed into C order), and rejects other dtypes and ranks with a clear [`NpyError`].

use std::fmt;
use std::io::Write;

/// A dense f64 array in C (row-major) order.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// Why an `.npy` file could not be read or used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NpyError {
    /// Not an .npy file, or its header is malformed.
    Format(String),
    /// The element type is not little-endian float64.
    Dtype(String),
    /// The shape does not fit what is expected.
    Shape(String),
    Io(String),
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Format(m) => write!(f, "not a valid .npy file: {m}"),
            NpyError::Dtype(d) => write!(
                f,
                ".npy dtype is {d}, expected float64 ('<f8') or 4/8-byte integers"
            ),
            NpyError::Shape(m) => write!(f, ".npy shape: {m}"),
            NpyError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for NpyError {}

const MAGIC: &[u8] = b"\x93NUMPY";

/// Writes an f64 array of the given shape (rank 1 or 2; `data.len()` must match).
pub fn write_npy<W: Write>(shape: &[usize], data: &[f64], mut w: W) -> Result<(), NpyError> {
    if shape.is_empty() || shape.len() > 2 {
        return Err(NpyError::Shape(format!(
            "rank {} (1 or 2 supported)",
            shape.len()
        )));
    }
    if shape.iter().product::<usize>() != data.len() {
        return Err(NpyError::Shape(format!(
            "{shape:?} does not hold {} values",
            data.len()
        )));
    }
    let shape_s = match shape {
        [n] => format!("({n},)"),
        _ => format!("({}, {})", shape[0], shape[1]),
    };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape_s}, }}");
    let total = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let io = |e: std::io::Error| NpyError::Io(e.to_string());
    w.write_all(MAGIC).map_err(io)?;
    w.write_all(&[1, 0]).map_err(io)?;
    w.write_all(&(header.len() as u16).to_le_bytes())
        .map_err(io)?;
    w.write_all(header.as_bytes()).map_err(io)?;
    let mut buf = Vec::with_capacity(data.len() * 8);
    for v in data {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    w.write_all(&buf).map_err(io)
}

/// Reads an `.npy` file's contents.
pub fn read_npy(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let fmt = |m: &str| NpyError::Format(m.to_string());
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(fmt("missing the \\x93NUMPY magic"));
    }
    let (hlen, hstart) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(fmt("truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(NpyError::Format(format!("unsupported version {v}"))),
    };
    let header = bytes
        .get(hstart..hstart + hlen)
        .ok_or_else(|| fmt("truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| fmt("header is not text"))?;
    let descr = dict_value(header, "descr").ok_or_else(|| fmt("no 'descr' in the header"))?;
    let descr = descr.trim().trim_matches(|c| c == '\'' || c == '"');
    // float64, or little-endian integers (read as exact f64 values: vertex ids).
    let width = match descr {
        "<f8" | "<i8" | "<u8" => 8,
        "<i4" | "<u4" | "|i4" | "|u4" => 4,
        _ => return Err(NpyError::Dtype(descr.to_string())),
    };
    let fortran = match dict_value(header, "fortran_order").map(str::trim) {
        Some("False") => false,
        Some("True") => true,
        _ => return Err(fmt("no valid 'fortran_order' in the header")),
    };
    let shape_s = dict_value(header, "shape").ok_or_else(|| fmt("no 'shape' in the header"))?;
    let inner = shape_s
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| fmt("bad shape"))?;
    let shape: Vec<usize> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| NpyError::Format(format!("bad shape entry `{s}`")))
        })
        .collect::<Result<_, _>>()?;
    if shape.is_empty() || shape.len() > 2 {
        return Err(NpyError::Shape(format!(
            "rank {} (1 or 2 supported)",
            shape.len()
        )));
    }
    let count = shape
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| fmt("shape overflows"))?;
    let body = &bytes[hstart + hlen..];
    if body.len()
        != count
            .checked_mul(width)
            .ok_or_else(|| fmt("shape overflows"))?
    {
        return Err(NpyError::Format(format!(
            "{} data bytes for {count} {descr} values",
            body.len()
        )));
    }
    let mut data: Vec<f64> = body
        .chunks_exact(width)
        .map(|c| match descr {
            "<f8" => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            "<i8" => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "<u8" => u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "<i4" | "|i4" => i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            _ => u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
        })
        .collect();
    if fortran && shape.len() == 2 {
        let (r, c) = (shape[0], shape[1]);
        let mut t = vec![0.0; data.len()];
        for i in 0..r {
            for j in 0..c {
                t[i * c + j] = data[j * r + i];
            }
        }
        data = t;
    }
    Ok(NpyArray { shape, data })
}

/// The text of `'key': value` in a Python dict literal (value up to the next top-level comma).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat1 = format!("'{key}'");
    let pat2 = format!("\"{key}\"");
    let at = header
        .find(&pat1)
        .map(|i| i + pat1.len())
        .or_else(|| header.find(&pat2).map(|i| i + pat2.len()))?;
    let rest = header[at..].trim_start().strip_prefix(':')?;
    let mut depth = 0i32;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(&rest[..i]),
            _ => {}
        }
    }
    None
}

impl NpyArray {
    /// The data as a per-entity field of `dim` components for `n` entities: accepts shape
    /// `(n, dim)` or the flat `(n·dim,)`.
    pub fn into_field(self, n: usize, dim: usize) -> Result<Vec<f64>, NpyError> {
        let ok = match self.shape[..] {
            [a, b] => a == n && b == dim,
            [a] => a == n * dim,
            _ => false,
        };
        if !ok {
            return Err(NpyError::Shape(format!(
                "{:?}, expected ({n}, {dim}) or ({},)",
                self.shape,
                n * dim
            )));
        }
        Ok(self.data)
    }
}

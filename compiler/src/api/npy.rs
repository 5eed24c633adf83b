//! `.npy` files as the arguments and results of mad functions: an array read for a
//! parameter's type (its shape checked against the type, its numbers converted where the
//! language converts a literal), and a result written.
//!
//! An array fits a parameter when its rank is the type's (0 for a scalar, 1 for `vector`,
//! `vecN`, `[T]`, `[T; N]`, 2 for `matrix`, `matRxC`, `[[i64]]`, `[vec3]`, …) and every fixed
//! extent matches. Its numbers convert as literals do (§3.7 of the language): integer arrays
//! fill float parameters (each the nearest float), `float32` arrays fill `f64` parameters
//! (exactly); a float array never fills an integer parameter, nor a `float64` array an `f32`
//! one, and `bool` arrays fill only `bool` parameters.

use super::error::Error;
use crate::front::SurfaceType;
use crate::ir::{Dim, Type};
use mad_runtime::npy;
use mad_runtime::{ScalarKind, Tensor, TensorData, Value};
use std::path::Path;

/// Whether a parameter of this type can be filled from a `.npy` file (scalars and tensors).
pub fn takes_npy(ty: &SurfaceType) -> bool {
    !matches!(ty, SurfaceType::Tuple(_) | SurfaceType::Stencil(_) | SurfaceType::Str | SurfaceType::Error)
}

/// What a `.npy` file must hold for a parameter of type `ty`, in words:
/// `a 1-D float64 array of shape (n,)`.
pub fn expected_array(ty: &SurfaceType) -> String {
    let (kind, dims) = parts(&ty.ir_type());
    let names = ["n", "m", "k", "l"];
    let mut free = 0;
    let dims: Vec<String> = dims
        .iter()
        .map(|d| match d {
            Some(n) => n.to_string(),
            None => {
                free += 1;
                names.get(free - 1).map_or_else(|| format!("n{free}"), |s| s.to_string())
            }
        })
        .collect();
    let shape = match &dims[..] {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let kind = match kind {
        ScalarKind::F64 => "float64 (or float32 or integer)",
        ScalarKind::F32 => "float32 (or integer)",
        ScalarKind::I64 => "integer",
        ScalarKind::Bool => "bool",
    };
    format!("a {}-{} {kind} array of shape {shape}", dims.len(), if dims.is_empty() { "d" } else { "D" })
}

/// The element kind and extents (`None`: any) of a scalar or tensor type.
fn parts(t: &Type) -> (ScalarKind, Vec<Option<u64>>) {
    match t {
        Type::Scalar(k) => (*k, Vec::new()),
        Type::Tensor { elem, shape } => (
            *elem,
            shape
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => Some(*n),
                    Dim::Sym(_) | Dim::Dyn => None,
                })
                .collect(),
        ),
        _ => (ScalarKind::F64, Vec::new()),
    }
}

/// The name of an array's element type, as NumPy says it.
fn dtype_name(data: &TensorData) -> &'static str {
    match data {
        TensorData::F64(_) => "float64",
        TensorData::F32(_) => "float32",
        TensorData::I64(_) => "integer",
        TensorData::Bool(_) => "bool",
    }
}

/// An array as a value of type `ty`; the error says how it does not fit (without the
/// expectation, which [`expected_array`] words).
pub fn fit_array(tensor: Tensor, ty: &SurfaceType) -> Result<Value, String> {
    if !takes_npy(ty) {
        return Err(format!("a parameter of type `{ty}` cannot be read from a .npy file"));
    }
    let (kind, dims) = parts(&ty.ir_type());
    let shape_ok = tensor.shape.len() == dims.len()
        && tensor.shape.iter().zip(&dims).all(|(n, d)| d.is_none_or(|d| *n as u64 == d));
    if !shape_ok {
        let rank = tensor.shape.len();
        return Err(format!(
            "the file holds a {rank}-{} array of shape {}",
            if rank == 0 { "d" } else { "D" },
            npy::shape_text(&tensor.shape)
        ));
    }
    let found = dtype_name(&tensor.data);
    let data = match (tensor.data, kind) {
        (d, k) if d.kind() == k => d,
        (TensorData::F32(v), ScalarKind::F64) => TensorData::F64(v.into_iter().map(f64::from).collect()),
        (TensorData::I64(v), ScalarKind::F64) => TensorData::F64(v.into_iter().map(|x| x as f64).collect()),
        (TensorData::I64(v), ScalarKind::F32) => TensorData::F32(v.into_iter().map(|x| x as f32).collect()),
        _ => return Err(format!("the file holds {found} data")),
    };
    Ok(npy::tensor_to_value(Tensor { shape: tensor.shape, data }))
}

/// Reads a `.npy` file as an argument for a parameter of type `ty` (see the module's
/// documentation for what fits). The error ([`Error::Npy`]) names the file, says what is
/// wrong and what was expected.
///
/// ```
/// use mad::front::SurfaceType;
/// use mad::{Tensor, Value};
/// let path = std::env::temp_dir().join(format!("doc-arg-{}.npy", std::process::id()));
/// // An integer array, read for a `vector` parameter: each value the nearest f64.
/// let ints = Tensor { shape: vec![2], data: mad::TensorData::I64(vec![3, -4]) };
/// mad::runtime::npy::save(&path, &ints).unwrap();
/// let v = mad::api::load_npy_for(&path, &SurfaceType::Vector)?;
/// assert_eq!(v, Value::Tensor(Tensor::vector(vec![3.0, -4.0])));
/// // Not a matrix: a clear error.
/// let e = mad::api::load_npy_for(&path, &SurfaceType::Matrix).unwrap_err();
/// assert!(e.to_string().contains("holds a 1-D array of shape (2,)"));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), mad::Error>(())
/// ```
pub fn load_npy_for(path: impl AsRef<Path>, ty: &SurfaceType) -> Result<Value, Error> {
    let path = path.as_ref();
    let expected = || format!("expected {}", expected_array(ty));
    let tensor = npy::load(path).map_err(|e| Error::Npy(format!("{}: {e}; {}", path.display(), expected())))?;
    fit_array(tensor, ty).map_err(|e| Error::Npy(format!("{}: {e}; {}", path.display(), expected())))
}

/// Writes a function's result to a `.npy` file: a scalar as a 0-d array, a tensor with its
/// shape. A tuple (or unit) result is an error: a file holds one array.
pub fn save_npy(path: impl AsRef<Path>, value: &Value) -> Result<(), Error> {
    let path = path.as_ref();
    if let Value::Tuple(items) = value {
        return Err(Error::Npy(format!(
            "{}: a .npy file holds one array, and the result is {}",
            path.display(),
            if items.is_empty() { "unit `()`".to_string() } else { format!("a tuple of {}", items.len()) }
        )));
    }
    npy::save_value(path, value).map_err(|e| Error::Npy(format!("{}: {e}", path.display())))
}

//! Conversions between native Rust values and mad values, and the signature
//! checks that make a typed call safe.
//!
//! | Rust | mad |
//! |---|---|
//! | `f64`, `f32`, `i64`, `bool` | the same scalar |
//! | `[f64; N]` | `vecN` or `[f64; N]` |
//! | `[[f64; C]; R]` | `matRxC` (row-major) or `[[f64; C]; R]` / `[vecC; R]` |
//! | `Vec<f64>` / `Vec<i64>` | `[f64]` (= `vector`) / `[i64]` |
//! | [`Matrix`](super::Matrix) | `[[f64]]` (= `matrix`), row-major |
//! | `Vec<Vec<f64>>` as a return type | `matrix`, row by row |
//! | `()` | the unit type |
//! | `(A, B, …)` as a return type | a tuple |
//! | [`Value`] | any type (checked when called) |

use super::error::Error;
use crate::front::{FnSig, SurfaceType};
use crate::ir::{Dim, Type};
use mad_runtime::{Tensor, TensorData, Value};

/// What a Rust type stands for, to compare with a mad type.
#[derive(Clone, Debug, PartialEq)]
pub enum RustShape {
    F64,
    F32,
    I64,
    Bool,
    /// `[f64; N]`
    Fixed(u64),
    /// `[[f64; C]; R]`
    FixedMat(u64, u64),
    /// `Vec<f64>`
    DynF64,
    /// `Vec<i64>`
    DynI64,
    /// [`Matrix`](super::Matrix)
    DynMat,
    /// `Vec<Vec<f64>>`
    DynRows,
    Tuple(Vec<RustShape>),
    /// [`Value`]: any mad type.
    Any,
}

impl RustShape {
    fn accepts(&self, t: &SurfaceType) -> bool {
        use SurfaceType as S;
        match (self, t) {
            (RustShape::Any, _) => true,
            (RustShape::F64, S::F64)
            | (RustShape::F32, S::F32)
            | (RustShape::I64, S::I64)
            | (RustShape::Bool, S::Bool) => true,
            (RustShape::Fixed(n), S::Vec(m)) => *n == *m as u64,
            (RustShape::Fixed(n), S::Array(e, m)) => **e == S::F64 && n == m,
            (RustShape::FixedMat(r, c), S::Mat(rr, cc)) => *r == *rr as u64 && *c == *cc as u64,
            (RustShape::FixedMat(r, c), S::Array(e, rr)) => {
                r == rr && RustShape::Fixed(*c).accepts(e)
            }
            (RustShape::DynF64, S::Vector) => true,
            (RustShape::DynF64, S::Slice(e)) => **e == S::F64,
            (RustShape::DynI64, S::Slice(e)) => **e == S::I64,
            (RustShape::DynMat | RustShape::DynRows, S::Matrix) => true,
            (RustShape::Tuple(a), S::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.accepts(y))
            }
            _ => false,
        }
    }
}

/// A Rust value that can be passed to a mad function.
pub trait IntoValue {
    fn shape() -> RustShape;
    fn into_value(self) -> Value;
}

/// A Rust value that a mad function can return.
pub trait FromValue: Sized {
    fn shape() -> RustShape;
    fn from_value(v: Value) -> Option<Self>;
}

/// The argument list of a typed call: a tuple of [`IntoValue`]s.
pub trait Args {
    fn shapes() -> Vec<RustShape>;
    fn into_values(self) -> Vec<Value>;
}

macro_rules! scalar {
    ($t:ty, $shape:ident, $var:ident) => {
        impl IntoValue for $t {
            fn shape() -> RustShape {
                RustShape::$shape
            }
            fn into_value(self) -> Value {
                Value::$var(self)
            }
        }
        impl FromValue for $t {
            fn shape() -> RustShape {
                RustShape::$shape
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::$var(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}
scalar!(f64, F64, F64);
scalar!(f32, F32, F32);
scalar!(i64, I64, I64);
scalar!(bool, Bool, Bool);

impl IntoValue for Value {
    fn shape() -> RustShape {
        RustShape::Any
    }
    fn into_value(self) -> Value {
        self
    }
}
impl FromValue for Value {
    fn shape() -> RustShape {
        RustShape::Any
    }
    fn from_value(v: Value) -> Option<Self> {
        Some(v)
    }
}

impl<const N: usize> IntoValue for [f64; N] {
    fn shape() -> RustShape {
        RustShape::Fixed(N as u64)
    }
    fn into_value(self) -> Value {
        Value::Tensor(Tensor::vector(self.to_vec()))
    }
}
impl<const N: usize> FromValue for [f64; N] {
    fn shape() -> RustShape {
        RustShape::Fixed(N as u64)
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Tensor(Tensor {
                shape,
                data: TensorData::F64(d),
            }) if shape == [N] => d.try_into().ok(),
            _ => None,
        }
    }
}

impl<const R: usize, const C: usize> IntoValue for [[f64; C]; R] {
    fn shape() -> RustShape {
        RustShape::FixedMat(R as u64, C as u64)
    }
    fn into_value(self) -> Value {
        let data: Vec<f64> = self.iter().flatten().copied().collect();
        Value::Tensor(Tensor {
            shape: vec![R, C],
            data: TensorData::F64(data),
        })
    }
}
impl<const R: usize, const C: usize> FromValue for [[f64; C]; R] {
    fn shape() -> RustShape {
        RustShape::FixedMat(R as u64, C as u64)
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Tensor(Tensor {
                shape,
                data: TensorData::F64(d),
            }) if shape == [R, C] => {
                let mut m = [[0.0; C]; R];
                for (i, row) in m.iter_mut().enumerate() {
                    row.copy_from_slice(&d[i * C..(i + 1) * C]);
                }
                Some(m)
            }
            _ => None,
        }
    }
}

impl IntoValue for Vec<f64> {
    fn shape() -> RustShape {
        RustShape::DynF64
    }
    fn into_value(self) -> Value {
        Value::Tensor(Tensor::vector(self))
    }
}
impl FromValue for Vec<f64> {
    fn shape() -> RustShape {
        RustShape::DynF64
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Tensor(Tensor {
                shape,
                data: TensorData::F64(d),
            }) if shape.len() == 1 => Some(d),
            _ => None,
        }
    }
}
impl IntoValue for Vec<i64> {
    fn shape() -> RustShape {
        RustShape::DynI64
    }
    fn into_value(self) -> Value {
        Value::Tensor(Tensor {
            shape: vec![self.len()],
            data: TensorData::I64(self),
        })
    }
}
impl FromValue for Vec<i64> {
    fn shape() -> RustShape {
        RustShape::DynI64
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Tensor(Tensor {
                shape,
                data: TensorData::I64(d),
            }) if shape.len() == 1 => Some(d),
            _ => None,
        }
    }
}

impl FromValue for () {
    fn shape() -> RustShape {
        RustShape::Tuple(Vec::new())
    }
    fn from_value(v: Value) -> Option<Self> {
        matches!(v, Value::Tuple(ref t) if t.is_empty()).then_some(())
    }
}

impl Args for () {
    fn shapes() -> Vec<RustShape> {
        Vec::new()
    }
    fn into_values(self) -> Vec<Value> {
        Vec::new()
    }
}

macro_rules! tuples {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: IntoValue),+> Args for ($($name,)+) {
            fn shapes() -> Vec<RustShape> {
                vec![$($name::shape()),+]
            }
            fn into_values(self) -> Vec<Value> {
                vec![$(self.$idx.into_value()),+]
            }
        }
        impl<$($name: FromValue),+> FromValue for ($($name,)+) {
            fn shape() -> RustShape {
                RustShape::Tuple(vec![$($name::shape()),+])
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::Tuple(items) => {
                        let mut it = items.into_iter();
                        let out = ($($name::from_value(it.next()?)?,)+);
                        it.next().is_none().then_some(out)
                    }
                    _ => None,
                }
            }
        }
    };
}
tuples!(A 0);
tuples!(A 0, B 1);
tuples!(A 0, B 1, C 2);
tuples!(A 0, B 1, C 2, D 3);
tuples!(A 0, B 1, C 2, D 3, E 4);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuples!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

impl std::fmt::Display for RustShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RustShape::F64 => write!(f, "f64"),
            RustShape::F32 => write!(f, "f32"),
            RustShape::I64 => write!(f, "i64"),
            RustShape::Bool => write!(f, "bool"),
            RustShape::Fixed(n) => write!(f, "[f64; {n}]"),
            RustShape::FixedMat(r, c) => write!(f, "[[f64; {c}]; {r}]"),
            RustShape::DynF64 => write!(f, "Vec<f64>"),
            RustShape::DynI64 => write!(f, "Vec<i64>"),
            RustShape::DynMat => write!(f, "Matrix"),
            RustShape::DynRows => write!(f, "Vec<Vec<f64>>"),
            RustShape::Tuple(items) => {
                write!(f, "(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if items.len() == 1 {
                    write!(f, ",")?;
                }
                write!(f, ")")
            }
            RustShape::Any => write!(f, "Value"),
        }
    }
}

pub(crate) fn rust_signature<A: Args, R: FromValue>() -> String {
    let show = |s: &RustShape| s.to_string();
    let args: Vec<String> = A::shapes().iter().map(show).collect();
    format!("({}) -> {}", args.join(", "), show(&R::shape()))
}

/// Checks that the Rust types `A -> R` fit the mad signature.
pub fn check_signature<A: Args, R: FromValue>(sig: &FnSig) -> Result<(), Error> {
    let shapes = A::shapes();
    let ok = shapes.len() == sig.params.len()
        && shapes.iter().zip(&sig.params).all(|(s, t)| s.accepts(t))
        && R::shape().accepts(&sig.ret);
    if ok {
        Ok(())
    } else {
        Err(Error::Signature {
            name: sig.name.clone(),
            expected: sig.to_string(),
            found: rust_signature::<A, R>(),
        })
    }
}

/// Whether a value has the given IR type (fixed extents must match; others are free).
pub fn value_fits(v: &Value, t: &Type) -> bool {
    match (v, t) {
        (Value::F64(_), Type::Scalar(k)) => *k == crate::ir::ScalarKind::F64,
        (Value::F32(_), Type::Scalar(k)) => *k == crate::ir::ScalarKind::F32,
        (Value::I64(_), Type::Scalar(k)) => *k == crate::ir::ScalarKind::I64,
        (Value::Bool(_), Type::Scalar(k)) => *k == crate::ir::ScalarKind::Bool,
        (Value::Tensor(x), Type::Tensor { elem, shape }) => {
            x.kind() == *elem
                && x.shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)) == Some(x.data.len())
                && x.shape.len() == shape.len()
                && x.shape.iter().zip(shape).all(|(n, d)| match d {
                    Dim::Fixed(m) => *n as u64 == *m,
                    Dim::Sym(_) | Dim::Dyn => true,
                })
        }
        (Value::Tuple(items), Type::Tuple(types)) => {
            items.len() == types.len() && items.iter().zip(types).all(|(v, t)| value_fits(v, t))
        }
        _ => false,
    }
}

/// Checks dynamically typed arguments against a signature.
pub fn check_values(sig: &FnSig, args: &[Value]) -> Result<(), Error> {
    if args.len() != sig.params.len() {
        return Err(Error::Arguments {
            name: sig.name.clone(),
            message: format!(
                "expected {} argument(s), got {}",
                sig.params.len(),
                args.len()
            ),
        });
    }
    for (i, (v, t)) in args.iter().zip(&sig.params).enumerate() {
        if !value_fits(v, &t.ir_type()) {
            return Err(Error::Arguments {
                name: sig.name.clone(),
                message: format!("argument {} must have type `{t}`, got `{v}`", i + 1),
            });
        }
    }
    Ok(())
}

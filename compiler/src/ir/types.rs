//! IR value types: scalars, tensors with static or symbolic shapes, tuples.

use std::fmt;

pub use mad_runtime::ScalarKind;

/// One extent of a tensor shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// Known at compile time.
    Fixed(u64),
    /// Named symbolic extent (as ONNX's `dim_param`); two equal names are equal extents.
    Sym(String),
    /// Unknown until run time (`?` in the text form).
    Dyn,
}

/// The type of an IR value.
///
/// Invariant: a tensor's element is a scalar kind; nested language types
/// (`[vec3; 4]`, `mat3`) are tensors of higher rank.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarKind),
    Tensor {
        elem: ScalarKind,
        shape: Vec<Dim>,
    },
    /// A tuple; the empty tuple is the unit type.
    Tuple(Vec<Type>),
}

impl Type {
    pub const F64: Type = Type::Scalar(ScalarKind::F64);
    pub const F32: Type = Type::Scalar(ScalarKind::F32);
    pub const I64: Type = Type::Scalar(ScalarKind::I64);
    pub const BOOL: Type = Type::Scalar(ScalarKind::Bool);

    pub fn unit() -> Type {
        Type::Tuple(Vec::new())
    }

    /// A tensor of fixed extents.
    pub fn tensor(elem: ScalarKind, shape: &[u64]) -> Type {
        Type::Tensor {
            elem,
            shape: shape.iter().map(|&n| Dim::Fixed(n)).collect(),
        }
    }

    /// The scalar kind of a scalar or the element kind of a tensor.
    pub fn scalar_kind(&self) -> Option<ScalarKind> {
        match self {
            Type::Scalar(k) => Some(*k),
            Type::Tensor { elem, .. } => Some(*elem),
            Type::Tuple(_) => None,
        }
    }

    pub fn is_unit(&self) -> bool {
        matches!(self, Type::Tuple(items) if items.is_empty())
    }

    /// A tensor's extents if every one is fixed; `None` for other types.
    pub fn fixed_shape(&self) -> Option<Vec<u64>> {
        match self {
            Type::Tensor { shape, .. } => shape
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => Some(*n),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// The number of scalars if every extent is fixed (tuples: the sum of their parts).
    pub fn static_size(&self) -> Option<u64> {
        match self {
            Type::Scalar(_) => Some(1),
            Type::Tensor { .. } => self.fixed_shape().map(|s| s.iter().product()),
            Type::Tuple(items) => items.iter().map(Type::static_size).sum(),
        }
    }
}

impl Dim {
    /// The extent if it is fixed.
    pub fn fixed(&self) -> Option<u64> {
        if let Dim::Fixed(n) = self { Some(*n) } else { None }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Sym(s) => write!(f, "{s}"),
            Dim::Dyn => write!(f, "?"),
        }
    }
}

/// Text form: `f64`, `tensor<f64; 3, ?, N>`, `tensor<f64;>` (rank 0), `(f64, i64)`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(k) => write!(f, "{}", k.name()),
            Type::Tensor { elem, shape } => {
                write!(f, "tensor<{};", elem.name())?;
                for (i, d) in shape.iter().enumerate() {
                    write!(f, "{}", if i > 0 { ", " } else { " " })?;
                    write!(f, "{d}")?;
                }
                write!(f, ">")
            }
            Type::Tuple(items) => {
                write!(f, "(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
        }
    }
}

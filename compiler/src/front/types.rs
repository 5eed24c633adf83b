//! Surface types: the types users write (`f64`, `vec3`, `mat2x3`, `[f64; 4]`, `vector`, ...),
//! their printed form, and their mapping to IR types.

use crate::ir::{Dim, ScalarKind, Type};
use std::fmt;

/// The largest fixed size: `vecN` has N from 2 to this, `matRxC` has R and C from 1 to
/// this (`matN`, the square `matNxN`, N from 2). A value of these types lives in registers
/// or on the stack, one slot per entry (the code generator scalarizes tensors of up to
/// this squared entries, [`crate::codegen::layout::SCALARIZE_MAX`]); larger or run-time
/// sizes are `vector` and `matrix`.
pub const MAX_FIXED_SIZE: u8 = 16;

/// The sizes `vecN` takes.
const VEC_SIZES: std::ops::RangeInclusive<u8> = 2..=MAX_FIXED_SIZE;

/// The row and column counts `matRxC` takes.
const MAT_SIZES: std::ops::RangeInclusive<u8> = 1..=MAX_FIXED_SIZE;

/// The kinds of mesh elements a term or a field can live on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StencilKind {
    Vertex,
    Edge,
    Face,
    Diamond,
    Ring,
    Pair,
}

impl StencilKind {
    pub const ALL: [StencilKind; 6] = [
        StencilKind::Vertex,
        StencilKind::Edge,
        StencilKind::Face,
        StencilKind::Diamond,
        StencilKind::Ring,
        StencilKind::Pair,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StencilKind::Vertex => "vertex",
            StencilKind::Edge => "edge",
            StencilKind::Face => "face",
            StencilKind::Diamond => "diamond",
            StencilKind::Ring => "ring",
            StencilKind::Pair => "pair",
        }
    }

    pub fn from_name(name: &str) -> Option<StencilKind> {
        StencilKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// How many vertex fields (`v0`, `v1`, ...) an element of this kind has.
    pub fn vertex_count(self) -> usize {
        match self {
            StencilKind::Vertex | StencilKind::Ring => 1,
            StencilKind::Edge => 2,
            StencilKind::Face => 3,
            StencilKind::Diamond | StencilKind::Pair => 4,
        }
    }
}

/// A type as the language sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SurfaceType {
    F64,
    F32,
    I64,
    Bool,
    /// `vecN`, N from 2 to [`MAX_FIXED_SIZE`]
    Vec(u8),
    /// `matRxC` (rows, columns), R and C from 1 to [`MAX_FIXED_SIZE`]; `mat2` is `Mat(2, 2)`
    Mat(u8, u8),
    /// `[T; N]`
    Array(Box<SurfaceType>, u64),
    /// `[T]` of dynamic length (`[f64]` is spelled [`SurfaceType::Vector`])
    Slice(Box<SurfaceType>),
    /// dynamic `f64` vector
    Vector,
    /// dynamic `f64` matrix
    Matrix,
    /// `(T, U)`; `()` is the unit type
    Tuple(Vec<SurfaceType>),
    /// A handle to a mesh element (`vertex`, `edge`, ...), only inside energy terms.
    Stencil(StencilKind),
    /// A string literal (only an argument of `print`).
    Str,
    /// The type of an expression that already had an error. It is compatible with
    /// every type so that one error does not cascade; it never appears in a
    /// successful compilation.
    Error,
}

impl SurfaceType {
    pub fn unit() -> SurfaceType {
        SurfaceType::Tuple(Vec::new())
    }

    pub fn is_unit(&self) -> bool {
        matches!(self, SurfaceType::Tuple(t) if t.is_empty())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, SurfaceType::Error)
    }

    /// The scalar kind of a scalar type.
    pub fn scalar(&self) -> Option<ScalarKind> {
        match self {
            SurfaceType::F64 => Some(ScalarKind::F64),
            SurfaceType::F32 => Some(ScalarKind::F32),
            SurfaceType::I64 => Some(ScalarKind::I64),
            SurfaceType::Bool => Some(ScalarKind::Bool),
            _ => None,
        }
    }

    pub fn from_scalar(k: ScalarKind) -> SurfaceType {
        match k {
            ScalarKind::F64 => SurfaceType::F64,
            ScalarKind::F32 => SurfaceType::F32,
            ScalarKind::I64 => SurfaceType::I64,
            ScalarKind::Bool => SurfaceType::Bool,
        }
    }

    /// `f64`, `f32` or `i64`.
    pub fn is_number(&self) -> bool {
        matches!(self, SurfaceType::F64 | SurfaceType::F32 | SurfaceType::I64)
    }

    pub fn is_float(&self) -> bool {
        matches!(self, SurfaceType::F64 | SurfaceType::F32)
    }

    /// Vec, mat, array, slice, vector or matrix: a tensor in the IR.
    pub fn is_tensor(&self) -> bool {
        matches!(
            self,
            SurfaceType::Vec(_)
                | SurfaceType::Mat(..)
                | SurfaceType::Array(..)
                | SurfaceType::Slice(_)
                | SurfaceType::Vector
                | SurfaceType::Matrix
        )
    }

    /// The scalar kind of a scalar, or the element kind of a tensor.
    pub fn elem_kind(&self) -> Option<ScalarKind> {
        match self {
            SurfaceType::Vec(_)
            | SurfaceType::Mat(..)
            | SurfaceType::Vector
            | SurfaceType::Matrix => Some(ScalarKind::F64),
            SurfaceType::Array(t, _) | SurfaceType::Slice(t) => t.elem_kind(),
            other => other.scalar(),
        }
    }

    /// The type of `self[i]` (one index), if `self` is indexable.
    pub fn index_once(&self) -> Option<SurfaceType> {
        match self {
            SurfaceType::Vec(_) | SurfaceType::Vector => Some(SurfaceType::F64),
            SurfaceType::Mat(_, c) => Some(SurfaceType::Vec(*c)).filter(|_| *c >= 2).or(
                // a one-column matrix row is a single number
                Some(SurfaceType::F64).filter(|_| *c == 1),
            ),
            SurfaceType::Matrix => Some(SurfaceType::Vector),
            SurfaceType::Array(t, _) | SurfaceType::Slice(t) => Some((**t).clone()),
            _ => None,
        }
    }

    /// The length of axis 0 when it is known at compile time.
    pub fn static_len(&self) -> Option<u64> {
        match self {
            SurfaceType::Vec(n) => Some(*n as u64),
            SurfaceType::Mat(r, _) => Some(*r as u64),
            SurfaceType::Array(_, n) => Some(*n),
            _ => None,
        }
    }

    /// Whether a value of this type may be stored in an array (`[T; N]`, `[T]`).
    pub fn is_array_element(&self) -> bool {
        matches!(
            self,
            SurfaceType::F64
                | SurfaceType::F32
                | SurfaceType::I64
                | SurfaceType::Bool
                | SurfaceType::Vec(_)
                | SurfaceType::Mat(..)
                | SurfaceType::Array(..)
                | SurfaceType::Stencil(StencilKind::Vertex)
                | SurfaceType::Error
        )
    }

    /// The array type `[elem; n]` in canonical form: a vector or matrix type is the same
    /// type as the array of the same shape, so `[f64; N]` (N from 2 to [`MAX_FIXED_SIZE`])
    /// is `vecN` and `[vecC; R]` (R from 1 to [`MAX_FIXED_SIZE`]) is `matRxC`.
    pub fn array(elem: SurfaceType, n: u64) -> SurfaceType {
        let size = u8::try_from(n).ok();
        match (elem, size) {
            (SurfaceType::F64, Some(n)) if VEC_SIZES.contains(&n) => SurfaceType::Vec(n),
            (SurfaceType::Vec(c), Some(r)) if MAT_SIZES.contains(&r) => SurfaceType::Mat(r, c),
            (e, _) => SurfaceType::Array(Box::new(e), n),
        }
    }

    /// The slice type `[elem]` in canonical form: `[f64]` is `vector`, `[[f64]]` is `matrix`.
    pub fn slice(elem: SurfaceType) -> SurfaceType {
        match elem {
            SurfaceType::F64 => SurfaceType::Vector,
            SurfaceType::Vector => SurfaceType::Matrix,
            e => SurfaceType::Slice(Box::new(e)),
        }
    }

    /// The element type and length of a fixed-size array, vector or matrix (`vec3` is
    /// `[f64; 3]`, `mat2x3` is `[vec3; 2]`).
    pub fn as_array(&self) -> Option<(SurfaceType, u64)> {
        match self {
            SurfaceType::Array(t, n) => Some(((**t).clone(), *n)),
            SurfaceType::Vec(n) => Some((SurfaceType::F64, *n as u64)),
            SurfaceType::Mat(r, c) if *c >= 2 => Some((SurfaceType::Vec(*c), *r as u64)),
            _ => None,
        }
    }

    /// Whether two types are compatible (equal, or one of them is the error type).
    pub fn compatible(&self, other: &SurfaceType) -> bool {
        if self.is_error() || other.is_error() {
            return true;
        }
        match (self, other) {
            (SurfaceType::Array(a, n), SurfaceType::Array(b, m)) => n == m && a.compatible(b),
            (SurfaceType::Slice(a), SurfaceType::Slice(b)) => a.compatible(b),
            (SurfaceType::Tuple(a), SurfaceType::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            _ => self == other,
        }
    }

    /// Whether the type (or a part of it) is the error type.
    pub fn contains_error(&self) -> bool {
        match self {
            SurfaceType::Error => true,
            SurfaceType::Array(t, _) | SurfaceType::Slice(t) => t.contains_error(),
            SurfaceType::Tuple(ts) => ts.iter().any(SurfaceType::contains_error),
            _ => false,
        }
    }

    /// The extents of the IR tensor for a tensor type (empty for scalars).
    fn ir_shape(&self) -> Vec<Dim> {
        match self {
            SurfaceType::Vec(n) => vec![Dim::Fixed(*n as u64)],
            SurfaceType::Mat(r, c) => vec![Dim::Fixed(*r as u64), Dim::Fixed(*c as u64)],
            SurfaceType::Array(t, n) => {
                let mut s = vec![Dim::Fixed(*n)];
                s.extend(t.ir_shape());
                s
            }
            SurfaceType::Slice(t) => {
                let mut s = vec![Dim::Dyn];
                s.extend(t.ir_shape());
                s
            }
            SurfaceType::Vector => vec![Dim::Dyn],
            SurfaceType::Matrix => vec![Dim::Dyn, Dim::Dyn],
            _ => Vec::new(),
        }
    }

    /// The IR type of a value of this type. Element handles are `i64` indices;
    /// strings and the error type have no values and map to the unit tuple.
    pub fn ir_type(&self) -> Type {
        match self {
            SurfaceType::F64 => Type::F64,
            SurfaceType::F32 => Type::F32,
            SurfaceType::I64 | SurfaceType::Stencil(_) => Type::I64,
            SurfaceType::Bool => Type::BOOL,
            SurfaceType::Tuple(ts) => Type::Tuple(ts.iter().map(SurfaceType::ir_type).collect()),
            SurfaceType::Str | SurfaceType::Error => Type::unit(),
            t => Type::Tensor {
                elem: t.elem_kind().unwrap_or(ScalarKind::F64),
                shape: t.ir_shape(),
            },
        }
    }
}

impl fmt::Display for SurfaceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SurfaceType::F64 => write!(f, "f64"),
            SurfaceType::F32 => write!(f, "f32"),
            SurfaceType::I64 => write!(f, "i64"),
            SurfaceType::Bool => write!(f, "bool"),
            SurfaceType::Vec(n) => write!(f, "vec{n}"),
            SurfaceType::Mat(r, c) if r == c => write!(f, "mat{r}"),
            SurfaceType::Mat(r, c) => write!(f, "mat{r}x{c}"),
            SurfaceType::Array(t, n) => write!(f, "[{t}; {n}]"),
            SurfaceType::Slice(t) => write!(f, "[{t}]"),
            SurfaceType::Vector => write!(f, "vector"),
            SurfaceType::Matrix => write!(f, "matrix"),
            SurfaceType::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if ts.len() == 1 {
                    write!(f, ",")?;
                }
                write!(f, ")")
            }
            SurfaceType::Stencil(k) => write!(f, "{}", k.name()),
            SurfaceType::Str => write!(f, "string"),
            SurfaceType::Error => write!(f, "{{unknown}}"),
        }
    }
}

/// Reads a named type: scalars, `vecN`, `matN`, `matRxC`, `vector`, `matrix`, stencils.
pub fn named_type(name: &str) -> Option<SurfaceType> {
    Some(match name {
        "f64" => SurfaceType::F64,
        "f32" => SurfaceType::F32,
        "i64" => SurfaceType::I64,
        "bool" => SurfaceType::Bool,
        "vector" => SurfaceType::Vector,
        "matrix" => SurfaceType::Matrix,
        _ => {
            if let Some(k) = StencilKind::from_name(name) {
                return Some(SurfaceType::Stencil(k));
            }
            return vec_mat_type(name);
        }
    })
}

/// `vec2`..`vec16`, `mat1x1`..`mat16x16`, `mat2`..`mat16`, as a type name or a constructor
/// name (sizes up to [`MAX_FIXED_SIZE`]).
pub fn vec_mat_type(name: &str) -> Option<SurfaceType> {
    match vec_mat_shape(name)? {
        Shape::Vec(n) => VEC_SIZES.contains(&n).then_some(SurfaceType::Vec(n)),
        Shape::Square(n) => VEC_SIZES.contains(&n).then_some(SurfaceType::Mat(n, n)),
        Shape::Mat(r, c) => {
            (MAT_SIZES.contains(&r) && MAT_SIZES.contains(&c)).then_some(SurfaceType::Mat(r, c))
        }
    }
}

/// The sizes a name shaped like a vector or matrix type spells (`vec17`, `mat0x3`),
/// valid or not; sizes beyond `u8` read as 255.
enum Shape {
    Vec(u8),
    Square(u8),
    Mat(u8, u8),
}

fn vec_mat_shape(name: &str) -> Option<Shape> {
    let size = |digits: &str| -> Option<u8> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(digits.parse::<u8>().unwrap_or(u8::MAX))
    };
    if let Some(n) = name.strip_prefix("vec") {
        return Some(Shape::Vec(size(n)?));
    }
    let dims = name.strip_prefix("mat")?;
    Some(match dims.split_once('x') {
        Some((r, c)) => Shape::Mat(size(r)?, size(c)?),
        None => Shape::Square(size(dims)?),
    })
}

/// Why a name shaped like a vector or matrix type (`vec17`, `mat1`, `mat3x20`) is not one,
/// naming the sizes there are; `None` for a valid type name or any other name.
pub fn fixed_size_error(name: &str) -> Option<String> {
    if vec_mat_type(name).is_some() {
        return None;
    }
    let max = MAX_FIXED_SIZE;
    Some(match vec_mat_shape(name)? {
        Shape::Vec(_) => format!("`{name}` is not a vector type: `vecN` has N from 2 to {max}"),
        Shape::Square(_) => {
            format!("`{name}` is not a matrix type: `matN` has N from 2 to {max}")
        }
        Shape::Mat(..) => format!(
            "`{name}` is not a matrix type: `matRxC` has R and C from 1 to {max}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in ["f64", "vec3", "mat2", "mat2x3", "vector", "matrix", "edge"] {
            assert_eq!(named_type(name).unwrap().to_string(), name);
        }
        assert_eq!(named_type("vec16"), Some(SurfaceType::Vec(16)));
        assert_eq!(named_type("mat16"), Some(SurfaceType::Mat(16, 16)));
        assert_eq!(named_type("mat5x3"), Some(SurfaceType::Mat(5, 3)));
        assert_eq!(named_type("vec17"), None);
        assert_eq!(named_type("vec1"), None);
        assert_eq!(named_type("mat1"), None);
        assert_eq!(named_type("mat17x2"), None);
        assert_eq!(named_type("mat1x3"), Some(SurfaceType::Mat(1, 3)));
        assert_eq!(named_type("vec+3"), None);
        assert_eq!(named_type("vec03"), Some(SurfaceType::Vec(3)));
    }

    #[test]
    fn sizes_beyond_the_bound_are_explained() {
        assert_eq!(fixed_size_error("vec16"), None);
        assert_eq!(fixed_size_error("vector"), None);
        assert_eq!(fixed_size_error("velocity"), None);
        let e = fixed_size_error("vec17").unwrap();
        assert!(e.contains("from 2 to 16"), "{e}");
        let e = fixed_size_error("mat3x300").unwrap();
        assert!(e.contains("R and C from 1 to 16"), "{e}");
        assert!(fixed_size_error("mat1").unwrap().contains("N from 2 to 16"));
    }

    #[test]
    fn arrays_of_fixed_sizes_are_vectors_and_matrices() {
        assert_eq!(SurfaceType::array(SurfaceType::F64, 16), SurfaceType::Vec(16));
        assert_eq!(
            SurfaceType::array(SurfaceType::F64, 17),
            SurfaceType::Array(Box::new(SurfaceType::F64), 17)
        );
        assert_eq!(SurfaceType::array(SurfaceType::Vec(3), 5), SurfaceType::Mat(5, 3));
        assert_eq!(
            SurfaceType::array(SurfaceType::Vec(3), 300),
            SurfaceType::Array(Box::new(SurfaceType::Vec(3)), 300)
        );
    }

    #[test]
    fn ir_types() {
        let arr = SurfaceType::Array(Box::new(SurfaceType::Vec(3)), 4);
        assert_eq!(arr.to_string(), "[vec3; 4]");
        assert_eq!(arr.ir_type(), Type::tensor(ScalarKind::F64, &[4, 3]));
        let sl = SurfaceType::Slice(Box::new(SurfaceType::I64));
        assert_eq!(
            sl.ir_type(),
            Type::Tensor {
                elem: ScalarKind::I64,
                shape: vec![Dim::Dyn]
            }
        );
        assert_eq!(
            SurfaceType::Mat(2, 3).ir_type(),
            Type::tensor(ScalarKind::F64, &[2, 3])
        );
        assert_eq!(SurfaceType::unit().ir_type(), Type::unit());
        let t = SurfaceType::Tuple(vec![SurfaceType::F64]);
        assert_eq!(t.to_string(), "(f64,)");
    }
}

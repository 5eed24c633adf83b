//! Type layout: how an IR type is flattened into Cranelift values.
//!
//! Scalars are one value (`bool` is an `i8` holding 0 or 1). Tensors whose
//! extents are all fixed and that have at most [`SCALARIZE_MAX`] elements are
//! scalarized: one value per element, row-major, no memory. Every other tensor
//! is a heap tensor: one pointer to a [`mad_runtime::Tensor`] in the run-time
//! context's arena. Tuples are the concatenation of their parts.

use cranelift_codegen::ir::types;
use mad_runtime::jit::FlatLayout;

use crate::ir::{Dim, ScalarKind, Type};

/// Largest element count of a scalarized tensor.
pub const SCALARIZE_MAX: u64 = 64;

/// The Cranelift type of a scalar kind.
pub fn clif_kind(k: ScalarKind) -> types::Type {
    match k {
        ScalarKind::F64 => types::F64,
        ScalarKind::F32 => types::F32,
        ScalarKind::I64 => types::I64,
        ScalarKind::Bool => types::I8,
    }
}

/// The flat layout of an IR type.
pub fn flat_layout(ty: &Type) -> FlatLayout {
    match ty {
        Type::Scalar(k) => FlatLayout::Scalar(*k),
        Type::Tensor { elem, shape } => {
            let fixed: Option<Vec<usize>> = shape
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => usize::try_from(*n).ok(),
                    Dim::Sym(_) | Dim::Dyn => None,
                })
                .collect();
            match fixed {
                Some(s)
                    if s.iter()
                        .try_fold(1u64, |a, &n| a.checked_mul(n as u64))
                        .is_some_and(|n| n <= SCALARIZE_MAX) =>
                {
                    FlatLayout::Small {
                        elem: *elem,
                        shape: s,
                    }
                }
                _ => FlatLayout::Heap {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .map(|d| match d {
                            Dim::Fixed(n) => usize::try_from(*n).ok(),
                            Dim::Sym(_) | Dim::Dyn => None,
                        })
                        .collect(),
                },
            }
        }
        Type::Tuple(items) => FlatLayout::Tuple(items.iter().map(flat_layout).collect()),
    }
}

/// Appends the Cranelift type of every slot of `l`.
pub fn slot_types(l: &FlatLayout, out: &mut Vec<types::Type>) {
    match l {
        FlatLayout::Scalar(k) => out.push(clif_kind(*k)),
        FlatLayout::Small { elem, shape } => out.extend(std::iter::repeat_n(
            clif_kind(*elem),
            shape.iter().product(),
        )),
        FlatLayout::Heap { .. } => out.push(types::I64),
        FlatLayout::Tuple(items) => items.iter().for_each(|i| slot_types(i, out)),
    }
}

/// The Cranelift types of an IR type's slots.
pub fn clif_types(ty: &Type) -> Vec<types::Type> {
    let mut out = Vec::new();
    slot_types(&flat_layout(ty), &mut out);
    out
}

/// Whether values of the two layouts have the same slots with the same meaning
/// (heap tensors match whatever their extents).
pub fn same_repr(a: &FlatLayout, b: &FlatLayout) -> bool {
    match (a, b) {
        (FlatLayout::Scalar(x), FlatLayout::Scalar(y)) => x == y,
        (
            FlatLayout::Small {
                elem: e1,
                shape: s1,
            },
            FlatLayout::Small {
                elem: e2,
                shape: s2,
            },
        ) => e1 == e2 && s1 == s2,
        (FlatLayout::Heap { elem: e1, .. }, FlatLayout::Heap { elem: e2, .. }) => e1 == e2,
        (FlatLayout::Tuple(xs), FlatLayout::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_repr(x, y))
        }
        _ => false,
    }
}

/// Whether any part of the layout is a heap tensor.
pub fn has_heap(l: &FlatLayout) -> bool {
    match l {
        FlatLayout::Heap { .. } => true,
        FlatLayout::Scalar(_) | FlatLayout::Small { .. } => false,
        FlatLayout::Tuple(items) => items.iter().any(has_heap),
    }
}

/// The fixed shape of a scalarized tensor (empty for a scalar).
pub fn small_shape(ty: &Type) -> Option<Vec<usize>> {
    match flat_layout(ty) {
        FlatLayout::Scalar(_) => Some(Vec::new()),
        FlatLayout::Small { shape, .. } => Some(shape),
        FlatLayout::Heap { .. } | FlatLayout::Tuple(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_static_tensors_are_scalarized() {
        assert_eq!(clif_types(&Type::tensor(ScalarKind::F64, &[3])).len(), 3);
        assert_eq!(
            clif_types(&Type::tensor(ScalarKind::F64, &[8, 8])).len(),
            64
        );
        assert_eq!(
            clif_types(&Type::tensor(ScalarKind::F64, &[65])),
            vec![types::I64]
        );
        let dynamic = Type::Tensor {
            elem: ScalarKind::F32,
            shape: vec![Dim::Dyn],
        };
        assert!(matches!(flat_layout(&dynamic), FlatLayout::Heap { .. }));
        let t = Type::Tuple(vec![Type::BOOL, Type::tensor(ScalarKind::I64, &[2])]);
        assert_eq!(clif_types(&t), vec![types::I8, types::I64, types::I64]);
    }
}

//! Value layout: which slots a value of an IR type occupies in compiled code, for every
//! back end.
//!
//! Scalars are one slot. Tensors whose extents are all fixed and that have at most
//! [`SCALARIZE_MAX`] elements are scalarized: one slot per element, row-major, no memory.
//! Every other tensor is a heap tensor: one pointer to a [`mad_runtime::Tensor`] in the
//! run-time context's arena. Tuples are the concatenation of their parts.

use mad_runtime::jit::FlatLayout;

use crate::front::types::MAX_FIXED_SIZE;
use crate::ir::{Dim, Type};

/// Largest element count of a scalarized tensor: that of the largest fixed-size matrix,
/// `mat16x16` ([`MAX_FIXED_SIZE`] squared), so that every `vecN` and `matRxC` value lives in
/// registers or on the stack, never on the heap.
pub const SCALARIZE_MAX: u64 = MAX_FIXED_SIZE as u64 * MAX_FIXED_SIZE as u64;

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

/// Whether a value of type `ty` has a heap tensor in its layout ([`has_heap`] of its
/// [`flat_layout`], without building the layout).
pub fn type_has_heap(ty: &Type) -> bool {
    match ty {
        Type::Scalar(_) => false,
        Type::Tensor { shape, .. } => !shape
            .iter()
            .try_fold(1u64, |a, d| match d {
                Dim::Fixed(n) => a.checked_mul(*n),
                Dim::Sym(_) | Dim::Dyn => None,
            })
            .is_some_and(|n| n <= SCALARIZE_MAX),
        Type::Tuple(items) => items.iter().any(type_has_heap),
    }
}

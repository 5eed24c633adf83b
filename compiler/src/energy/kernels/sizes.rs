//! Sizes that compile time and run time both read off the declarations: the slots per
//! entry of a field type and the faces an element of a stencil reaches.

use crate::front::{StencilKind, SurfaceType};

/// Slots per entry of a field type (f64 1, vecN N, matRxC R·C).
pub(crate) fn type_slots(t: &SurfaceType) -> Option<usize> {
    match t {
        SurfaceType::F64 => Some(1),
        SurfaceType::Vec(n) => Some(*n as usize),
        SurfaceType::Mat(r, c) => Some(*r as usize * *c as usize),
        _ => None,
    }
}

/// How many faces an element of a stencil reaches (the face dofs in its local vector).
pub fn faces_per_element(s: StencilKind) -> usize {
    match s {
        StencilKind::Face => 1,
        StencilKind::Diamond => 2,
        _ => 0,
    }
}

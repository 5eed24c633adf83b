//! The Cranelift types of a value's slots ([`crate::codegen::layout`] says which slots a
//! type has): a scalar kind's type (`bool` is an `i8` holding 0 or 1), one per element of a
//! scalarized tensor, an `i64` pointer for a heap tensor.

use cranelift_codegen::ir::types;
use mad_runtime::jit::FlatLayout;

use crate::codegen::layout::flat_layout;
use crate::ir::{ScalarKind, Type};

/// The Cranelift type of a scalar kind.
pub fn clif_kind(k: ScalarKind) -> types::Type {
    match k {
        ScalarKind::F64 => types::F64,
        ScalarKind::F32 => types::F32,
        ScalarKind::I64 => types::I64,
        ScalarKind::Bool => types::I8,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Dim;

    #[test]
    fn small_static_tensors_are_scalarized() {
        assert_eq!(clif_types(&Type::tensor(ScalarKind::F64, &[3])).len(), 3);
        assert_eq!(
            clif_types(&Type::tensor(ScalarKind::F64, &[16, 16])).len(),
            256
        );
        assert_eq!(
            clif_types(&Type::tensor(ScalarKind::F64, &[257])),
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

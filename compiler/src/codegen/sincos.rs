//! `sin(x)` and `cos(x)` of the same `f64` in one region (as the reverse pass of
//! anything differentiating `sin` has) become one call of the C library's
//! `sincos`, which gives the same bits as the two calls.

use std::collections::{HashMap, HashSet};

use crate::ir::{Function, OpId, OpKind, Type, UnaryOp, ValueId};

/// The scalar `f64` operand of a `sin` or `cos` op, and which it is (`true`: sin).
pub fn sin_or_cos(f: &Function, id: OpId) -> Option<(ValueId, bool)> {
    let op = &f.ops[id];
    let is_sin = match op.kind {
        OpKind::Unary(UnaryOp::Sin) => true,
        OpKind::Unary(UnaryOp::Cos) => false,
        _ => return None,
    };
    let (&x, &r) = (op.operands.first()?, op.results.first()?);
    (f.ty(x) == &Type::F64 && f.ty(r) == &Type::F64).then_some((x, is_sin))
}

/// Pairs in `ops` (one region's op list): the first of a `sin`/`cos` of the
/// same operand → the other one.
pub fn pairs(f: &Function, ops: &[OpId]) -> HashMap<OpId, OpId> {
    let mut first: HashMap<(ValueId, bool), OpId> = HashMap::new();
    let mut out = HashMap::new();
    let mut paired = HashSet::new();
    for &id in ops {
        let Some((x, is_sin)) = sin_or_cos(f, id) else {
            continue;
        };
        if let Some(&other) = first.get(&(x, !is_sin))
            && paired.insert(other)
        {
            out.insert(other, id);
            continue;
        }
        first.entry((x, is_sin)).or_insert(id);
    }
    out
}

//! Which ops may stop the program with a run-time error (docs/language.md §10) in the
//! sense dead-code elimination must respect: integer division, remainder or power, a read
//! of a parameter at an index not known to be in bounds, a call of a function containing
//! one of these, or one that may recurse too deep ([`op_may_fail`] says what is left out).
//!
//! [`super::dce`] keeps such ops even when nothing reads their results, so that a
//! derivative (which discards the primal result) stops where the plain call stops, with
//! the same error, in the same order. Every other pure op can be removed or moved freely.

use std::collections::HashMap;

use crate::ir::{BinaryOp, Dim, FuncRef, Function, Module, Op, OpKind, ScalarKind, Type, ValueId};

/// The `i64` constants of `f`, by value.
pub fn int_constants(f: &Function) -> HashMap<ValueId, i64> {
    f.ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            OpKind::Const(crate::ir::Literal::I64(i)) => op.results.first().map(|&v| (v, i)),
            _ => None,
        })
        .collect()
}

fn fixed_dims(t: &Type) -> Option<Vec<u64>> {
    match t {
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

/// Whether `indices` are constants within the first extents of tensor type `t`.
fn static_in_bounds(t: &Type, indices: &[ValueId], consts: &HashMap<ValueId, i64>) -> bool {
    let Some(dims) = fixed_dims(t) else {
        return false;
    };
    indices.len() <= dims.len()
        && indices
            .iter()
            .zip(&dims)
            .all(|(v, &n)| consts.get(v).is_some_and(|&i| i >= 0 && (i as u64) < n))
}

/// Whether `op` (in `f`, whose `i64` constants are `consts`) may fail by itself, not
/// counting the ops inside its regions or the callee of a call. Counted: integer division,
/// remainder and power unless the divisor is a non-zero constant (the exponent a
/// non-negative one), and a read (`tensor.index`, `tensor.extract`) of one of `f`'s own
/// parameters at an index that is not a constant within a fixed extent. Not counted, though
/// they can fail: shape mismatches of dynamic tensors, allocations, writes and reads of
/// tensors made inside `f`, which differentiation creates in numbers (per-iteration
/// buffers and adjoint accumulators, correct by construction) and which an unused result
/// would otherwise keep alive, with the loops that fill them.
pub fn op_may_fail(f: &Function, op: &Op, consts: &HashMap<ValueId, i64>) -> bool {
    let ty = |k: usize| op.operands.get(k).map(|&v| f.ty(v));
    match &op.kind {
        OpKind::Binary(b) => {
            let int = ty(0).and_then(Type::scalar_kind) == Some(ScalarKind::I64);
            let second = op.operands.get(1).and_then(|v| consts.get(v)).copied();
            int && match b {
                BinaryOp::Div | BinaryOp::Rem => second.is_none_or(|d| d == 0),
                BinaryOp::Pow => second.is_none_or(|e| e < 0),
                _ => false,
            }
        }
        OpKind::Index | OpKind::Extract(_) => {
            let Some(&t) = op.operands.first() else {
                return false;
            };
            if !f.params().contains(&t) {
                return false;
            }
            match &op.kind {
                OpKind::Extract(i) => fixed_dims(f.ty(t)).is_none_or(|d| d.first().is_none_or(|&n| *i >= n)),
                _ => !static_in_bounds(f.ty(t), &op.operands[1..], consts),
            }
        }
        _ => false,
    }
}

/// Whether calling a function may fail, memoized over one module: it contains an op
/// that may fail (in any region), calls such a function, or may recurse (a call chain
/// back to itself can exceed the recursion limit).
#[derive(Default)]
pub struct CallFailures {
    known: HashMap<FuncRef, bool>,
}

impl CallFailures {
    pub fn may_fail(&mut self, module: &Module, f: FuncRef) -> bool {
        if let Some(&b) = self.known.get(&f) {
            return b;
        }
        // Pending while its callees are examined: meeting it again is recursion.
        self.known.insert(f, true);
        let Some(func) = module.functions.get(f) else {
            return true;
        };
        let consts = int_constants(func);
        let mut fails = false;
        for (_, op) in func.ops.iter() {
            fails = match op.kind {
                OpKind::Call(g) => self.known.get(&g).copied().unwrap_or_else(|| self.may_fail(module, g)),
                _ => op_may_fail(func, op, &consts),
            };
            if fails {
                break;
            }
        }
        self.known.insert(f, fails);
        fails
    }
}

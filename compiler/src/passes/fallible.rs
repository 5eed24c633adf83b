//! Which ops may stop the program with a run-time error (docs/language.md §10) in the
//! sense dead-code elimination must respect: integer division, remainder or power, a read
//! of a parameter at an index not known to be in bounds, a call of a function containing
//! one of these, or one that may recurse too deep ([`op_may_fail`] says what is left out).
//!
//! [`super::dce`] keeps such ops even when nothing reads their results, so that a
//! derivative (which discards the primal result) stops where the plain call stops, with
//! the same error, in the same order. Every other pure op can be removed or moved freely.

use std::collections::HashMap;

use crate::ir::{BinaryOp, FuncRef, Function, Module, Op, OpKind, ScalarKind, Type, ValueId};

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


/// Whether `indices` are constants within the first extents of tensor type `t`.
fn static_in_bounds(t: &Type, indices: &[ValueId], consts: &HashMap<ValueId, i64>) -> bool {
    let Some(dims) = Type::fixed_shape(t) else {
        return false;
    };
    indices.len() <= dims.len()
        && indices
            .iter()
            .zip(&dims)
            .all(|(v, &n)| consts.get(v).is_some_and(|&i| i >= 0 && (i as u64) < n))
}

/// Whether `op` (in `f`, whose values `facts` describes) may fail by itself, not
/// counting the ops inside its regions or the callee of a call. Counted: integer division,
/// remainder and power unless the divisor is a non-zero constant (the exponent a
/// non-negative one), and a read (`tensor.index`, `tensor.extract`) at an index that is not
/// a constant within a fixed extent, of a fixed-size tensor or of (a part of) one of `f`'s
/// own parameters, and a slice (`tensor.slice`) of (a part of) one of `f`'s parameters. Not counted, though they can fail: shape mismatches of dynamic tensors,
/// allocations, writes, and reads of dynamic tensors made inside `f`, which differentiation
/// creates in numbers (per-iteration buffers and adjoint accumulators sized by trip counts,
/// correct by construction) and which an unused result would otherwise keep alive, with the
/// loops that fill them.
pub fn op_may_fail(f: &Function, op: &Op, facts: &Facts) -> bool {
    let consts = &facts.consts;
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
        // A slice of (a part of) a parameter, with bounds not known to be in range.
        OpKind::Slice => op.operands.first().is_some_and(|t| facts.param_parts.contains(t)),
        OpKind::Index | OpKind::Extract(_) => {
            let Some(&t) = op.operands.first() else {
                return false;
            };
            // A fixed-size tensor, or a part of one of `f`'s arguments: not a buffer that
            // differentiation sized by a trip count.
            if Type::fixed_shape(f.ty(t)).is_none() && !facts.param_parts.contains(&t) {
                return false;
            }
            match &op.kind {
                OpKind::Extract(i) => Type::fixed_shape(f.ty(t)).is_none_or(|d| d.first().is_none_or(|&n| *i >= n)),
                _ => !static_in_bounds(f.ty(t), &op.operands[1..], consts),
            }
        }
        _ => false,
    }
}

/// What [`op_may_fail`] needs to know about the values of one function.
pub struct Facts {
    /// The `i64` constants, by value.
    pub consts: HashMap<ValueId, i64>,
    /// The parameters and their parts (`t.1`, `m[1]`, `a[i].x`).
    pub param_parts: std::collections::HashSet<ValueId>,
}

impl Facts {
    pub fn of(f: &Function) -> Facts {
        let mut parts: std::collections::HashSet<ValueId> = f.params().iter().copied().collect();
        loop {
            let before = parts.len();
            for (_, op) in f.ops.iter() {
                if matches!(op.kind, OpKind::TupleGet(_) | OpKind::Index | OpKind::Extract(_) | OpKind::Slice)
                    && op.operands.first().is_some_and(|v| parts.contains(v))
                {
                    parts.extend(op.results.iter().copied());
                }
            }
            if parts.len() == before {
                break;
            }
        }
        Facts { consts: int_constants(f), param_parts: parts }
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
        let facts = Facts::of(func);
        let mut fails = false;
        for (_, op) in func.ops.iter() {
            fails = match op.kind {
                OpKind::Call(g) => self.known.get(&g).copied().unwrap_or_else(|| self.may_fail(module, g)),
                _ => op_may_fail(func, op, &facts),
            };
            if fails {
                break;
            }
        }
        self.known.insert(f, fails);
        fails
    }
}

//! Loop-version candidates: the element reads of a `for` loop whose index is an affine
//! function of the induction variable, so that one test in front of the loop can prove
//! every trip's bounds check (a back end then lowers the loop twice: a copy without the
//! proved checks, taken when the test holds, and the checked copy).
//!
//! In `for j in lo..hi`, a heap-tensor read `t[e]` whose index is `e = base ± j`
//! (sums and differences of `j`, integer constants and values defined in front
//! of the loop, with `j` counted once; on a rank-2 tensor, one axis may be
//! indexed by a loop-invariant `base` alone) stays in bounds on every trip exactly
//! when it does at the first and the last trip and the loop makes no more trips than
//! the extent (the indexes of consecutive trips are consecutive integers). Only loops
//! with no nested loop are candidates, so code grows at most twofold per loop. A read
//! whose address does not move with the loop (an invariant index on every axis) is no
//! candidate: a back end may hoist its load out of the loop, past the test.

use std::collections::{HashMap, HashSet};

use mad_runtime::jit::context::HEAP_INLINE_RANK;
use mad_runtime::jit::layout::FlatLayout;

use super::layout::flat_layout;
use crate::analysis::region_args_in;
use crate::ir::{BinaryOp, Function, Literal, Op, OpId, OpKind, Region, ScalarKind, Type, ValueId};

/// How deep an index expression is followed.
const MAX_DEPTH: usize = 8;

/// The most ops (nested regions included) a versioned loop body may have.
const MAX_BODY_OPS: usize = 2000;

/// The ops of `r` with their results' definitions; `false` when `r` nests a loop.
fn scan(f: &Function, r: &Region, defs: &mut HashMap<ValueId, OpId>, reads: &mut Vec<OpId>, count: &mut usize) -> bool {
    for &id in &r.ops {
        let op = &f.ops[id];
        *count += 1;
        if matches!(op.kind, OpKind::For | OpKind::While) {
            return false;
        }
        for &v in &op.results {
            defs.insert(v, id);
        }
        if op.kind == OpKind::Index {
            reads.push(id);
        }
        for nr in &op.regions {
            if !scan(f, nr, defs, reads, count) {
                return false;
            }
        }
    }
    true
}

/// A loop body's definitions and its induction variable.
pub struct Body {
    pub defs: HashMap<ValueId, OpId>,
    /// Values bound by the body's regions (the induction variable, carried values).
    pub bound: HashSet<ValueId>,
    pub j: ValueId,
}

impl Body {
    fn is_i64(&self, f: &Function, v: ValueId) -> bool {
        matches!(f.values[v].ty, Type::Scalar(ScalarKind::I64))
    }

    /// The coefficient of the induction variable in `v`, when `v` is an affine
    /// integer expression of it and of loop-invariant values.
    pub fn coef(&self, f: &Function, v: ValueId, depth: usize) -> Option<i64> {
        if !self.is_i64(f, v) || depth > MAX_DEPTH {
            return None;
        }
        if v == self.j {
            return Some(1);
        }
        if self.bound.contains(&v) {
            return None;
        }
        let Some(&id) = self.defs.get(&v) else { return Some(0) };
        let op = &f.ops[id];
        match (&op.kind, &op.operands[..]) {
            (OpKind::Const(Literal::I64(_)), []) => Some(0),
            (OpKind::Binary(BinaryOp::Add), &[a, b]) => Some(self.coef(f, a, depth + 1)? + self.coef(f, b, depth + 1)?),
            (OpKind::Binary(BinaryOp::Sub), &[a, b]) => Some(self.coef(f, a, depth + 1)? - self.coef(f, b, depth + 1)?),
            _ => None,
        }
    }
}

/// A versioned loop's plan: its body's affine facts and the candidate reads, each with
/// the induction variable's coefficient (−1, 0 or 1, not all 0) on every axis.
pub struct Plan {
    pub body: Body,
    pub reads: Vec<(OpId, Vec<i64>)>,
}

/// The plan of the `scf.for` op `op` of `f`, or `None` when it is not a candidate (it
/// nests a loop, is too large, or has no candidate read).
pub fn plan(f: &Function, op: &Op) -> Option<Plan> {
    let region = op.regions.first()?;
    let &j = region.args.first()?;
    let (mut defs, mut reads, mut count) = (HashMap::new(), Vec::new(), 0);
    if !scan(f, region, &mut defs, &mut reads, &mut count) || count > MAX_BODY_OPS {
        return None;
    }
    let mut bound = HashSet::new();
    region_args_in(f, region, &mut bound);
    let body = Body { defs, bound, j };
    let mut out = Vec::new();
    for id in reads {
        let rop = &f.ops[id];
        let (Some(&t), Some(&r)) = (rop.operands.first(), rop.results.first()) else { continue };
        let FlatLayout::Heap { shape, .. } = flat_layout(f.ty(t)) else { continue };
        let idx = &rop.operands[1..];
        if !matches!(f.ty(r), Type::Scalar(_)) || idx.len() != shape.len() || shape.len() > HEAP_INLINE_RANK {
            continue;
        }
        let coefs: Option<Vec<i64>> = idx.iter().map(|&e| body.coef(f, e, 0).filter(|c| c.abs() <= 1)).collect();
        if let Some(coefs) = coefs.filter(|cs| cs.iter().any(|&c| c != 0)) {
            out.push((id, coefs));
        }
    }
    (!out.is_empty()).then_some(Plan { body, reads: out })
}

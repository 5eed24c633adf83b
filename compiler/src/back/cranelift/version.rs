//! Loop versioning for element reads indexed by the induction variable.
//!
//! In `for j in lo..hi`, a heap-tensor read `t[e]` whose index is `e = base ± j`
//! (sums and differences of `j`, integer constants and values defined in front
//! of the loop, with `j` counted once; on a rank-2 tensor, one axis may be
//! indexed by a loop-invariant `base` alone) stays in
//! bounds on every trip exactly when it does at the first and the last trip and
//! the loop makes no more trips than the extent (the indexes of consecutive
//! trips are consecutive integers). In front of such a loop
//! [`FnLower::proved_reads`] tests that for every candidate read, once; the
//! loop is then lowered twice: a copy whose proved reads have no bounds check,
//! run when the loop makes a trip and the test holds, and the ordinary checked
//! copy otherwise, so an out-of-bounds index is reported at the same trip, with
//! the same index and length, as without versioning.
//!
//! Only loops with no nested loop are versioned, so code grows at most
//! twofold per loop.
//!
//! Cranelift hoists loop-invariant loads (heap reads are `readonly` and
//! `can_move`) to the block dominating a loop's header (an unclamped read
//! placed in front of both copies crashed on a read past the end), and may
//! move them further out of enclosing loops. So each copy is entered from a
//! block of its own, a loop with no trip takes the checked copy, and a read
//! whose address does not move with the loop (an invariant index on every
//! axis) stays checked: the clamped index of a checked read keeps every
//! hoisted load in bounds.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{InstBuilder, Value, condcodes::IntCC};
use mad_runtime::jit::context::HEAP_INLINE_RANK;
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::layout::flat_layout;
use super::lower::FnLower;
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
struct Body<'f> {
    f: &'f Function,
    defs: HashMap<ValueId, OpId>,
    /// Values bound by the body's regions (the induction variable, carried values).
    bound: HashSet<ValueId>,
    j: ValueId,
}

impl Body<'_> {
    fn is_i64(&self, v: ValueId) -> bool {
        matches!(self.f.values[v].ty, Type::Scalar(ScalarKind::I64))
    }

    /// The coefficient of the induction variable in `v`, when `v` is an affine
    /// integer expression of it and of loop-invariant values.
    fn coef(&self, v: ValueId, depth: usize) -> Option<i64> {
        if !self.is_i64(v) || depth > MAX_DEPTH {
            return None;
        }
        if v == self.j {
            return Some(1);
        }
        if self.bound.contains(&v) {
            return None;
        }
        let Some(&id) = self.defs.get(&v) else { return Some(0) };
        let op = &self.f.ops[id];
        match (&op.kind, &op.operands[..]) {
            (OpKind::Const(Literal::I64(_)), []) => Some(0),
            (OpKind::Binary(BinaryOp::Add), &[a, b]) => Some(self.coef(a, depth + 1)? + self.coef(b, depth + 1)?),
            (OpKind::Binary(BinaryOp::Sub), &[a, b]) => Some(self.coef(a, depth + 1)? - self.coef(b, depth + 1)?),
            _ => None,
        }
    }
}

fn bound_args(f: &Function, r: &Region, out: &mut HashSet<ValueId>) {
    out.extend(r.args.iter().copied());
    for &id in &r.ops {
        for nr in &f.ops[id].regions {
            bound_args(f, nr, out);
        }
    }
}

impl FnLower<'_, '_> {
    /// The value of the affine index expression `v` (see [`Body::coef`]) when
    /// the induction variable is `jv`, computed in front of the loop.
    fn affine_at(&mut self, body: &Body, v: ValueId, jv: Value) -> Result<Value, JitError> {
        if v == body.j {
            return Ok(jv);
        }
        let Some(&id) = body.defs.get(&v) else { return self.get1(v) };
        let op = &body.f.ops[id];
        match (&op.kind, &op.operands[..]) {
            (OpKind::Const(lit), []) => Ok(self.constant(*lit)),
            (OpKind::Binary(bop), &[a, b]) => {
                let (a, b) = (self.affine_at(body, a, jv)?, self.affine_at(body, b, jv)?);
                Ok(if *bop == BinaryOp::Add { self.b.ins().iadd(a, b) } else { self.b.ins().isub(a, b) })
            }
            _ => Err(super::lower::unsupported("not an affine index")),
        }
    }

    /// For the `scf.for` op `op` with bounds `lo`, `hi` (called in front of it,
    /// after [`FnLower::enter_loop`]): the element reads of its body whose
    /// bounds checks can be proved once, and the flag (`i8`) that is 1 when
    /// they all hold on every trip. `None` when the loop is not versioned.
    pub fn proved_reads(&mut self, op: &Op, lo: Value, hi: Value) -> Result<Option<(Value, HashSet<OpId>)>, JitError> {
        let f = self.f;
        let Some(region) = op.regions.first() else { return Ok(None) };
        let Some(&j) = region.args.first() else { return Ok(None) };
        let (mut defs, mut reads, mut count) = (HashMap::new(), Vec::new(), 0);
        if !scan(f, region, &mut defs, &mut reads, &mut count) || count > MAX_BODY_OPS {
            return Ok(None);
        }
        let mut bound = HashSet::new();
        bound_args(f, region, &mut bound);
        let body = Body { f, defs, bound, j };
        // (extent, index expression, coefficient), deduplicated.
        let mut checks: Vec<(Value, ValueId, i64)> = Vec::new();
        let mut proved = HashSet::new();
        for id in reads {
            let rop = &f.ops[id];
            let (Some(&t), Some(&r)) = (rop.operands.first(), rop.results.first()) else { continue };
            let FlatLayout::Heap { shape, .. } = flat_layout(self.ty(t)) else { continue };
            let idx = &rop.operands[1..];
            if !matches!(self.ty(r), Type::Scalar(_)) || idx.len() != shape.len() || shape.len() > HEAP_INLINE_RANK {
                continue;
            }
            let Some(view) = self.heap_views.get(&t).cloned() else { continue };
            let coefs: Option<Vec<i64>> = idx.iter().map(|&e| body.coef(e, 0).filter(|c| c.abs() <= 1)).collect();
            // A read whose address does not move with the loop stays checked:
            // Cranelift may hoist its load out of the loop and of enclosing
            // loops, past the test that chooses the copy.
            let Some(coefs) = coefs.filter(|cs| cs.iter().any(|&c| c != 0)) else { continue };
            for ((&e, c), &n) in idx.iter().zip(coefs).zip(&view.extents) {
                if !checks.iter().any(|&(m, x, _)| m == n && x == e) {
                    checks.push((n, e, c));
                }
            }
            proved.insert(id);
        }
        if proved.is_empty() {
            return Ok(None);
        }
        // A loop with no trip takes the checked copy: Cranelift may hoist a
        // proved read with a loop-invariant index in front of the loop.
        let mut safe = self.b.ins().icmp(IntCC::SignedLessThan, lo, hi);
        let trips = self.b.ins().isub(hi, lo);
        let last = self.b.ins().iadd_imm_s(hi, -1);
        for (n, e, c) in checks {
            let first = self.affine_at(&body, e, lo)?;
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, first, n);
            safe = self.b.ins().band(safe, ok);
            if c != 0 {
                let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, trips, n);
                let end = self.affine_at(&body, e, last)?;
                let end_ok = self.b.ins().icmp(IntCC::UnsignedLessThan, end, n);
                safe = self.b.ins().band(safe, fits);
                safe = self.b.ins().band(safe, end_ok);
            }
        }
        Ok(Some((safe, proved)))
    }
}

//! Loop versioning for element reads indexed by the induction variable (the candidates
//! come from [`crate::codegen::versions`]).
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

use std::collections::HashSet;

use cranelift_codegen::ir::{InstBuilder, Value, condcodes::IntCC};

use super::JitError;
use super::lower::FnLower;
use crate::codegen::versions::Body;
use crate::ir::{BinaryOp, OpId, OpKind, ValueId};

impl FnLower<'_, '_> {
    /// The value of the affine index expression `v` (see [`Body::coef`]) when
    /// the induction variable is `jv`, computed in front of the loop.
    fn affine_at(&mut self, body: &Body, v: ValueId, jv: Value) -> Result<Value, JitError> {
        if v == body.j {
            return Ok(jv);
        }
        let Some(&id) = body.defs.get(&v) else { return self.get1(v) };
        let op = &self.f.ops[id];
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
    pub fn proved_reads(&mut self, loop_id: Option<OpId>, lo: Value, hi: Value) -> Result<Option<(Value, HashSet<OpId>)>, JitError> {
        let info = self.info;
        let Some(plan) = loop_id.and_then(|id| info.versions.get(&id)) else { return Ok(None) };
        // (extent, index expression, coefficient), deduplicated.
        let mut checks: Vec<(Value, ValueId, i64)> = Vec::new();
        let mut proved = HashSet::new();
        for (id, coefs) in &plan.reads {
            let rop = &self.f.ops[*id];
            let Some(view) = self.heap_views.get(&rop.operands[0]).cloned() else { continue };
            for ((&e, &c), &n) in rop.operands[1..].iter().zip(coefs).zip(&view.extents) {
                if !checks.iter().any(|&(m, x, _)| m == n && x == e) {
                    checks.push((n, e, c));
                }
            }
            proved.insert(*id);
        }
        let body = &plan.body;
        if proved.is_empty() {
            return Ok(None);
        }
        // A loop with no trip takes the checked copy: Cranelift may hoist a
        // proved read with a loop-invariant index in front of the loop.
        let mut safe = self.b.ins().icmp(IntCC::SignedLessThan, lo, hi);
        let trips = self.b.ins().isub(hi, lo);
        let last = self.b.ins().iadd_imm_s(hi, -1);
        for (n, e, c) in checks {
            let first = self.affine_at(body, e, lo)?;
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, first, n);
            safe = self.b.ins().band(safe, ok);
            if c != 0 {
                let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, trips, n);
                let end = self.affine_at(body, e, last)?;
                let end_ok = self.b.ins().icmp(IntCC::UnsignedLessThan, end, n);
                safe = self.b.ins().band(safe, fits);
                safe = self.b.ins().band(safe, end_ok);
            }
        }
        Ok(Some((safe, proved)))
    }
}

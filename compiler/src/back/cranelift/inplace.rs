//! In-place element updates of loop-carried heap tensors.
//!
//! Heap tensors are immutable, so `tensor.insert` copies its operand. In the
//! pattern reverse mode leaves for a read `x[k]` inside a loop (after
//! [`crate::passes::accum`]), a loop-carried accumulator is updated as
//! `acc' = insert(acc, acc[k] + v, k)` every iteration: a whole copy for one
//! element. When nothing else can observe the old `acc`, the insert may write
//! into it instead. That holds when, for an `scf.for` carried value:
//!
//! - its init is a `tensor.full` result used nowhere else (a fresh tensor no
//!   other value points to);
//! - the body yields the result of a heap `tensor.insert` of one element into
//!   the body argument, used nowhere else;
//! - every other use of the body argument is a `tensor.index` (as the indexed
//!   tensor) or `tensor.dim` that runs before the insert.
//!
//! Element loads from such a tensor are then ordinary loads (not read-only and
//! movable as for other heap tensors, [`super::heap`]), so they stay ordered
//! with the stores. An out-of-bounds index records the error and skips the
//! store.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, condcodes::IntCC, types};
use mad_runtime::jit::context::{HEAP_INLINE_RANK, HEAP_OFFSET_DATA, HEAP_OFFSET_DIMS};
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::imports::Routine;
use super::layout::flat_layout;
use super::lower::FnLower;
use crate::ir::{Function, Op, OpId, OpKind, Region, Type, ValueId};

/// The inserts to lower in place and the values whose element loads must stay ordered.
#[derive(Default)]
pub struct InPlace {
    pub inserts: HashSet<OpId>,
    pub mutable: HashSet<ValueId>,
}

fn defs(f: &Function, r: &Region, out: &mut HashMap<ValueId, OpId>) {
    for &id in &r.ops {
        for &v in &f.ops[id].results {
            out.insert(v, id);
        }
        for nr in &f.ops[id].regions {
            defs(f, nr, out);
        }
    }
}

/// Whether every use of `a` in op `id` (and its regions) is a read that may
/// precede an in-place write (`tensor.index` of `a`, `tensor.dim`).
fn reads_only(f: &Function, id: OpId, a: ValueId) -> bool {
    let op = &f.ops[id];
    let ok_here = match op.kind {
        OpKind::Index => !op.operands[1..].contains(&a),
        OpKind::DimOf(_) => true,
        _ => !op.operands.contains(&a),
    };
    ok_here
        && op
            .regions
            .iter()
            .all(|r| !r.yields.contains(&a) && r.ops.iter().all(|&o| reads_only(f, o, a)))
}

fn uses_value(f: &Function, id: OpId, a: ValueId) -> bool {
    let op = &f.ops[id];
    op.operands.contains(&a)
        || op
            .regions
            .iter()
            .any(|r| r.yields.contains(&a) || r.ops.iter().any(|&o| uses_value(f, o, a)))
}

fn for_ops(f: &Function, r: &Region, out: &mut Vec<OpId>) {
    for &id in &r.ops {
        if f.ops[id].kind == OpKind::For {
            out.push(id);
        }
        for nr in &f.ops[id].regions {
            for_ops(f, nr, out);
        }
    }
}

/// Finds the in-place inserts of `f`.
pub fn analyze(f: &Function) -> InPlace {
    let uses = crate::passes::use_counts(f);
    let mut d = HashMap::new();
    defs(f, &f.body, &mut d);
    let mut fors = Vec::new();
    for_ops(f, &f.body, &mut fors);
    let mut out = InPlace::default();
    for id in fors {
        let op = &f.ops[id];
        let n = op.results.len();
        let Some(body) = op.regions.first() else {
            continue;
        };
        if op.operands.len() != n + 2 || body.args.len() != n + 1 || body.yields.len() != n {
            continue;
        }
        for k in 0..n {
            let (init, a, y) = (op.operands[k + 2], body.args[k + 1], body.yields[k]);
            let FlatLayout::Heap { shape, .. } = flat_layout(&f.values[a].ty) else {
                continue;
            };
            if shape.len() > HEAP_INLINE_RANK
                || uses.get(&init) != Some(&1)
                || uses.get(&y) != Some(&1)
                || !d.get(&init).is_some_and(|&i| f.ops[i].kind == OpKind::Full)
            {
                continue;
            }
            let Some(&ins) = d.get(&y) else { continue };
            let iop = &f.ops[ins];
            let Some(pos) = body.ops.iter().position(|&o| o == ins) else {
                continue;
            };
            if iop.kind != OpKind::Insert
                || iop.operands.len() != shape.len() + 2
                || iop.operands[0] != a
                || iop.operands[1..].contains(&a)
                || !matches!(f.values[iop.operands[1]].ty, Type::Scalar(_))
                || body.yields.contains(&a)
            {
                continue;
            }
            let before = body.ops[..pos].iter().all(|&o| reads_only(f, o, a));
            let after = body.ops[pos + 1..].iter().all(|&o| !uses_value(f, o, a));
            if before && after {
                out.inserts.insert(ins);
                out.mutable.insert(a);
                out.mutable.insert(y);
            }
        }
    }
    out
}

impl FnLower<'_, '_> {
    /// Lowers insert `op` (one of [`InPlace::inserts`]) as a store into its operand.
    pub fn lower_inplace_insert(&mut self, op: &Op) -> Result<(), JitError> {
        let (t, v, r) = (op.operands[0], op.operands[1], op.results[0]);
        let FlatLayout::Heap { elem, .. } = flat_layout(self.ty(t)) else {
            return Err(super::lower::unsupported(
                "in-place insert of a non-heap tensor",
            ));
        };
        let slot = self.get1(t)?;
        let x = self.get1(v)?;
        let zeros = self.b.ins().iconst(
            types::I64,
            mad_runtime::jit::context::HEAP_ZEROS.as_ptr() as i64,
        );
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, slot, 0);
        let header = self.b.ins().select(null, zeros, slot);
        let mut off = self.b.ins().iconst(types::I64, 0);
        let mut bad = self.b.ins().iconst(types::I8, 0);
        for (axis, &iv) in op.operands[2..].iter().enumerate() {
            let i = self.get1(iv)?;
            let flags = MemFlagsData::trusted().with_readonly().with_can_move();
            let n = self.b.ins().load(
                types::I64,
                flags,
                header,
                HEAP_OFFSET_DIMS + 8 * axis as i32,
            );
            let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
            self.error_if(oob, Routine::ErrorIndex, &[i, n])?;
            bad = self.b.ins().bor(bad, oob);
            let scaled = self.b.ins().imul(off, n);
            off = self.b.ins().iadd(scaled, i);
        }
        let store_b = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(bad, cont, &[], store_b, &[]);
        self.b.switch_to_block(store_b);
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        let data = self
            .b
            .ins()
            .load(types::I64, flags, header, HEAP_OFFSET_DATA);
        let bytes = self.b.ins().imul_imm_s(off, super::heap::elem_size(elem));
        let addr = self.b.ins().iadd(data, bytes);
        self.b.ins().store(MemFlagsData::trusted(), x, addr, 0);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        self.set(r, vec![slot]);
        Ok(())
    }
}

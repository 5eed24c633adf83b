//! In-place element updates of loop-carried heap tensors.
//!
//! Heap tensors are immutable, so `tensor.insert` copies its operand. In the
//! pattern reverse mode leaves for a read `x[k]` inside a loop (after
//! [`crate::passes::accum`]), a loop-carried accumulator is updated as
//! `acc' = insert(acc, acc[k] + v, k)` every iteration: a whole copy for one
//! element. When nothing else can observe the old `acc`, the insert may write
//! into it instead. That holds when, for an `scf.for` carried value:
//!
//! - its init is a fresh tensor no other value points to: a `tensor.full` result,
//!   or the result of an earlier loop whose carried value is updated in place,
//!   used nowhere else but in `tensor.dim` (its extents do not change);
//! - the body yields the result of a chain of heap `tensor.insert`s, the first
//!   into the body argument and each next into the result of the one before (the
//!   writes of one iteration, up to [`MAX_CHAIN`]), each of one element (a scalar
//!   at a full index) or of one row (a tensor at a leading index: `m[i] = vec3(..)`,
//!   `m[i] = row`, `m[i][j] = x`); the last result is used nowhere else;
//! - every other use of the body argument and of each result along the chain is a
//!   `tensor.index` (as the indexed tensor) or `tensor.dim` that runs before the
//!   insert that writes it, and none comes after.
//!
//! Element loads from such a tensor are then ordinary loads (not read-only and
//! movable as for other heap tensors, [`super::heap`]), so they stay ordered
//! with the stores. An out-of-bounds index records the error and skips the
//! store; a row whose shape differs from the tensor's trailing extents takes the
//! copying insert, which reports the mismatch.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, condcodes::IntCC, types};
use mad_runtime::jit::context::{HEAP_INLINE_RANK, HEAP_OFFSET_DATA};
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::imports::Routine;
use super::layout::flat_layout;
use super::lower::FnLower;
use crate::ir::{Function, Op, OpId, OpKind, Region, ValueId};

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

/// Counts, per value, its uses as the operand of a `tensor.dim`.
fn dim_uses(f: &Function, r: &Region, out: &mut HashMap<ValueId, usize>) {
    for &id in &r.ops {
        let op = &f.ops[id];
        if let (OpKind::DimOf(_), Some(&v)) = (&op.kind, op.operands.first()) {
            *out.entry(v).or_default() += 1;
        }
        for nr in &op.regions {
            dim_uses(f, nr, out);
        }
    }
}

/// The most inserts of one chain written in place (one loop iteration's writes).
const MAX_CHAIN: usize = 64;

/// Finds the in-place inserts of `f`.
pub fn analyze(f: &Function) -> InPlace {
    let uses = crate::passes::use_counts(f);
    let mut dims = HashMap::new();
    dim_uses(f, &f.body, &mut dims);
    let mut d = HashMap::new();
    defs(f, &f.body, &mut d);
    let mut fors = Vec::new();
    for_ops(f, &f.body, &mut fors);
    let mut out = InPlace::default();
    // Results of loops (in program order: an outer loop before its inner ones, a loop
    // before the later ones) whose carried tensor is written in place: fresh tensors too.
    let mut fresh: HashSet<ValueId> = HashSet::new();
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
            let other_uses = uses.get(&init).copied().unwrap_or(0) - dims.get(&init).copied().unwrap_or(0);
            if shape.len() > HEAP_INLINE_RANK
                || other_uses != 1
                || uses.get(&y) != Some(&1)
                || !(fresh.contains(&init) || d.get(&init).is_some_and(|&i| f.ops[i].kind == OpKind::Full))
            {
                continue;
            }
            // The chain of inserts from the body argument to the yield, walked back:
            // `y = insert(t_m, …)`, `t_m = insert(t_m−1, …)`, …, `t_1 = insert(a, …)`
            // (several writes into one iteration, `m[i][0] = x; m[i][1] = y;`).
            let mut chain: Vec<(OpId, usize)> = Vec::new();
            let mut cur = y;
            let complete = loop {
                let Some(&ins) = d.get(&cur) else { break false };
                let iop = &f.ops[ins];
                let Some(pos) = body.ops.iter().position(|&o| o == ins) else {
                    break false;
                };
                if iop.kind != OpKind::Insert || iop.operands.len() < 3 || chain.len() >= MAX_CHAIN {
                    break false;
                }
                // A scalar at a full index, or a row at a leading one.
                let indices = iop.operands.len() - 2;
                let value_fits = match flat_layout(&f.values[iop.operands[1]].ty) {
                    FlatLayout::Scalar(_) => indices == shape.len(),
                    FlatLayout::Small { shape: row, .. } => indices < shape.len() && row.len() == shape.len() - indices,
                    FlatLayout::Heap { shape: row, .. } => indices < shape.len() && row.len() == shape.len() - indices,
                    _ => false,
                };
                if !value_fits {
                    break false;
                }
                chain.push((ins, pos));
                let target = iop.operands[0];
                if target == a {
                    break true;
                }
                cur = target;
            };
            if !complete {
                continue;
            }
            chain.reverse();
            // Each link — the argument, then every insert's result but the last — is read
            // only before the insert that writes it (which must not take it as its value or
            // an index), used nowhere after, and not yielded.
            let mut ok = chain.windows(2).all(|w| w[0].1 < w[1].1);
            let mut from = 0;
            for (j, &(ins, pos)) in chain.iter().enumerate() {
                let link = if j == 0 { a } else { f.ops[chain[j - 1].0].results[0] };
                ok = ok
                    && !f.ops[ins].operands[1..].contains(&link)
                    && !body.yields.contains(&link)
                    && body.ops[from..pos].iter().all(|&o| reads_only(f, o, link))
                    && body.ops[pos + 1..].iter().all(|&o| !uses_value(f, o, link));
                from = pos + 1;
            }
            if ok {
                for (j, &(ins, _)) in chain.iter().enumerate() {
                    out.inserts.insert(ins);
                    if j > 0 {
                        out.mutable.insert(f.ops[chain[j - 1].0].results[0]);
                    }
                }
                out.mutable.insert(a);
                out.mutable.insert(y);
                out.mutable.insert(op.results[k]);
                fresh.insert(op.results[k]);
            }
        }
    }
    out
}

impl FnLower<'_, '_> {
    /// Lowers insert `op` (one of [`InPlace::inserts`]) as a store into its operand: one
    /// element, or a fixed-size row's elements at the row's offset.
    pub fn lower_inplace_insert(&mut self, op: &Op) -> Result<(), JitError> {
        let (t, v, r) = (op.operands[0], op.operands[1], op.results[0]);
        let FlatLayout::Heap { elem, shape } = flat_layout(self.ty(t)) else {
            return Err(super::lower::unsupported(
                "in-place insert of a non-heap tensor",
            ));
        };
        // The row's extents: fixed (a small tensor), read at run time (a heap one), or none
        // (a scalar).
        let (row_shape, heap_row): (Vec<Option<usize>>, bool) = match flat_layout(self.ty(v)) {
            FlatLayout::Small { shape, .. } => (shape.into_iter().map(Some).collect(), false),
            FlatLayout::Heap { shape, .. } => (vec![None; shape.len()], true),
            _ => (Vec::new(), false),
        };
        let slot = self.get1(t)?;
        let xs = self.get(v)?;
        let header = self.heap_header(slot);
        let mut off = self.b.ins().iconst(types::I64, 0);
        let mut bad = self.b.ins().iconst(types::I8, 0);
        for (axis, &iv) in op.operands[2..].iter().enumerate() {
            let i = self.get1(iv)?;
            let n = self.heap_extent(header, axis);
            let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
            self.error_if(oob, Routine::ErrorIndex, &[i, n])?;
            bad = self.b.ins().bor(bad, oob);
            let scaled = self.b.ins().imul(off, n);
            off = self.b.ins().iadd(scaled, i);
        }
        // A row: its extents against the trailing ones (those the types leave to run time),
        // and its element count.
        let lead = op.operands.len() - 2;
        let row_header = heap_row.then(|| self.heap_header(xs[0]));
        let mut mismatch = self.b.ins().iconst(types::I8, 0);
        let mut row_len = self.b.ins().iconst(types::I64, 1);
        for (j, &len) in row_shape.iter().enumerate() {
            let axis = lead + j;
            let have = match (len, row_header) {
                (Some(len), _) => self.b.ins().iconst(types::I64, len as i64),
                (None, Some(h)) => self.heap_extent(h, j),
                (None, None) => unreachable!("a row without extents"),
            };
            row_len = self.b.ins().imul(row_len, have);
            if len.is_some() && shape.get(axis).copied().flatten() == len {
                continue;
            }
            let want = self.heap_extent(header, axis);
            let differs = self.b.ins().icmp(IntCC::NotEqual, want, have);
            mismatch = self.b.ins().bor(mismatch, differs);
        }
        let store_b = self.b.create_block();
        let check_b = self.b.create_block();
        let cont = self.b.create_block();
        self.b.append_block_param(cont, types::I64);
        self.b.ins().brif(bad, cont, &[slot.into()], check_b, &[]);
        self.b.switch_to_block(check_b);
        if row_shape.is_empty() {
            self.b.ins().jump(store_b, &[]);
        } else {
            // A row of another shape: the copying insert reports the mismatch.
            let copy_b = self.b.create_block();
            self.b.set_cold_block(copy_b);
            self.b.ins().brif(mismatch, copy_b, &[], store_b, &[]);
            self.b.switch_to_block(copy_b);
            self.apply(mad_runtime::jit::TensorOp::Insert, &op.operands, r)?;
            let copied = self.get1(r)?;
            self.b.ins().jump(cont, &[copied.into()]);
        }
        self.b.switch_to_block(store_b);
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        let data = self
            .b
            .ins()
            .load(types::I64, flags, header, HEAP_OFFSET_DATA);
        let size = super::heap::elem_size(elem);
        let start = self.b.ins().imul(off, row_len);
        let bytes = self.b.ins().imul_imm_s(start, size);
        let addr = self.b.ins().iadd(data, bytes);
        match row_header {
            None => {
                for (k, x) in xs.iter().enumerate() {
                    self.b.ins().store(MemFlagsData::trusted(), *x, addr, (k as i64 * size) as i32);
                }
                self.b.ins().jump(cont, &[slot.into()]);
            }
            Some(h) => {
                // Element by element from the row's data (`row_len` of them).
                let src = self.b.ins().load(types::I64, flags, h, HEAP_OFFSET_DATA);
                let ty = super::layout::clif_kind(elem);
                let head = self.b.create_block();
                let body = self.b.create_block();
                self.b.append_block_param(head, types::I64);
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b.ins().jump(head, &[zero.into()]);
                self.b.switch_to_block(head);
                let k = self.b.block_params(head)[0];
                let more = self.b.ins().icmp(IntCC::SignedLessThan, k, row_len);
                self.b.ins().brif(more, body, &[], cont, &[slot.into()]);
                self.b.switch_to_block(body);
                let kb = self.b.ins().imul_imm_s(k, size);
                let from = self.b.ins().iadd(src, kb);
                let to = self.b.ins().iadd(addr, kb);
                let x = self.b.ins().load(ty, MemFlagsData::trusted(), from, 0);
                self.b.ins().store(MemFlagsData::trusted(), x, to, 0);
                let next = self.b.ins().iadd_imm_s(k, 1);
                self.b.ins().jump(head, &[next.into()]);
            }
        }
        self.b.switch_to_block(cont);
        let out = self.b.block_params(cont)[0];
        self.set(r, vec![out]);
        Ok(())
    }
}

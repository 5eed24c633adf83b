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
//!   writes of one iteration, up to `MAX_CHAIN`), each of one element (a scalar
//!   at a full index) or of one row (a tensor at a leading index: `m[i] = vec3(..)`,
//!   `m[i] = row`, `m[i][j] = x`); the last result is used nowhere else;
//! - every other use of the body argument and of each result along the chain is a
//!   `tensor.index` (as the indexed tensor) or `tensor.dim` that runs before the
//!   insert that writes it, and none comes after.
//!
//! Element loads from such a tensor are then ordinary loads (not read-only and
//! movable as for other heap tensors, the back end's heap reads), so they stay ordered
//! with the stores. An out-of-bounds index records the error and skips the
//! store; a row whose shape differs from the tensor's trailing extents takes the
//! copying insert, which reports the mismatch.

use std::collections::{HashMap, HashSet};

use mad_runtime::jit::context::HEAP_INLINE_RANK;
use mad_runtime::jit::layout::FlatLayout;

use super::layout::flat_layout;
use crate::analysis::{definitions, for_each_op, for_loops, use_counts};
use crate::ir::{Function, OpId, OpKind, ValueId};

/// The inserts to lower in place and the values whose element loads must stay ordered.
#[derive(Default)]
pub struct InPlace {
    pub inserts: HashSet<OpId>,
    pub mutable: HashSet<ValueId>,
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

/// The most inserts of one chain written in place (one loop iteration's writes).
const MAX_CHAIN: usize = 64;

/// Finds the in-place inserts of `f`.
pub fn analyze(f: &Function) -> InPlace {
    let uses = use_counts(f);
    // Per value, its uses as the operand of a `tensor.dim`.
    let mut dims: HashMap<ValueId, usize> = HashMap::new();
    for_each_op(f, &f.body, &mut |_, op| {
        if let (OpKind::DimOf(_), Some(&v)) = (&op.kind, op.operands.first()) {
            *dims.entry(v).or_default() += 1;
        }
    });
    let d = definitions(f, &f.body);
    let fors = for_loops(f, &f.body);
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

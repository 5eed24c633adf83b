//! Sparse accumulation into loop-carried tensors.
//!
//! Reverse mode turns a read `x[k]` inside a loop into the adjoint update
//! `acc' = acc + insert(zeros, v, k)`: a whole-tensor add (and a whole-tensor
//! copy for the insert) per iteration, for one nonzero element (several reads give a chain
//! of inserts, `insert(insert(zeros, v₁, k₁), v₂, k₂)`). When `acc` is a
//! value carried by an `scf.for` whose init is that same `zeros`
//! (`tensor.full(+0.0, …)`), the update is rewritten to
//! `acc' = insert(acc, acc[k] + v, k)` (one insert per insert of the chain, each element
//! read from `acc` before the first write). Without it, `grad` of a loop over a `vector`
//! of length n cost O(n²). (A body that reads two different elements, `x[i] * x[i + 1]`,
//! still builds its chain on a copy of the zeros each iteration: the chain's inner insert is
//! read at the other element, so it stays.)
//!
//! The rewrite is exact, bit for bit: `acc` starts at `+0.0` everywhere and is
//! only ever changed by IEEE additions, and a sum is `-0.0` only when both of
//! its terms are, so no element of `acc` is ever `-0.0`; hence `acc[j] + 0.0`
//! is `acc[j]` for every `j ≠ k` (a NaN element, always a computed, quiet one,
//! is returned unchanged). The shapes agree (the carried value always has the
//! shape of its init, which is the insert's base), and an out-of-bounds `k`
//! fails in `acc[k]` with the same bounds as in the insert it replaces. The
//! operand order of the add is kept.

use std::collections::HashMap;

use crate::analysis::{definitions, for_loops};
use crate::ir::{BinaryOp, Function, Literal, OpId, OpKind, Type, ValueId};

/// The longest chain of inserts rewritten (a term that reads one element of a carried tensor
/// more often than this keeps its whole-tensor add).
const MAX_CHAIN: usize = 16;

/// Whether `v` is `tensor.full` of a `+0.0` constant, with a float element type.
fn is_plus_zero_full(f: &Function, d: &HashMap<ValueId, OpId>, v: ValueId) -> bool {
    let Some(&id) = d.get(&v) else { return false };
    let op = &f.ops[id];
    if op.kind != OpKind::Full || !matches!(f.ty(v), Type::Tensor { elem, .. } if elem.is_float()) {
        return false;
    }
    let Some(&c) = d.get(&op.operands[0]) else {
        return false;
    };
    match f.ops[c].kind {
        OpKind::Const(Literal::F64(x)) => x.to_bits() == 0,
        OpKind::Const(Literal::F32(x)) => x.to_bits() == 0,
        _ => false,
    }
}

/// One planned rewrite: loop `for_id`, carried index `k`, the add op, whether
/// the carried value is the add's left operand, and the inserts of the added tensor, from the
/// one on the zeros outward: each inserted value and its indices.
struct Plan {
    for_id: OpId,
    k: usize,
    add: OpId,
    acc_left: bool,
    inserts: Vec<(ValueId, Vec<ValueId>)>,
}

/// Rewrites every sparse accumulation in `f`; returns whether anything changed.
pub fn sparse_accumulate(f: &mut Function) -> bool {
    let d = definitions(f, &f.body);
    let fors = for_loops(f, &f.body);
    let mut plans = Vec::new();
    for id in fors {
        let op = &f.ops[id];
        let n = op.results.len();
        if op.regions.len() != 1 || op.operands.len() != n + 2 {
            continue;
        }
        let body = &op.regions[0];
        if body.args.len() != n + 1 || body.yields.len() != n {
            continue;
        }
        for k in 0..n {
            let (init, arg, y) = (op.operands[k + 2], body.args[k + 1], body.yields[k]);
            if !is_plus_zero_full(f, &d, init) {
                continue;
            }
            let Some(&add) = d.get(&y) else { continue };
            if !body.ops.contains(&add) || f.ops[add].kind != OpKind::Binary(BinaryOp::Add) {
                continue;
            }
            let (a, b) = (f.ops[add].operands[0], f.ops[add].operands[1]);
            let (acc_left, x) = if a == arg {
                (true, b)
            } else if b == arg {
                (false, a)
            } else {
                continue;
            };
            if x == arg || f.ty(y) != f.ty(arg) || f.ty(x) != f.ty(arg) {
                continue;
            }
            let Type::Tensor { shape, .. } = f.ty(arg) else {
                continue;
            };
            // `x` is a chain of element inserts that starts at the zeros (a read of the same
            // element twice in one iteration gives two).
            let mut inserts = Vec::new();
            let mut at = x;
            let complete = loop {
                if at == init {
                    break true;
                }
                let Some(&ins) = d.get(&at) else { break false };
                let iop = &f.ops[ins];
                if iop.kind != OpKind::Insert
                    || iop.operands.len() != shape.len() + 2
                    || !matches!(f.ty(iop.operands[1]), Type::Scalar(_))
                    || inserts.len() >= MAX_CHAIN
                {
                    break false;
                }
                inserts.push((iop.operands[1], iop.operands[2..].to_vec()));
                at = iop.operands[0];
            };
            if !complete || inserts.is_empty() {
                continue;
            }
            inserts.reverse();
            // An insert at the same element as a later one is overwritten by it: only the
            // last one per element counts (one read `x[k]` used twice gives two at `k`).
            let mut last: Vec<(ValueId, Vec<ValueId>)> = Vec::new();
            for (v, idx) in inserts.into_iter().rev() {
                if !last.iter().any(|(_, j)| *j == idx) {
                    last.push((v, idx));
                }
            }
            last.reverse();
            let inserts = last;
            plans.push(Plan {
                for_id: id,
                k,
                add,
                acc_left,
                inserts,
            });
        }
    }
    let changed = !plans.is_empty();
    for p in plans {
        let arg = f.ops[p.for_id].regions[0].args[p.k + 1];
        let span = f.span(p.add);
        let acc_ty = f.ty(arg).clone();
        // `acc + insert(…insert(zeros, v₁, i₁)…, vₙ, iₙ)` is `acc` with element iⱼ set to
        // `acc[iⱼ] + vⱼ`, in insert order (a later insert at the same element wins, as it
        // does in the added tensor). Every element is read from `acc` before the first
        // write, so the writes can update `acc` in place.
        let mut new_ops = Vec::new();
        let mut sums = Vec::new();
        for (value, idx) in &p.inserts {
            let elem_ty = f.ty(*value).clone();
            let mut idx_ops = vec![arg];
            idx_ops.extend(idx);
            let get = f.new_op(OpKind::Index, idx_ops, vec![elem_ty.clone()], span);
            let old = f.ops[get].results[0];
            let terms = if p.acc_left { vec![old, *value] } else { vec![*value, old] };
            let sum = f.new_op(OpKind::Binary(BinaryOp::Add), terms, vec![elem_ty], span);
            new_ops.extend([get, sum]);
            sums.push(f.ops[sum].results[0]);
        }
        let mut y = arg;
        for ((_, idx), s) in p.inserts.iter().zip(sums) {
            let mut put_ops = vec![y, s];
            put_ops.extend(idx);
            let put = f.new_op(OpKind::Insert, put_ops, vec![acc_ty.clone()], span);
            new_ops.push(put);
            y = f.ops[put].results[0];
        }
        let body = &mut f.ops[p.for_id].regions[0];
        body.ops.extend(new_ops);
        body.yields[p.k] = y;
    }
    changed
}

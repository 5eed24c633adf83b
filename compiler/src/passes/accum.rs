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
//! of length n cost O(n²). Reverse mode writes a second adjoint into the same tensor in one
//! iteration as a sparse add, `insert(t, t[k₂] + v₂, k₂)`: a chain of such adds (reads of
//! two elements, `x[i] * x[i + 1]`, or of one element twice) becomes sparse adds into `acc`,
//! the values at one index value summed first.
//!
//! [`fuse_accumulating_loops`] handles nested loops: the inner loop's accumulator, zeros
//! plus its reads, added to the outer one each outer iteration, starts at the outer
//! accumulator instead.
//!
//! The overwriting rewrite is exact, bit for bit: `acc` starts at `+0.0` everywhere and is
//! only ever changed by IEEE additions, and a sum is `-0.0` only when both of
//! its terms are, so no element of `acc` is ever `-0.0`; hence `acc[j] + 0.0`
//! is `acc[j]` for every `j ≠ k` (a NaN element, always a computed, quiet one,
//! is returned unchanged). The shapes agree (the carried value always has the
//! shape of its init, which is the insert's base), and an out-of-bounds `k`
//! fails in `acc[k]` with the same bounds as in the insert it replaces. The
//! operand order of the add is kept. The sparse adds and the loop fusion are exact up to the
//! order of additions (two index values that meet at run time, a sum started at the outer
//! accumulator rather than at zero), as any sparse accumulation of adjoints is.

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
    /// Whether the inserts add into their elements (every one after the first a sparse add
    /// `insert(t, t[k] + v, k)`, recorded as `v`) rather than overwrite them.
    additive: bool,
}

/// `v` when `value` is `t[idx] + v` or `v + t[idx]` (a sparse add into element `idx` of `t`).
fn sparse_add_term(f: &Function, d: &HashMap<ValueId, OpId>, t: ValueId, value: ValueId, idx: &[ValueId]) -> Option<ValueId> {
    let add = &f.ops[*d.get(&value)?];
    if add.kind != OpKind::Binary(BinaryOp::Add) {
        return None;
    }
    let reads_t = |v: ValueId| {
        d.get(&v).is_some_and(|&g| {
            let get = &f.ops[g];
            get.kind == OpKind::Index && get.operands[0] == t && get.operands[1..] == *idx
        })
    };
    match add.operands[..] {
        [a, b] if reads_t(a) => Some(b),
        [a, b] if reads_t(b) => Some(a),
        _ => None,
    }
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
            // element twice in one iteration gives two). Reverse mode writes a second adjoint
            // into an element as a sparse add, `insert(t, t[k] + v, k)`.
            let mut inserts = Vec::new();
            let mut additive = true;
            let mut rows = false;
            let mut at = x;
            let complete = loop {
                if at == init {
                    break true;
                }
                let Some(&ins) = d.get(&at) else { break false };
                let iop = &f.ops[ins];
                // An element (a scalar at a full index) or a row (a tensor at a leading one).
                let element = iop.operands.len() == shape.len() + 2 && matches!(f.ty(iop.operands[1]), Type::Scalar(_));
                let row = iop.operands.len() > 2
                    && iop.operands.len() < shape.len() + 2
                    && matches!(f.ty(iop.operands[1]), Type::Tensor { .. });
                if iop.kind != OpKind::Insert || !(element || row) || inserts.len() >= MAX_CHAIN {
                    break false;
                }
                rows |= row;
                let (target, value, idx) = (iop.operands[0], iop.operands[1], &iop.operands[2..]);
                // Both readings: the value written, and the term a sparse add adds.
                let term = sparse_add_term(f, &d, target, value, idx);
                additive &= term.is_some() || target == init;
                inserts.push((value, term.unwrap_or(value), idx.to_vec()));
                at = target;
            };
            // Rows are rewritten only as sparse adds.
            if !complete || inserts.is_empty() || (rows && !additive) {
                continue;
            }
            inserts.reverse();
            if additive {
                let inserts = inserts.into_iter().map(|(_, term, idx)| (term, idx)).collect();
                plans.push(Plan { for_id: id, k, add, acc_left, inserts, additive });
                continue;
            }
            let inserts: Vec<(ValueId, Vec<ValueId>)> = inserts.into_iter().map(|(value, _, idx)| (value, idx)).collect();
            // An insert at the same element as a later one is overwritten by it: only the
            // last one per element counts.
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
                additive: false,
            });
        }
    }
    let changed = !plans.is_empty();
    for p in plans {
        if p.additive {
            rewrite_additive(f, &p);
        } else {
            rewrite_overwriting(f, &p);
        }
    }
    changed
}

/// `acc + (zeros with vⱼ added at iⱼ, in order)` (elements or rows) as sparse adds into `acc`: the values of
/// inserts at the same index values are summed first, in order (as the added tensor sums
/// them), then each distinct index is one `insert(cur, cur[i] + w, i)`. Exact but for the
/// order of additions when two distinct index values meet at run time.
fn rewrite_additive(f: &mut Function, p: &Plan) {
    let arg = f.ops[p.for_id].regions[0].args[p.k + 1];
    let span = f.span(p.add);
    let acc_ty = f.ty(arg).clone();
    let mut groups: Vec<(Vec<ValueId>, Vec<ValueId>)> = Vec::new();
    for (value, idx) in &p.inserts {
        match groups.iter_mut().find(|(i, _)| i == idx) {
            Some((_, vs)) => vs.push(*value),
            None => groups.push((idx.clone(), vec![*value])),
        }
    }
    let mut new_ops = Vec::new();
    let mut cur = arg;
    for (idx, values) in groups {
        let elem_ty = f.ty(values[0]).clone();
        let mut w = values[0];
        for &v in &values[1..] {
            let sum = f.new_op(OpKind::Binary(BinaryOp::Add), vec![w, v], vec![elem_ty.clone()], span);
            new_ops.push(sum);
            w = f.ops[sum].results[0];
        }
        let mut idx_ops = vec![cur];
        idx_ops.extend(&idx);
        let get = f.new_op(OpKind::Index, idx_ops, vec![elem_ty.clone()], span);
        let old = f.ops[get].results[0];
        let terms = if p.acc_left { vec![old, w] } else { vec![w, old] };
        let sum = f.new_op(OpKind::Binary(BinaryOp::Add), terms, vec![elem_ty], span);
        let mut put_ops = vec![cur, f.ops[sum].results[0]];
        put_ops.extend(&idx);
        let put = f.new_op(OpKind::Insert, put_ops, vec![acc_ty.clone()], span);
        new_ops.extend([get, sum, put]);
        cur = f.ops[put].results[0];
    }
    let body = &mut f.ops[p.for_id].regions[0];
    body.ops.extend(new_ops);
    body.yields[p.k] = cur;
}

fn rewrite_overwriting(f: &mut Function, p: &Plan) {
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

/// The tensor that insert `ins` adds into, when it is a sparse add `insert(t, a + v, idx)`
/// (or `v + a`): `a` reads `t[idx]` (read nowhere else), or `a` is the value the insert
/// that made `t` wrote at the same `idx` (a read of `t[idx]` forwarded). `value_uses` is how
/// often the inserted value may be read (2 when the next link forwards it). Returns the
/// link's [`Link`].
fn sparse_add_target(f: &Function, d: &HashMap<ValueId, OpId>, uses: &HashMap<ValueId, usize>, ins: OpId, value_uses: usize) -> Option<Link> {
    let iop = &f.ops[ins];
    if iop.kind != OpKind::Insert || iop.operands.len() < 3 || uses.get(&iop.operands[1]) != Some(&value_uses) {
        return None;
    }
    let (target, value, idx) = (iop.operands[0], iop.operands[1], &iop.operands[2..]);
    let add = &f.ops[*d.get(&value)?];
    if add.kind != OpKind::Binary(BinaryOp::Add) {
        return None;
    }
    add.operands.iter().find_map(|&a| {
        let def = &f.ops[*d.get(&a)?];
        if def.kind == OpKind::Index && def.operands[0] == target && def.operands[1..] == *idx && uses.get(&a) == Some(&1) {
            return Some(Link { from: target, reads: 2, forwarded: false });
        }
        let made = &f.ops[*d.get(&target)?];
        (made.kind == OpKind::Insert && made.operands.len() >= 3 && made.operands[1] == a && made.operands[2..] == *idx)
            .then_some(Link { from: target, reads: 1, forwarded: true })
    })
}

/// One link of an accumulation chain.
struct Link {
    /// The tensor the link starts from.
    from: ValueId,
    /// How many uses of `from` the link accounts for.
    reads: usize,
    /// Whether the link reads the value the link before it inserted (a forwarded read).
    forwarded: bool,
}

/// The link of an accumulation chain ending at `at`, defined in `ops`: a sparse add
/// ([`sparse_add_target`], its value read `value_uses` times) or an accumulating loop
/// ([`accumulates`]).
fn accumulation_link(f: &Function, d: &HashMap<ValueId, OpId>, uses: &HashMap<ValueId, usize>, ops: &[OpId], at: ValueId, value_uses: usize) -> Option<Link> {
    let def = *d.get(&at)?;
    if !ops.contains(&def) {
        return None;
    }
    let dop = &f.ops[def];
    match dop.kind {
        OpKind::Insert => sparse_add_target(f, d, uses, def, value_uses),
        OpKind::For => {
            let slot = dop.results.iter().position(|&r| r == at)?;
            accumulates(f, d, uses, def, slot).then(|| Link { from: dop.operands[slot + 2], reads: 1, forwarded: false })
        }
        _ => None,
    }
}

/// Whether carried slot `k` of loop `id` only accumulates: each iteration adds into elements
/// of its body argument by sparse adds, `insert(t, t[i] + v, i)` (or `v + t[i]`), or by a
/// nested loop that accumulates the same way, and reads it nowhere else. Such a loop computes
/// `init + (what it adds)`.
fn accumulates(f: &Function, d: &HashMap<ValueId, OpId>, uses: &HashMap<ValueId, usize>, id: OpId, k: usize) -> bool {
    let op = &f.ops[id];
    let n = op.results.len();
    let Some(body) = op.regions.first() else { return false };
    if op.operands.len() != n + 2 || body.args.len() != n + 1 || body.yields.len() != n {
        return false;
    }
    let arg = body.args[k + 1];
    let mut at = body.yields[k];
    // The last value is read once, by the yield.
    let mut reads = 1;
    let mut value_uses = 1;
    for _ in 0..=MAX_CHAIN {
        if uses.get(&at).copied().unwrap_or(0) != reads {
            return false;
        }
        if at == arg {
            return true;
        }
        let Some(link) = accumulation_link(f, d, uses, &body.ops, at, value_uses) else {
            return false;
        };
        (at, reads, value_uses) = (link.from, link.reads, if link.forwarded { 2 } else { 1 });
    }
    false
}

/// Where the first link `link` of an accumulation chain (whose value is `at`) reads the zeros
/// it starts at: the loop's init of the slot of `at`, or the insert's target and the read of
/// it in the inserted sum.
fn zero_sites(f: &Function, d: &HashMap<ValueId, OpId>, link: OpId, at: ValueId, zeros: ValueId) -> Vec<(OpId, usize)> {
    let op = &f.ops[link];
    if op.kind == OpKind::For {
        let slot = op.results.iter().position(|&r| r == at).expect("the loop defines the link's value");
        return vec![(link, slot + 2)];
    }
    let mut sites = vec![(link, 0)];
    let add = &f.ops[d[&op.operands[1]]];
    for v in &add.operands {
        if let Some(&g) = d.get(v)
            && f.ops[g].kind == OpKind::Index
            && f.ops[g].operands[0] == zeros
        {
            sites.push((g, 0));
        }
    }
    sites
}

/// Starts accumulating loops at the tensor they are added to: `acc + L`, where `L` is the end
/// of a chain of accumulating links, each started at the one before and used nowhere else, the
/// first at `+0.0` zeros — a link is an `scf.for` whose carried slot only accumulates
/// ([`accumulates`]) or a sparse add `insert(t, t[i] + v, i)` — becomes the chain started at
/// `acc`. Reverse mode leaves this for a loop
/// nested in another (the inner loop's adjoint, zeros plus its reads, added to the outer
/// accumulator each outer iteration): a whole-tensor zero fill and add per outer iteration
/// become nothing, and with [`crate::codegen::inplace`] the nested loops update one buffer.
/// The sum is the same up to the order of additions. Returns whether anything changed.
pub fn fuse_accumulating_loops(f: &mut Function) -> bool {
    let d = definitions(f, &f.body);
    let uses = crate::analysis::use_counts(f);
    // Per rewrite: the operands (op, position) that read the zeros the chain starts at, which
    // now read `acc`; `acc`; the sum; the chain's last value, which replaces the sum.
    let mut rewrites: Vec<(Vec<(OpId, usize)>, ValueId, ValueId, ValueId)> = Vec::new();
    let mut regions: Vec<&crate::ir::Region> = vec![&f.body];
    while let Some(r) = regions.pop() {
        for (pos, &id) in r.ops.iter().enumerate() {
            let op = &f.ops[id];
            regions.extend(op.regions.iter());
            if op.kind != OpKind::Binary(BinaryOp::Add) || !matches!(f.ty(op.results[0]), Type::Tensor { .. }) {
                continue;
            }
            for (l, acc) in [(op.operands[1], op.operands[0]), (op.operands[0], op.operands[1])] {
                if l == acc || f.ty(acc) != f.ty(l) || uses.get(&l) != Some(&1) {
                    continue;
                }
                // `l` is the last of a chain of accumulating links (loops and sparse adds),
                // each started at the one before, the first at zeros: `L₂(init = L₁(init = 0))`.
                let mut at = l;
                let mut reads = 1;
                let mut value_uses = 1;
                let mut first = None;
                for _ in 0..=MAX_CHAIN {
                    if uses.get(&at).copied().unwrap_or(0) != reads {
                        break;
                    }
                    let Some(link) = accumulation_link(f, &d, &uses, &r.ops[..pos], at, value_uses) else { break };
                    let def = d[&at];
                    if is_plus_zero_full(f, &d, link.from) {
                        let lpos = r.ops.iter().position(|&o| o == def).expect("a link of this region");
                        first = Some((def, link.from, lpos));
                        break;
                    }
                    (at, reads, value_uses) = (link.from, link.reads, if link.forwarded { 2 } else { 1 });
                }
                let Some((link, zeros, lpos)) = first else { continue };
                let sites = zero_sites(f, &d, link, at, zeros);
                // `acc` must be known where the first loop starts.
                if !d.get(&acc).is_none_or(|a| !r.ops.contains(a) || r.ops[..lpos].contains(a)) {
                    continue;
                }
                rewrites.push((sites, acc, op.results[0], l));
                break;
            }
        }
    }
    let changed = !rewrites.is_empty();
    let mut map = HashMap::new();
    for (sites, acc, sum, l) in rewrites {
        for (id, at) in sites {
            f.ops[id].operands[at] = acc;
        }
        map.insert(sum, l);
    }
    super::subst::apply(f, &map);
    changed
}

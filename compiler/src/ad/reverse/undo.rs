//! Loop state kept as an undo log: a tensor carried by an `scf.for` whose body only writes
//! some of its elements (`x[i] = …`, a chain of element inserts on the body argument) and
//! otherwise only reads it.
//!
//! Reverse mode needs, in each reverse iteration, the state that entered the forward
//! iteration. For such a tensor, storing the whole tensor per iteration costs O(length) per
//! iteration (O(trips × length) for the loop); instead the forward sweep stores the
//! elements each insert overwrites (one scalar per insert), and the reverse sweep carries
//! the tensor backwards from the loop's final value, writing the stored elements back,
//! last insert first, before it recomputes the body. Each iteration then costs O(inserts).
//! The indices of the inserts are recomputed in the reverse iteration, so they may depend
//! only on values available there (the induction variable, scalar carried values, values
//! from outside the loop), through simple ops ([`UndoPlan::slice`]).

use std::collections::{HashMap, HashSet};

use crate::ir::{Function, Op, OpId, OpKind, Region, Type, ValueId};

/// The longest chain of inserts kept as an undo log (one stored element each).
const MAX_INSERTS: usize = 16;

/// How carried slot's tensor is restored in the reverse sweep.
#[derive(Clone, Debug)]
pub struct UndoPlan {
    /// The element inserts of the body, from the one on the body argument to the one the
    /// body yields.
    pub inserts: Vec<OpId>,
    /// The body ops the inserts' indices are computed by, in body order: arithmetic on
    /// scalars, with no regions, calls or effects.
    pub slice: Vec<OpId>,
}

/// Whether `op` only computes a scalar (what an index may be computed by): arithmetic, or a
/// read or extent of a tensor (which [`plan`] requires to come from outside the body).
fn simple(f: &Function, op: &Op) -> bool {
    op.regions.is_empty()
        && matches!(
            op.kind,
            OpKind::Const(_) | OpKind::Unary(_) | OpKind::Binary(_) | OpKind::Select | OpKind::Cast(_) | OpKind::DimOf(_) | OpKind::Index
        )
        && op.results.iter().all(|&r| matches!(f.ty(r), Type::Scalar(_)))
}

/// Whether every use of a value of `chain` in region `r` (nested regions included) is a read
/// (`tensor.index`, `tensor.dim` of it) or the link of the chain that `links` allows: insert
/// `id` may use `links[id]` as its target.
fn only_read(f: &Function, r: &Region, chain: &HashSet<ValueId>, links: &HashMap<OpId, ValueId>) -> bool {
    r.ops.iter().all(|&id| {
        let op = &f.ops[id];
        let uses_ok = op.operands.iter().enumerate().all(|(p, v)| {
            !chain.contains(v)
                || (p == 0 && matches!(op.kind, OpKind::Index | OpKind::DimOf(_)))
                || (p == 0 && links.get(&id) == Some(v))
        });
        uses_ok
            && op.regions.iter().all(|nr| !nr.yields.iter().any(|y| chain.contains(y)) && only_read(f, nr, chain, links))
    })
}

/// The undo plan of carried slot `slot` of `scf.for` op `op`, when its tensor is only
/// written element by element in the body (see the module docs); `None` otherwise.
pub fn plan(f: &Function, op: &Op, slot: usize) -> Option<UndoPlan> {
    let body = op.regions.first()?;
    let arg = *body.args.get(1 + slot)?;
    let Type::Tensor { shape, .. } = f.ty(arg) else {
        return None;
    };
    let rank = shape.len();
    let defs: HashMap<ValueId, OpId> =
        body.ops.iter().flat_map(|&id| f.ops[id].results.iter().map(move |&r| (r, id))).collect();
    let mut inserts = Vec::new();
    let mut at = *body.yields.get(slot)?;
    while at != arg {
        let &id = defs.get(&at)?;
        let ins = &f.ops[id];
        if ins.kind != OpKind::Insert || ins.operands.len() != rank + 2 || !matches!(f.ty(ins.operands[1]), Type::Scalar(_)) {
            return None;
        }
        inserts.push(id);
        if inserts.len() > MAX_INSERTS {
            return None;
        }
        at = ins.operands[0];
    }
    if inserts.is_empty() {
        return None;
    }
    inserts.reverse();
    let mut chain: HashSet<ValueId> = HashSet::from([arg]);
    let mut links = HashMap::new();
    for &id in &inserts {
        links.insert(id, f.ops[id].operands[0]);
        chain.insert(f.ops[id].results[0]);
    }
    let last = f.ops[*inserts.last()?].results[0];
    let yields_ok = body.yields.iter().enumerate().all(|(k, y)| if k == slot { *y == last } else { !chain.contains(y) });
    if !yields_ok || !only_read(f, body, &chain, &links) {
        return None;
    }
    // The ops the indices need, back to values defined outside the body or to scalar body
    // arguments.
    let tensor_args: HashSet<ValueId> = body.args.iter().copied().filter(|&a| matches!(f.ty(a), Type::Tensor { .. })).collect();
    let mut need: Vec<ValueId> = inserts.iter().flat_map(|&id| f.ops[id].operands[2..].to_vec()).collect();
    let mut slice: HashSet<OpId> = HashSet::new();
    while let Some(v) = need.pop() {
        if tensor_args.contains(&v) || chain.contains(&v) {
            return None;
        }
        let Some(&id) = defs.get(&v) else { continue };
        if !slice.insert(id) {
            continue;
        }
        let dop = &f.ops[id];
        let inner_tensor = |o: &ValueId| matches!(f.ty(*o), Type::Tensor { .. }) && (defs.contains_key(o) || body.args.contains(o));
        if !simple(f, dop) || dop.operands.iter().any(inner_tensor) {
            return None;
        }
        need.extend(dop.operands.iter().copied());
    }
    let slice = body.ops.iter().copied().filter(|id| slice.contains(id)).collect();
    Some(UndoPlan { inserts, slice })
}

//! In-place element updates of heap tensors: loop-carried ones and straight-line writes.
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
//!   used nowhere else but in `tensor.dim` (its extents do not change); or a link of
//!   the chain (below) of an enclosing loop whose carried value is updated in place;
//! - the body yields the result of a chain of writes, the first into the body
//!   argument and each next into the result of the one before (the writes of one
//!   iteration, up to `MAX_CHAIN`): heap `tensor.insert`s, each of one element (a
//!   scalar at a full index) or of one row (a tensor at a leading index:
//!   `m[i] = vec3(..)`, `m[i] = row`, `m[i][j] = x`), and nested `scf.for`s that carry
//!   the tensor and update it in place by the same rules (`for r { for i { w[i] = … } }`,
//!   at any depth); the last result is used nowhere else;
//! - every other use of the body argument and of each result along the chain is a
//!   `tensor.index` (as the indexed tensor) or `tensor.dim` that runs before the
//!   write, and none comes after (a nested loop takes it only as the init of its slot,
//!   never inside its body).
//!
//! Outside such chains, an insert in straight-line code writes in place when its operand is
//! defined in the same region, owns its buffer (a `tensor.full`, `tensor.pack` or insert
//! result, or a loop result updated in place) and is used only before it, by reads and
//! extents: `let mut w = zeros(n); w[0] = a; w[1] = b;` copies nothing, and a write into a
//! tensor another value still holds copies once, the writes after it none.
//!
//! A loop whose chain qualifies but whose init is not its own (a parameter, a value read
//! after the loop, zeros shared by several loops) starts from a copy of the init: one copy
//! per loop entry instead of one per write.
//!
//! Element loads from such a tensor are then ordinary loads (not read-only and
//! movable as for other heap tensors, the back end's heap reads), so they stay ordered
//! with the stores. An out-of-bounds index records the error and skips the
//! store; a row whose shape differs from the tensor's trailing extents takes the
//! copying insert, which reports the mismatch.

use std::collections::{HashMap, HashSet};

use mad_runtime::jit::context::HEAP_INLINE_RANK;
use mad_runtime::jit::layout::FlatLayout;

use super::layout::{flat_layout, type_has_heap};
use crate::analysis::{definitions, for_each_op, for_loops, use_counts};
use crate::ir::{Function, OpId, OpKind, ValueId};

/// The inserts to lower in place and the values whose element loads must stay ordered.
#[derive(Default)]
pub struct InPlace {
    pub inserts: HashSet<OpId>,
    pub mutable: HashSet<ValueId>,
    /// The carried slots `(loop, slot)` whose init is a link of an enclosing loop's chain:
    /// the init is dead once the loop starts (an engine may move it in).
    pub moved_inits: HashSet<(OpId, usize)>,
    /// The carried slots whose init another value may still hold: the loop starts from a copy
    /// of it (one copy per loop entry, instead of one per write), which it then updates in
    /// place.
    pub copied_inits: HashSet<(OpId, usize)>,
}

/// Whether op `op` uses its operand `a` (at position `i`) only to read it, keeping no
/// reference to it: as the tensor of a `tensor.index` or `tensor.dim`, as an operand of a
/// `tensor.slice`, `tensor.concat`, `tensor.reshape`, `tensor.broadcast` or
/// `tensor.sum_to`/`max_to`/`min_to` (which copy), or in an op other than
/// `tape.push` (the tape holds on to what it is given) none of
/// whose results holds a heap tensor (`sum(v)`, a call `logsumexp(v)`, a comparison, `print`),
/// which cannot hand the buffer on.
fn reads_operand(f: &Function, op: &crate::ir::Op, i: usize) -> bool {
    match op.kind {
        OpKind::Index => i == 0,
        OpKind::DimOf(_) => true,
        // They copy the elements they take.
        OpKind::Slice | OpKind::Concat | OpKind::Reshape | OpKind::Permute(_) | OpKind::Broadcast | OpKind::ReduceTo(_) => true,
        // The tape keeps the value it is given until reverse mode pops it.
        OpKind::TapePush => false,
        _ => op.regions.is_empty() && op.results.iter().all(|&r| !type_has_heap(f.ty(r))),
    }
}

/// Whether every use of `a` in op `id` (and its regions) is a read that may
/// precede an in-place write ([`reads_operand`]).
fn reads_only(f: &Function, id: OpId, a: ValueId) -> bool {
    let op = &f.ops[id];
    let ok_here = op.operands.iter().enumerate().all(|(i, &v)| v != a || reads_operand(f, op, i));
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

/// One write of an iteration's chain: an insert, or a nested loop whose carried slot `.1`
/// is itself updated in place (the link is its init, the next link its result).
#[derive(Clone, Copy)]
enum Link {
    Insert(OpId),
    Loop(OpId, usize),
}

impl Link {
    fn op(self) -> OpId {
        match self {
            Link::Insert(id) | Link::Loop(id, _) => id,
        }
    }
}

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
    // Which carried slots could be updated in place if their init were theirs alone: inner
    // loops first, since an outer chain may run through an inner loop.
    let mut capable: HashMap<(OpId, usize), Vec<Link>> = HashMap::new();
    for &id in fors.iter().rev() {
        let n = f.ops[id].results.len();
        for k in 0..n {
            if let Some(chain) = chain_of(f, &d, &capable, id, k) {
                capable.insert((id, k), chain);
            }
        }
    }
    // In program order (outer loops before inner ones): which values own their buffer, and
    // which writes may update it.
    let mut walk = Walk { f, uses: &uses, dims: &dims, capable: &capable, out: InPlace::default(), owned: HashSet::new(), owned_slots: HashSet::new() };
    walk.region(&f.body);
    walk.out
}

/// How the top-level ops of one region use values (an op's nested regions count as the op).
struct TopLevelUses {
    /// Where each value defined by a top-level op is defined.
    defined: HashMap<ValueId, usize>,
    /// The last top-level op that uses each value.
    last: HashMap<ValueId, usize>,
    /// How many top-level ops use each value other than by reading it (`tensor.index` of it,
    /// `tensor.dim`).
    other: HashMap<ValueId, usize>,
}

impl TopLevelUses {
    fn of(f: &Function, r: &crate::ir::Region) -> TopLevelUses {
        let mut top = TopLevelUses { defined: HashMap::new(), last: HashMap::new(), other: HashMap::new() };
        for (pos, &id) in r.ops.iter().enumerate() {
            let mut others: HashSet<ValueId> = HashSet::new();
            let mut visit = |op: &crate::ir::Op, top: &mut TopLevelUses| {
                for (i, &v) in op.operands.iter().enumerate() {
                    top.last.insert(v, pos);
                    let read = reads_operand(f, op, i);
                    if !read {
                        others.insert(v);
                    }
                }
                for nr in &op.regions {
                    for &y in &nr.yields {
                        top.last.insert(y, pos);
                        others.insert(y);
                    }
                }
            };
            visit(&f.ops[id], &mut top);
            for nr in &f.ops[id].regions {
                for_each_op(f, nr, &mut |_, op| visit(op, &mut top));
            }
            for v in others {
                *top.other.entry(v).or_default() += 1;
            }
            for &res in &f.ops[id].results {
                top.defined.insert(res, pos);
            }
        }
        top
    }
}

/// The program-order pass of [`analyze`].
struct Walk<'a> {
    f: &'a Function,
    uses: &'a HashMap<ValueId, usize>,
    dims: &'a HashMap<ValueId, usize>,
    capable: &'a HashMap<(OpId, usize), Vec<Link>>,
    out: InPlace,
    /// Values whose buffer no other value points to: a `tensor.full`, `tensor.pack` or copying
    /// insert result, an in-place insert's result, a loop result updated in place.
    owned: HashSet<ValueId>,
    /// Carried slots whose init is a link of an enclosing loop updated in place.
    owned_slots: HashSet<(OpId, usize)>,
}

impl Walk<'_> {
    fn region(&mut self, r: &crate::ir::Region) {
        let top = TopLevelUses::of(self.f, r);
        for (pos, &id) in r.ops.iter().enumerate() {
            let op = &self.f.ops[id];
            match op.kind {
                OpKind::Full | OpKind::Pack => {
                    self.owned.extend(op.results.iter().copied());
                }
                OpKind::Insert => {
                    if !self.out.inserts.contains(&id) && self.straight_line_write(r, &top, pos) {
                        self.out.inserts.insert(id);
                        self.out.mutable.insert(op.operands[0]);
                        self.out.mutable.insert(op.results[0]);
                    }
                    // A copy or a write into a buffer of its own: either way the result's own.
                    self.owned.insert(op.results[0]);
                }
                OpKind::For => self.for_loop(id),
                _ => {}
            }
            for nr in &op.regions {
                self.region(nr);
            }
        }
    }

    /// Whether insert `r.ops[pos]` may write into its operand outside any loop chain: the
    /// operand is defined in the same region and owns its buffer, and every other use of it
    /// (a read or an extent) is in an op before the insert.
    fn straight_line_write(&self, r: &crate::ir::Region, top: &TopLevelUses, pos: usize) -> bool {
        let f = self.f;
        let op = &f.ops[r.ops[pos]];
        let t = op.operands[0];
        if op.operands.len() < 3 || op.operands[1..].contains(&t) || !self.owned.contains(&t) || r.yields.contains(&t) {
            return false;
        }
        let FlatLayout::Heap { shape, .. } = flat_layout(&f.values[t].ty) else {
            return false;
        };
        shape.len() <= HEAP_INLINE_RANK
            && top.defined.get(&t).is_some_and(|&p| p < pos)
            && top.last.get(&t) == Some(&pos)
            && top.other.get(&t) == Some(&1)
    }

    /// Activates the capable carried slots of loop `id`. An init that is theirs alone (an owned
    /// value used nowhere else but in `tensor.dim`, or a link of an enclosing active chain) is
    /// written directly; another is copied once when the loop starts.
    fn for_loop(&mut self, id: OpId) {
        let f = self.f;
        let op = &f.ops[id];
        for k in 0..op.results.len() {
            let Some(chain) = self.capable.get(&(id, k)) else {
                continue;
            };
            let init = op.operands[k + 2];
            let other_uses = self.uses.get(&init).copied().unwrap_or(0) - self.dims.get(&init).copied().unwrap_or(0);
            let linked = self.owned_slots.contains(&(id, k));
            let owned = linked || (other_uses == 1 && self.owned.contains(&init));
            let out = &mut self.out;
            if linked {
                out.moved_inits.insert((id, k));
            } else if !owned {
                out.copied_inits.insert((id, k));
            }
            out.mutable.insert(op.regions[0].args[k + 1]);
            for (j, &link) in chain.iter().enumerate() {
                match link {
                    Link::Insert(ins) => {
                        out.inserts.insert(ins);
                    }
                    Link::Loop(inner, slot) => {
                        self.owned_slots.insert((inner, slot));
                    }
                }
                if j > 0 {
                    out.mutable.insert(link_result(f, chain[j - 1]));
                }
            }
            out.mutable.insert(op.regions[0].yields[k]);
            out.mutable.insert(op.results[k]);
            self.owned.insert(op.results[k]);
        }
    }
}

/// The value link `l` produces.
fn link_result(f: &Function, l: Link) -> ValueId {
    match l {
        Link::Insert(id) => f.ops[id].results[0],
        Link::Loop(id, slot) => f.ops[id].results[slot],
    }
}

/// The chain of writes of one iteration of loop `id` into its carried slot `k`, from the body
/// argument to the yield, if the slot can be updated in place given an init of its own.
fn chain_of(
    f: &Function,
    d: &HashMap<ValueId, OpId>,
    capable: &HashMap<(OpId, usize), Vec<Link>>,
    id: OpId,
    k: usize,
) -> Option<Vec<Link>> {
    let op = &f.ops[id];
    let n = op.results.len();
    let body = op.regions.first()?;
    if op.operands.len() != n + 2 || body.args.len() != n + 1 || body.yields.len() != n {
        return None;
    }
    let (a, y) = (body.args[k + 1], body.yields[k]);
    let FlatLayout::Heap { shape, .. } = flat_layout(&f.values[a].ty) else {
        return None;
    };
    // The last value is yielded once, and otherwise only read (after it is made, before the
    // next iteration writes it).
    if shape.len() > HEAP_INLINE_RANK || body.yields.iter().filter(|&&v| v == y).count() != 1 {
        return None;
    }
    // The chain walked back from the yield: `y = insert(t_m, …)` or `y = for(init t_m){…}`,
    // …, down to the body argument (several writes in one iteration, `m[i][0] = x;
    // m[i][1] = y;`, or an inner loop writing a row).
    let mut chain: Vec<(Link, usize)> = Vec::new();
    let mut cur = y;
    loop {
        let &def = d.get(&cur)?;
        let pos = body.ops.iter().position(|&o| o == def)?;
        if chain.len() >= MAX_CHAIN {
            return None;
        }
        let dop = &f.ops[def];
        let (link, target) = match dop.kind {
            OpKind::Insert if dop.operands.len() >= 3 => {
                // A scalar at a full index, or a row at a leading one.
                let indices = dop.operands.len() - 2;
                let value_fits = match flat_layout(&f.values[dop.operands[1]].ty) {
                    FlatLayout::Scalar(_) => indices == shape.len(),
                    FlatLayout::Small { shape: row, .. } => indices < shape.len() && row.len() == shape.len() - indices,
                    FlatLayout::Heap { shape: row, .. } => indices < shape.len() && row.len() == shape.len() - indices,
                    _ => false,
                };
                if !value_fits {
                    return None;
                }
                (Link::Insert(def), dop.operands[0])
            }
            OpKind::For => {
                let slot = dop.results.iter().position(|&r| r == cur)?;
                capable.get(&(def, slot))?;
                (Link::Loop(def, slot), dop.operands[slot + 2])
            }
            _ => return None,
        };
        chain.push((link, pos));
        if target == a {
            break;
        }
        cur = target;
    }
    chain.reverse();
    // Each link — the argument, then every link's result but the last — is read only before
    // the op that writes it (an insert must not take it as its value or an index; a loop
    // only as the init of its slot, never inside its body), used nowhere after, and not
    // yielded.
    if !chain.windows(2).all(|w| w[0].1 < w[1].1) {
        return None;
    }
    let mut from = 0;
    for (j, &(link, pos)) in chain.iter().enumerate() {
        let value = if j == 0 { a } else { link_result(f, chain[j - 1].0) };
        let writer = &f.ops[link.op()];
        let ok_in_writer = match link {
            Link::Insert(_) => !writer.operands[1..].contains(&value),
            Link::Loop(_, slot) => {
                writer.operands.iter().enumerate().all(|(i, &o)| o != value || i == slot + 2)
                    && writer.regions.iter().all(|r| {
                        !r.yields.contains(&value) && r.ops.iter().all(|&o| !uses_value(f, o, value))
                    })
            }
        };
        let ok = ok_in_writer
            && !body.yields.contains(&value)
            && body.ops[from..pos].iter().all(|&o| reads_only(f, o, value))
            && body.ops[pos + 1..].iter().all(|&o| !uses_value(f, o, value));
        if !ok {
            return None;
        }
        from = pos + 1;
    }
    if !body.ops[from..].iter().all(|&o| reads_only(f, o, y)) {
        return None;
    }
    Some(chain.into_iter().map(|(l, _)| l).collect())
}

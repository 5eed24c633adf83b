//! Freeing the heap tensors of finished loop iterations.
//!
//! Heap tensors live in the context's arena until the API call returns, so a
//! loop that allocates grows the arena by every trip's temporaries. An
//! `scf.for` whose body may allocate instead takes a mark of the arena before
//! its first trip and, at the end of every trip, frees what was allocated
//! since the mark except the heap values it yields (the next trip's carried
//! values, and in the end the loop's results). That is sound because a heap
//! tensor is referenced only by SSA values: values of the body are out of scope
//! once the trip ends, values from before the loop were allocated before the
//! mark, and heap tensors never point to each other. The one other holder of
//! heap pointers is the tape, so a loop whose body (or anything it calls) pushes
//! a heap value on the tape is left alone.

use std::collections::HashSet;

use super::layout::type_has_heap;
use crate::ir::{Arena, Function, OpId, OpKind, Region};

/// Per function of a module: whether it may allocate heap tensors, and whether
/// it may push a heap value on the tape (both through its callees too).
pub struct Summary {
    allocates: Vec<bool>,
    tapes_heap: Vec<bool>,
}

fn heap_typed(f: &Function, v: crate::ir::ValueId) -> bool {
    type_has_heap(&f.values[v].ty)
}

/// `(allocates, tapes heap)` of region `r`, given the callees' summaries so far.
fn scan(f: &Function, r: &Region, alloc: &[bool], tapes: &[bool]) -> (bool, bool) {
    let (mut a, mut t) = (false, false);
    for &id in &r.ops {
        let op = &f.ops[id];
        a |= op.results.iter().any(|&v| heap_typed(f, v));
        match op.kind {
            OpKind::Call(g) => {
                a |= alloc.get(g.index()).copied().unwrap_or(true);
                t |= tapes.get(g.index()).copied().unwrap_or(true);
            }
            OpKind::TapePush => t |= op.operands.iter().any(|&v| heap_typed(f, v)),
            _ => {}
        }
        for nr in &op.regions {
            let (na, nt) = scan(f, nr, alloc, tapes);
            a |= na;
            t |= nt;
        }
    }
    (a, t)
}

impl Summary {
    pub fn of(funcs: &Arena<Function>) -> Summary {
        let n = funcs.len();
        let (mut alloc, mut tapes) = (vec![false; n], vec![false; n]);
        loop {
            let mut changed = false;
            for (h, f) in funcs.iter() {
                let (a, t) = scan(f, &f.body, &alloc, &tapes);
                let i = h.index();
                if (a && !alloc[i]) || (t && !tapes[i]) {
                    alloc[i] |= a;
                    tapes[i] |= t;
                    changed = true;
                }
            }
            if !changed {
                return Summary {
                    allocates: alloc,
                    tapes_heap: tapes,
                };
            }
        }
    }

    /// The `scf.for` ops of `f` whose trips free their temporaries.
    pub fn loops_to_release(&self, f: &Function) -> HashSet<OpId> {
        let mut out = HashSet::new();
        self.collect(f, &f.body, &mut out);
        out
    }

    fn collect(&self, f: &Function, r: &Region, out: &mut HashSet<OpId>) {
        for &id in &r.ops {
            let op = &f.ops[id];
            if op.kind == OpKind::For
                && let Some(body) = op.regions.first()
            {
                let (a, t) = scan(f, body, &self.allocates, &self.tapes_heap);
                if a && !t {
                    out.insert(id);
                }
            }
            for nr in &op.regions {
                self.collect(f, nr, out);
            }
        }
    }
}

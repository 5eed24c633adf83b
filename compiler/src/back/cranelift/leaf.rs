//! Leaf functions: a function whose body (nested regions included) calls no
//! compiled function. Only a compiled function's entry reads the call depth
//! and the stack limit (run-time routines read neither), so an entry that runs
//! a leaf's body inline needs neither: it leaves the depth alone, and the host
//! need not set the stack limit before calling it.

use crate::ir::{Function, OpKind, Region};

/// Whether `f` calls no compiled function.
pub fn calls_nothing(f: &Function) -> bool {
    region_calls_nothing(f, &f.body)
}

fn region_calls_nothing(f: &Function, r: &Region) -> bool {
    r.ops.iter().all(|&id| {
        let op = &f.ops[id];
        !matches!(op.kind, OpKind::Call(_)) && op.regions.iter().all(|nr| region_calls_nothing(f, nr))
    })
}

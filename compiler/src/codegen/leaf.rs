//! Leaf functions: a function whose body (nested regions included) calls no
//! compiled function. Only a compiled function's entry reads the call depth
//! and the stack limit (run-time routines read neither), so an entry that runs
//! a leaf's body inline needs neither: it leaves the depth alone, and the host
//! need not set the stack limit before calling it.
//!
//! A *plain* leaf also has no heap tensor values and no tape ops, so running
//! it changes no part of the context but the error (and printed output): after
//! a call that recorded no error there is nothing to reset.

use super::layout::type_has_heap;
use crate::analysis::all_ops;
use crate::ir::{Function, OpKind};

/// Whether `f` calls no compiled function.
pub fn calls_nothing(f: &Function) -> bool {
    all_ops(f, &f.body, &|k| !matches!(k, OpKind::Call(_)))
}

/// Whether `f` calls no compiled function, uses no tape and has no heap
/// tensor values (so it allocates nothing in the arena).
pub fn is_plain_leaf(f: &Function) -> bool {
    all_ops(f, &f.body, &|k| !matches!(k, OpKind::Call(_)) && !k.is_tape())
        && !f.values.iter().any(|(_, v)| type_has_heap(&v.ty))
}


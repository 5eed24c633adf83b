//! Analyses of IR that passes, differentiation and back ends share, written once:
//! region walkers ([`walk`]) and the call graph ([`call_graph`]).
//!
//! Everything here reads IR and depends on nothing but [`crate::ir`].

pub mod call_graph;
pub mod walk;

pub use call_graph::{any_reachable_op, reachable, reaches};
pub use walk::{
    all_ops, defined_in, definitions, for_each_op, for_loops, op_count, region_args_in, use_counts, used_in,
};

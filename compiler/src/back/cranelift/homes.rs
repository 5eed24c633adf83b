//! Stack homes of scalarized tensors read at run-time indices.
//!
//! A scalarized tensor (`vec16`, `mat5x3`) lives in one SSA value per entry; reading it at
//! an index known only at run time (`v[i]` in a loop) needs it in memory. Rather than
//! storing every entry again at each such read (16 stores for a `vec16`, 256 for a `mat16`,
//! per read), a tensor that some read indexes at run time is stored once, where it is
//! defined, into a stack buffer of its own: its home. The reads load from there (one bounds
//! check and one load each). The home dominates every read, since the definition does, and
//! holds the value for as long as it is live: values are immutable and each definition
//! site has its own buffer, written again only when the definition runs again.

use std::collections::HashSet;

use cranelift_codegen::ir::Value;

use super::lower::FnLower;
use crate::analysis::walk::for_each_op;
use crate::codegen::layout::small_shape;
use crate::ir::{Function, OpKind, ValueId};

/// The scalarized tensors of `f` that an `index` op reads at an index that is not a
/// constant.
pub fn indexed_at_run_time(f: &Function) -> HashSet<ValueId> {
    let constants: HashSet<ValueId> = {
        let mut c = HashSet::new();
        for_each_op(f, &f.body, &mut |_, op| {
            if matches!(op.kind, OpKind::Const(_)) {
                c.extend(op.results.iter().copied());
            }
        });
        c
    };
    let mut out = HashSet::new();
    for_each_op(f, &f.body, &mut |_, op| {
        if let (OpKind::Index, [t, idx @ ..]) = (&op.kind, op.operands.as_slice())
            && idx.iter().any(|i| !constants.contains(i))
            && small_shape(&f.values[*t].ty).is_some_and(|s| !s.is_empty())
        {
            out.insert(*t);
        }
    });
    out
}

impl FnLower<'_, '_> {
    /// Stores a just-defined tensor that is read at run-time indices into its home (not
    /// in the two-lane lowering, whose slots are vectors, nor after a terminator).
    pub fn make_home(&mut self, v: ValueId, slots: &[Value]) {
        if self.wide || !self.indexed.contains(&v) || !self.block_open() {
            return;
        }
        let addr = self.spill(slots, 1);
        self.homes.insert(v, addr);
    }

    /// Whether instructions can still be added to the current block.
    fn block_open(&self) -> bool {
        let Some(block) = self.b.current_block() else {
            return false;
        };
        match self.b.func.layout.last_inst(block) {
            Some(inst) => !self.b.func.dfg.insts[inst].opcode().is_terminator(),
            None => true,
        }
    }
}

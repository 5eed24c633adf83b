//! The arena mark and release around the trips of the loops [`crate::codegen::release`]
//! picks.

use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::JitError;
use super::imports::Routine;
use super::lower::FnLower;

impl FnLower<'_, '_> {
    /// The arena mark taken before a released loop's first trip.
    pub fn arena_mark(&mut self) -> Result<Value, JitError> {
        Ok(self.call_routine(Routine::ArenaMark, &[self.ctx])?[0])
    }

    /// Frees what was allocated since `mark`, except the heap tensors among the
    /// slots `keep_slots` (the trip's yields).
    ///
    /// Every slot is stored to the buffer the routine reads, not only the heap
    /// pointers: heap reads are movable loads, and a store is what keeps the
    /// computation of each yielded value ahead of the call that may free the
    /// tensors it reads. A non-pointer word only ever keeps a tensor alive.
    pub fn arena_release(&mut self, mark: Value, keep_slots: &[Value]) -> Result<(), JitError> {
        let addr = self.spill(keep_slots, 1);
        let n = self.b.ins().iconst(types::I64, keep_slots.len() as i64);
        self.call_routine(Routine::ArenaRelease, &[self.ctx, mark, addr, n])?;
        Ok(())
    }
}

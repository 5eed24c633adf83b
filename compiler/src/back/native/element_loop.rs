//! Running a compiled element loop ([`crate::codegen::element_loop`]) over a range of
//! elements on the calling thread.

use mad_runtime::RtError;
use mad_runtime::jit::JitContext;

use super::abi::{BatchFn, RAW_STACK_BUDGET};
use crate::codegen::element_loop::BatchFrame;

/// A reusable entry to one batched loop, with its own run-time context.
pub struct BatchCaller<'m> {
    f: BatchFn,
    ctx: JitContext<'m>,
}

impl<'m> BatchCaller<'m> {
    pub(crate) fn new(f: BatchFn, ctx: JitContext<'m>) -> BatchCaller<'m> {
        BatchCaller { f, ctx }
    }

    /// Runs the loop over `frame`'s range; returns its weighted energy sum.
    ///
    /// # Safety
    /// Every pointer of `frame` the loop's kind reads or writes is valid for
    /// every index the range's elements reach: `x` (and `v`, `grad`, `out`) for
    /// each dof index, `hess` for each slot, each data array for each element
    /// or vertex index times its slots, `consts` for the params; and no other
    /// thread writes the entries this range writes while it runs.
    pub unsafe fn run(&mut self, frame: &BatchFrame) -> Result<f64, RtError> {
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        self.ctx.stack_limit = here.saturating_sub(RAW_STACK_BUDGET) as u64;
        // SAFETY: the caller guarantees the frame's pointers (see above); the
        // context lives as long as the module borrowed by `self`.
        let sum = unsafe { (self.f)(&mut self.ctx as *mut JitContext<'_> as *mut u8, frame) };
        let err = self.ctx.take_error();
        self.ctx.reset();
        match err {
            Some(e) => Err(e),
            None => Ok(sum),
        }
    }
}

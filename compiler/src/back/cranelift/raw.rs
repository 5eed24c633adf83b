//! Direct calls for hot loops: a [`RawCaller`] runs one compiled function on
//! the calling thread with flat 8-byte slots (an `f64` is its bit pattern, a
//! small tensor its elements row-major, a tuple its parts in order), reusing one
//! run-time context, so a call costs a few nanoseconds instead of a thread start
//! and value conversions. Mesh kernels and benchmarks use it.
//!
//! Only functions whose parameters and result are scalars or small (scalarized)
//! tensors, or tuples of them, can be called this way. The calling thread's stack
//! is trusted for [`RAW_STACK_BUDGET`] bytes: deeper recursion reports
//! [`RtError::RecursionLimit`] instead of overflowing.

use mad_runtime::jit::{FlatLayout, JitContext};
use mad_runtime::RtError;

use super::abi::Trampoline;
use super::host::JitModule;
use crate::ir;

/// Stack that a raw call may use below the caller's frame.
pub const RAW_STACK_BUDGET: usize = 256 << 10;

/// A reusable direct entry to one compiled function.
pub struct RawCaller<'m> {
    tramp: Trampoline,
    ctx: JitContext<'m>,
    n_args: usize,
    n_results: usize,
    /// The argument buffer of a function without parameters.
    args: [u64; 1],
}

fn is_flat(l: &FlatLayout) -> bool {
    match l {
        FlatLayout::Scalar(_) | FlatLayout::Small { .. } => true,
        FlatLayout::Heap { .. } => false,
        FlatLayout::Tuple(parts) => parts.iter().all(is_flat),
    }
}

impl JitModule {
    /// A direct caller of `f`, or an error if its signature has heap tensors.
    pub fn raw_caller(&self, f: ir::FuncRef) -> Result<RawCaller<'_>, RtError> {
        let (tramp, params, ret) = self.entry_parts(f)?;
        if !params.iter().all(is_flat) || !is_flat(ret) {
            return Err(RtError::Other("a direct call needs scalar or small-tensor parameters and result".into()));
        }
        let n_args: usize = params.iter().map(FlatLayout::slots).sum();
        Ok(RawCaller {
            tramp,
            ctx: self.context(0),
            n_args,
            n_results: ret.slots(),
            args: [0],
        })
    }
}

impl RawCaller<'_> {
    /// Number of argument slots.
    pub fn arg_slots(&self) -> usize {
        self.n_args
    }

    /// Number of result slots.
    pub fn result_slots(&self) -> usize {
        self.n_results
    }

    /// Calls with `args.len() == arg_slots()` slots, writing `result_slots()` slots.
    #[inline]
    pub fn call(&mut self, args: &[u64], results: &mut [u64]) -> Result<(), RtError> {
        if args.len() != self.n_args || results.len() < self.n_results {
            return Err(RtError::Other(format!(
                "direct call with {} argument and {} result slots; expected {} and {}",
                args.len(),
                results.len(),
                self.n_args,
                self.n_results
            )));
        }
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        self.ctx.stack_limit = here.saturating_sub(RAW_STACK_BUDGET) as u64;
        // SAFETY: the buffers hold the slot counts the trampoline loads and stores
        // (it loads `n_args` slots from `args`, or none from the one-slot `self.args`,
        // and writes at most `n_results` slots, at least one is present), and the
        // context lives as long as the module borrowed by `self`.
        let mut one = [0u64; 1];
        let input: *const u64 = if self.n_args == 0 { self.args.as_ptr() } else { args.as_ptr() };
        let out: *mut u64 = if self.n_results == 0 { one.as_mut_ptr() } else { results.as_mut_ptr() };
        unsafe { (self.tramp)(&mut self.ctx as *mut JitContext<'_> as *mut u8, input, out) };
        match self.ctx.finish_call() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Convenience for all-`f64` signatures: arguments and results as floats.
    #[inline]
    pub fn call_f64(&mut self, args: &[f64], results: &mut [f64]) -> Result<(), RtError> {
        // SAFETY (of the casts): f64 and u64 have the same size and alignment,
        // and every bit pattern is valid for both.
        let a = unsafe { std::slice::from_raw_parts(args.as_ptr() as *const u64, args.len()) };
        let r = unsafe { std::slice::from_raw_parts_mut(results.as_mut_ptr() as *mut u64, results.len()) };
        self.call(a, r)
    }

    /// What compiled code printed since the last call to this method.
    pub fn take_output(&mut self) -> Vec<u8> {
        self.ctx.take_output()
    }
}

//! Direct calls for hot loops: a [`RawCaller`] runs one compiled function on
//! the calling thread with flat 8-byte slots (an `f64` is its bit pattern, a
//! small tensor its elements row-major, a tuple its parts in order), reusing one
//! run-time context, so a call costs a few nanoseconds instead of a thread start
//! and value conversions. Mesh kernels and benchmarks use it. Small all-`f64`
//! functions are called through their register entry
//! ([`super::abi::register_entry`]), so such a call stores and loads no slots.
//!
//! Only functions whose parameters and result are scalars or small (scalarized)
//! tensors, or tuples of them, can be called this way. The calling thread's stack
//! is trusted for [`RAW_STACK_BUDGET`] bytes: deeper recursion reports
//! [`RtError::RecursionLimit`] instead of overflowing.

use mad_runtime::jit::{FlatLayout, JitContext};
use mad_runtime::RtError;

use super::abi::{F64Pair, RegisterCall, RegisterEntry, Trampoline};
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
    /// The register entry ([`super::abi::register_entry`]) that
    /// [`RawCaller::call_f64`] takes when the function has one.
    registers: Option<RegisterCall>,
    /// The argument buffer of a function without parameters.
    args: [u64; 1],
}

/// Calls register entry `$code` with context `$c` and the `f64`s `$args[i]`
/// for each listed `i`, returning `$ret`.
macro_rules! entry {
    ($code:expr, $c:expr, $args:expr, $ret:ty; $($i:tt)*) => {{
        let f = std::mem::transmute::<RegisterEntry, unsafe extern "C" fn(*mut u8 $(, entry!(@f64 $i))*) -> $ret>($code);
        f($c $(, $args[$i])*)
    }};
    (@f64 $i:tt) => { f64 };
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
            registers: self.register_entry_of(f),
            args: [0],
        })
    }
}

impl RawCaller<'_> {
    /// Number of argument slots.
    pub fn arg_slots(&self) -> usize {
        self.n_args
    }

    /// Whether [`RawCaller::call_f64`] passes arguments and results in
    /// registers (through the function's register entry).
    pub fn in_registers(&self) -> bool {
        self.registers.is_some()
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
        self.set_stack_limit();
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

    /// Trusts the stack for [`RAW_STACK_BUDGET`] bytes below this frame.
    #[inline(always)]
    fn set_stack_limit(&mut self) {
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        self.ctx.stack_limit = here.saturating_sub(RAW_STACK_BUDGET) as u64;
    }

    /// Convenience for all-`f64` signatures: arguments and results as floats.
    ///
    /// A function of at most four `f64` argument slots and one or two `f64`
    /// result slots is called through its register entry, which passes the
    /// arguments and results in registers; errors are reported the same way.
    /// (Always inlined, so that a hot loop's arguments and results stay in
    /// registers on the host side too.)
    #[inline(always)]
    pub fn call_f64(&mut self, args: &[f64], results: &mut [f64]) -> Result<(), RtError> {
        if let Some(RegisterCall { code, n_args, n_results, leaf }) = self.registers
            && args.len() == n_args
            && results.len() >= n_results
        {
            // A plain leaf's entry reads no stack limit ([`super::leaf`]).
            if !leaf {
                self.set_stack_limit();
            }
            let c = &mut self.ctx as *mut JitContext<'_> as *mut u8;
            // SAFETY: `register_entry` gave `code` the signature
            // `(ctx, f64 × n_args) -> f64 × n_results`, which for one result
            // is `-> f64` and for two `-> F64Pair` under the host's C ABI;
            // `args` has `n_args` elements and `results` room for `n_results`;
            // the context lives as long as the module borrowed by `self`.
            unsafe {
                match (n_args, n_results) {
                    (0, 1) => results[0] = entry!(code, c, args, f64;),
                    (1, 1) => results[0] = entry!(code, c, args, f64; 0),
                    (2, 1) => results[0] = entry!(code, c, args, f64; 0 1),
                    (3, 1) => results[0] = entry!(code, c, args, f64; 0 1 2),
                    (4, 1) => results[0] = entry!(code, c, args, f64; 0 1 2 3),
                    (_, 2) => {
                        let F64Pair(r0, r1) = match n_args {
                            0 => entry!(code, c, args, F64Pair;),
                            1 => entry!(code, c, args, F64Pair; 0),
                            2 => entry!(code, c, args, F64Pair; 0 1),
                            3 => entry!(code, c, args, F64Pair; 0 1 2),
                            _ => entry!(code, c, args, F64Pair; 0 1 2 3),
                        };
                        results[0] = r0;
                        results[1] = r1;
                    }
                    _ => unreachable!("register entries have one or two results"),
                }
            }
            // A plain leaf that recorded no error changed nothing to reset.
            if leaf && self.ctx.has_error == 0 {
                return Ok(());
            }
            return match self.ctx.finish_call() {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
        self.call_f64_slots(args, results)
    }

    /// [`RawCaller::call_f64`] through the slot buffers.
    #[inline(never)]
    fn call_f64_slots(&mut self, args: &[f64], results: &mut [f64]) -> Result<(), RtError> {
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

//! Direct calls for hot loops: a [`RawCaller`] runs one compiled function on
//! the calling thread with flat 8-byte slots (an `f64` is its bit pattern, a
//! small tensor its elements row-major, a tuple its parts in order), reusing one
//! run-time context, so a call costs a few nanoseconds instead of a thread start
//! and value conversions. Mesh kernels and benchmarks use it. Small all-`f64`
//! functions are called through their register entry
//! (the native ABI's register entry, [`super::abi`]), so such a call stores and loads no slots.
//!
//! Only functions whose parameters and result are scalars or small (scalarized)
//! tensors, or tuples of them, can be called this way. The calling thread's stack
//! is trusted for [`RAW_STACK_BUDGET`] bytes: deeper recursion reports
//! [`RtError::RecursionLimit`] instead of overflowing.

use mad_runtime::jit::{FlatLayout, JitContext};
use mad_runtime::RtError;

use super::NativeModule;
use super::abi::{F64Pair, RAW_STACK_BUDGET, RegisterEntry, Trampoline};
use crate::back::ErrorSite;
use crate::ir;

/// A reusable direct entry to one compiled function.
pub struct RawCaller<'m> {
    tramp: Trampoline,
    ctx: JitContext<'m>,
    n_args: usize,
    n_results: usize,
    /// The register entry (the native ABI's register entry, [`super::abi`]) that
    /// [`RawCaller::call_f64`] takes when the function has one: its code
    /// ([`no_entry`] when there is none), its slot counts as one
    /// [`shape`] byte (0 when there is none), and whether it is a plain leaf's
    /// ([`RegisterCall::leaf`]). One byte to test keeps the host's side of a
    /// call short.
    code: RegisterEntry,
    shape: u8,
    leaf: bool,
    /// The argument buffer of a function without parameters.
    args: [u64; 1],
    /// The module's source sites of ops that may fail, and the site of the last call's
    /// run-time error (an index into them), when it has one.
    sites: &'m [ErrorSite],
    error_site: Option<u64>,
}

/// The tag of a register entry with `n_args` argument and `n_results` result
/// slots (never 0).
const fn shape(n_args: usize, n_results: usize) -> u8 {
    (1 + n_args * 2 + (n_results - 1)) as u8
}

/// The code of a caller without a register entry (never called: its shape is 0).
unsafe extern "C" fn no_entry() {}

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

impl NativeModule {
    /// A direct caller of `f`, or an error if its signature has heap tensors.
    pub fn raw_caller(&self, f: ir::FuncRef) -> Result<RawCaller<'_>, RtError> {
        let (tramp, params, ret) = self.entry_parts(f)?;
        if !params.iter().all(is_flat) || !is_flat(ret) {
            return Err(RtError::Other("a direct call needs scalar or small-tensor parameters and result".into()));
        }
        let n_args: usize = params.iter().map(FlatLayout::slots).sum();
        let reg = self.register_entry_of(f);
        Ok(RawCaller {
            tramp,
            ctx: self.context(0),
            n_args,
            n_results: ret.slots(),
            code: reg.map_or(no_entry as RegisterEntry, |r| r.code),
            shape: reg.map_or(0, |r| shape(r.n_args, r.n_results)),
            leaf: reg.is_some_and(|r| r.leaf),
            args: [0],
            sites: self.sites(),
            error_site: None,
        })
    }
}

impl RawCaller<'_> {
    /// Where the run-time error of the last call that failed happened, when the failing op
    /// came from source (the file and span of [`ErrorSite`]).
    pub fn error_site(&self) -> Option<ErrorSite> {
        self.error_site.and_then(|i| self.sites.get(i as usize).copied())
    }

    /// The error of the call that just returned (none recorded: `Ok`), with its site kept
    /// for [`RawCaller::error_site`]; resets the context for the next call.
    #[inline]
    fn finish(&mut self) -> Result<(), RtError> {
        if self.ctx.has_error != 0 {
            self.error_site = self.ctx.error_site();
        }
        match self.ctx.finish_call() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Number of argument slots.
    pub fn arg_slots(&self) -> usize {
        self.n_args
    }

    /// Whether [`RawCaller::call_f64`] passes arguments and results in
    /// registers (through the function's register entry).
    pub fn in_registers(&self) -> bool {
        self.shape != 0
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
        self.finish()
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
        // The register entry takes exactly `n_args` arguments and writes
        // `n_results` results; when the host's slices have constant lengths
        // (the usual hot loop) all but one or two arms fold away.
        const S01: u8 = shape(0, 1);
        const S11: u8 = shape(1, 1);
        const S21: u8 = shape(2, 1);
        const S31: u8 = shape(3, 1);
        const S41: u8 = shape(4, 1);
        const S02: u8 = shape(0, 2);
        const S12: u8 = shape(1, 2);
        const S22: u8 = shape(2, 2);
        const S32: u8 = shape(3, 2);
        const S42: u8 = shape(4, 2);
        let (code, leaf) = (self.code, self.leaf);
        // A plain leaf's entry reads no stack limit ([`crate::codegen::leaf`]).
        if !leaf {
            self.set_stack_limit();
        }
        let c = &mut self.ctx as *mut JitContext<'_> as *mut u8;
        // SAFETY: a nonzero `shape` says that `register_entry` gave `code` the
        // signature `(ctx, f64 × n_args) -> f64 × n_results` for the counts
        // it encodes, which for one result is `-> f64` and for two
        // `-> F64Pair` under the host's C ABI; each arm checks that `args` has
        // `n_args` elements and `results` room for `n_results`; the context
        // lives as long as the module borrowed by `self`.
        let pair = |results: &mut [f64], F64Pair(r0, r1): F64Pair| {
            results[0] = r0;
            results[1] = r1;
        };
        unsafe {
            match (self.shape, args.len(), results.len()) {
                (S01, 0, 1..) => results[0] = entry!(code, c, args, f64;),
                (S11, 1, 1..) => results[0] = entry!(code, c, args, f64; 0),
                (S21, 2, 1..) => results[0] = entry!(code, c, args, f64; 0 1),
                (S31, 3, 1..) => results[0] = entry!(code, c, args, f64; 0 1 2),
                (S41, 4, 1..) => results[0] = entry!(code, c, args, f64; 0 1 2 3),
                (S02, 0, 2..) => pair(results, entry!(code, c, args, F64Pair;)),
                (S12, 1, 2..) => pair(results, entry!(code, c, args, F64Pair; 0)),
                (S22, 2, 2..) => pair(results, entry!(code, c, args, F64Pair; 0 1)),
                (S32, 3, 2..) => pair(results, entry!(code, c, args, F64Pair; 0 1 2)),
                (S42, 4, 2..) => pair(results, entry!(code, c, args, F64Pair; 0 1 2 3)),
                // Up to four arguments go to the slot call as a copy, so that
                // the register path never needs the caller's argument array
                // in memory (a hot loop's arguments can stay in registers).
                _ if args.len() <= 4 => {
                    let mut copy = [0.0; 4];
                    copy[..args.len()].copy_from_slice(args);
                    return self.call_f64_slots(&copy[..args.len()], results);
                }
                _ => return self.call_f64_slots(args, results),
            }
        }
        // A plain leaf that recorded no error changed nothing to reset.
        if leaf && self.ctx.has_error == 0 {
            return Ok(());
        }
        self.finish()
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

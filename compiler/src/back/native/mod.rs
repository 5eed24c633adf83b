//! Natively compiled code in this process, whatever back end produced it: a
//! [`NativeModule`] holds the entry points of a module's functions and element loops in the
//! host ABI ([`abi`]) and calls them: with values on the calling thread (again on a
//! big-stack thread when that runs out of stack), with flat slots ([`RawCaller`]), with
//! values and reused context ([`ValueCaller`]), or over a range of mesh elements
//! ([`BatchCaller`]).
//!
//! Run-time errors (index out of bounds, integer division by zero, negative integer
//! exponents, shape mismatches, recursion deeper than
//! [`mad_runtime::jit::MAX_CALL_DEPTH`]) never trap: compiled code records the first one in
//! the context and continues with safe values, and the call returns it.

pub mod abi;
pub mod element_loop;
pub mod raw;
pub mod values;

use std::io::Write;

use mad_runtime::jit::{ApplyDesc, FlatLayout, JIT_STACK_SIZE, JitContext, STACK_MARGIN};
use mad_runtime::{RtError, Value};

pub use abi::RAW_STACK_BUDGET;
use abi::{BatchFn, RegisterCall, Trampoline};
pub use element_loop::BatchCaller;
pub use raw::RawCaller;
pub use values::ValueCaller;

use crate::back::ErrorSite;
use crate::ir;

/// A compiled module: machine code for every function of an IR module and for its element
/// loops, in the host ABI ([`abi`]), with the tables its run-time context reads.
pub struct NativeModule {
    /// The back end's owner of the code memory, dropped (and the code freed) last.
    pub(crate) code: Option<Box<dyn std::any::Any + Send>>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) layouts: Vec<FlatLayout>,
    pub(crate) descs: Vec<ApplyDesc>,
    /// Texts that compiled code prints by address.
    pub(crate) _strings: Vec<Box<str>>,
    /// Source sites of ops that may fail (indexed by `JitContext::site`).
    pub(crate) sites: Vec<ErrorSite>,
    /// The batched loops, in the order of their specs.
    pub(crate) batches: Vec<BatchFn>,
}

pub(crate) struct Entry {
    pub(crate) trampoline: Trampoline,
    /// The register entry ([`register_entry`]).
    pub(crate) registers: Option<RegisterCall>,
    /// A body-less function with the signature, for argument checks.
    pub(crate) signature: ir::Function,
    pub(crate) params: Vec<FlatLayout>,
    pub(crate) ret: FlatLayout,
}

#[derive(Clone, Copy)]
struct SendPtr(Trampoline);
// SAFETY: the trampoline is plain machine code that stays alive while the
// `NativeModule` is borrowed by `call`, which joins the thread before returning.
unsafe impl Send for SendPtr {}

impl NativeModule {
    /// Calls function `f` with `args`; what it prints goes to `out`.
    ///
    /// Arguments are checked against the parameter types (a wrong count or type
    /// is an error). The code runs on the calling thread within
    /// [`RAW_STACK_BUDGET`] of its stack, and again on a thread with a
    /// [`JIT_STACK_SIZE`] stack when that is not enough (deep recursion);
    /// the first run-time error it records is returned (after its output is written).
    pub fn call(&self, f: ir::FuncRef, args: &[Value], out: &mut dyn Write) -> Result<Value, RtError> {
        self.call_traced(f, args, out).map_err(|(e, _)| e)
    }

    /// As [`NativeModule::call`], and on error also where it happened, when the
    /// failing op came from source.
    pub fn call_traced(
        &self,
        f: ir::FuncRef,
        args: &[Value],
        out: &mut dyn Write,
    ) -> Result<Value, (RtError, Option<ErrorSite>)> {
        let plain = |e: RtError| (e, None);
        let entry = self
            .entries
            .get(f.index())
            .ok_or_else(|| plain(RtError::Other(format!("no function {f:?} in this module"))))?;
        crate::ir::check_args(&entry.signature, args).map_err(|m| plain(RtError::Other(m)))?;
        for (i, (l, a)) in entry.params.iter().zip(args).enumerate() {
            l.check(a).map_err(|m| plain(RtError::Other(format!("argument {i}: {m}"))))?;
        }
        let tramp = SendPtr(entry.trampoline);
        let (layouts, descs) = (&self.layouts, &self.descs);
        // Runs the call with compiled code allowed `budget` bytes of stack below this frame.
        let run_with = move |budget: usize| {
            let tramp = tramp;
            let marker = 0u8;
            let here = &marker as *const u8 as usize;
            let limit = here.saturating_sub(budget) as u64;
            let mut ctx = JitContext::new(layouts, descs, limit);
            let mut slots = Vec::new();
            for (l, a) in entry.params.iter().zip(args) {
                l.flatten(a, &mut ctx, &mut slots);
            }
            slots.push(0);
            let mut results = vec![0u64; entry.ret.slots().max(1)];
            // SAFETY: `slots` and `results` hold the slot counts the trampoline
            // loads and stores; the context outlives the call.
            unsafe { (tramp.0)(&mut ctx as *mut JitContext<'_> as *mut u8, slots.as_ptr(), results.as_mut_ptr()) };
            let printed = ctx.take_output();
            let site = ctx.error_site();
            let result = match ctx.take_error() {
                Some(e) => Err((e, site)),
                // SAFETY: every heap slot of the result is null or points into the live arena.
                None => Ok(unsafe { entry.ret.rebuild(&results) }),
            };
            ctx.reset();
            (result, printed)
        };
        // First on the calling thread, trusting it for RAW_STACK_BUDGET bytes as the direct
        // callers do: starting a thread costs more than most calls. A call that runs out of
        // that budget (deep recursion, a huge frame) records "recursion is too deep" and
        // changes nothing (compiled code has no effects but its output, which is dropped):
        // it runs again on a thread of its own with a JIT_STACK_SIZE stack.
        // (A panic of the host-side code around the call is an internal error, as on the
        // thread, where the join reports it.)
        let first = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_with(RAW_STACK_BUDGET)
        })) {
            Ok(r) => r,
            Err(_) => return Err(plain(RtError::Other("internal error: compiled code panicked".into()))),
        };
        let joined = if matches!(first.0, Err((RtError::RecursionLimit, _))) {
            std::thread::scope(|s| {
                std::thread::Builder::new()
                    .name("mad-jit".into())
                    .stack_size(JIT_STACK_SIZE)
                    .spawn_scoped(s, move || run_with(JIT_STACK_SIZE - STACK_MARGIN))
                    .map(|h| h.join())
            })
        } else {
            Ok(Ok(first))
        };
        let (result, printed) = match joined {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => return Err(plain(RtError::Other("internal error: compiled code panicked".into()))),
            Err(e) => return Err(plain(RtError::Other(format!("cannot start the JIT thread: {e}")))),
        };
        out.write_all(&printed).map_err(|e| plain(RtError::Other(format!("cannot write output: {e}"))))?;
        result.map_err(|(e, site)| (e, site.and_then(|i| self.sites.get(i as usize).copied())))
    }
}

impl NativeModule {
    /// The trampoline and flat layouts of `f`'s parameters and result.
    pub(crate) fn entry_parts(&self, f: ir::FuncRef) -> Result<(Trampoline, &[FlatLayout], &FlatLayout), RtError> {
        let e = self.entries.get(f.index()).ok_or_else(|| RtError::Other(format!("no function {f:?} in this module")))?;
        Ok((e.trampoline, &e.params, &e.ret))
    }

    /// `f`'s register entry ([`register_entry`]): its code and argument and
    /// result slot counts, if it has one.
    pub(crate) fn register_entry_of(&self, f: ir::FuncRef) -> Option<RegisterCall> {
        self.entries.get(f.index())?.registers
    }

    /// A caller of batched loop `i` (its index in the specs compiled with).
    pub fn batch_caller(&self, i: usize) -> Option<BatchCaller<'_>> {
        let f = *self.batches.get(i)?;
        Some(BatchCaller::new(f, self.context(0)))
    }

    /// A fresh run-time context over this module's tables.
    /// The source sites of the module's ops that may fail (what `JitContext::site` indexes).
    pub(crate) fn sites(&self) -> &[ErrorSite] {
        &self.sites
    }

    pub(crate) fn context(&self, stack_limit: u64) -> JitContext<'_> {
        JitContext::new(&self.layouts, &self.descs, stack_limit)
    }
}

impl Drop for NativeModule {
    fn drop(&mut self) {
        // No function pointer of this module outlives it (`call` borrows `self` and joins
        // its thread before returning); the entry points go before the code they point to.
        self.entries.clear();
        self.batches.clear();
        drop(self.code.take());
    }
}

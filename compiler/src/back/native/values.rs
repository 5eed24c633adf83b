//! Direct calls with [`Value`] arguments on the calling thread: a
//! [`ValueCaller`] runs one compiled function whose parameters or result may be
//! heap tensors (dynamic sizes, e.g. a ring's neighbour values), reusing one
//! run-time context and without the thread that [`NativeModule::call`] starts.
//! Arguments are checked against the parameter layouts. The calling thread's
//! stack is trusted for [`RAW_STACK_BUDGET`] bytes, as for
//! [`super::RawCaller`].

use mad_runtime::jit::{FlatLayout, JitContext};
use mad_runtime::{RtError, Value};

use super::NativeModule;
use super::abi::{RAW_STACK_BUDGET, Trampoline};
use crate::back::ErrorSite;
use crate::ir;

/// A reusable direct entry to one compiled function, called with values.
pub struct ValueCaller<'m> {
    tramp: Trampoline,
    ctx: JitContext<'m>,
    params: &'m [FlatLayout],
    ret: &'m FlatLayout,
    slots: Vec<u64>,
    results: Vec<u64>,
    /// As in [`super::RawCaller`]: the module's error sites and the last failed call's.
    sites: &'m [ErrorSite],
    error_site: Option<u64>,
}

impl NativeModule {
    /// A direct value caller of `f`.
    pub fn value_caller(&self, f: ir::FuncRef) -> Result<ValueCaller<'_>, RtError> {
        let (tramp, params, ret) = self.entry_parts(f)?;
        Ok(ValueCaller {
            tramp,
            ctx: self.context(0),
            params,
            ret,
            slots: Vec::new(),
            results: vec![0; ret.slots().max(1)],
            sites: self.sites(),
            error_site: None,
        })
    }
}

impl ValueCaller<'_> {
    /// Where the run-time error of the last call that failed happened, when the failing op
    /// came from source.
    pub fn error_site(&self) -> Option<ErrorSite> {
        self.error_site.and_then(|i| self.sites.get(i as usize).copied())
    }

    /// Calls with `args` (one per parameter, checked against its layout).
    pub fn call(&mut self, args: &[Value]) -> Result<Value, RtError> {
        if args.len() != self.params.len() {
            return Err(RtError::Other(format!(
                "{} argument(s) given, {} expected",
                args.len(),
                self.params.len()
            )));
        }
        for (i, (l, a)) in self.params.iter().zip(args).enumerate() {
            l.check(a)
                .map_err(|m| RtError::Other(format!("argument {i}: {m}")))?;
        }
        self.slots.clear();
        for (l, a) in self.params.iter().zip(args) {
            l.flatten(a, &mut self.ctx, &mut self.slots);
        }
        self.slots.push(0);
        self.results.fill(0);
        let marker = 0u8;
        let here = &marker as *const u8 as usize;
        self.ctx.stack_limit = here.saturating_sub(RAW_STACK_BUDGET) as u64;
        // SAFETY: `slots` and `results` hold the slot counts the trampoline loads
        // and stores; the context lives as long as the module borrowed by `self`.
        unsafe {
            (self.tramp)(
                &mut self.ctx as *mut JitContext<'_> as *mut u8,
                self.slots.as_ptr(),
                self.results.as_mut_ptr(),
            )
        };
        if self.ctx.has_error != 0 {
            self.error_site = self.ctx.error_site();
        }
        let out = match self.ctx.take_error() {
            Some(e) => Err(e),
            // SAFETY: every heap slot of the result is null or points into the live arena
            // (not reset yet).
            None => Ok(unsafe { self.ret.rebuild(&self.results) }),
        };
        self.ctx.reset();
        out
    }
}

//! Function signatures: every compiled function takes the run-time context
//! pointer first, then its parameters' flattened slots, and returns its
//! result's flattened slots (multi-value returns; large ones through an
//! implicit return area). Each function also gets a trampoline
//! `extern "C" fn(ctx, args: *const u64, results: *mut u64)` the host calls.
//! A small function's trampoline holds the function's body itself (no call,
//! no entry checks; see `FnLower::lower_trampoline_body`). A small all-`f64`
//! function also gets a register entry ([`register_entry`]).

use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::isa::CallConv;

use super::layout::clif_types;
use crate::back::native::abi::REGISTER_ENTRY_ARGS;
use crate::ir::Function;

/// The pointer type (the JIT targets 64-bit hosts).
pub const PTR: types::Type = types::I64;

/// The signature of a compiled IR function.
pub fn function_signature(f: &Function, cc: CallConv) -> Signature {
    let mut sig = Signature::new(cc);
    sig.params.push(AbiParam::new(PTR));
    for t in f.param_types() {
        sig.params
            .extend(clif_types(&t).into_iter().map(AbiParam::new));
    }
    sig.returns
        .extend(clif_types(&f.ret).into_iter().map(AbiParam::new));
    sig
}

/// The signature of a trampoline: `(ctx, args, results)`.
pub fn trampoline_signature(cc: CallConv) -> Signature {
    let mut sig = Signature::new(cc);
    sig.params
        .extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)]);
    sig
}

/// The argument and result slot counts of `f`'s register entry, if it gets
/// one: a second entry with `f`'s own signature (`(ctx, f64…) -> f64…`) whose
/// arguments and results travel in registers, so a host call stores and loads
/// no slots. Only for all-`f64` signatures of at most
/// [`REGISTER_ENTRY_ARGS`] argument slots and one or two result slots, under
/// calling conventions where such a return matches the host's
/// `extern "C" fn(...) -> f64` or `-> F64Pair`.
pub fn register_entry(f: &Function, cc: CallConv) -> Option<(usize, usize)> {
    if !matches!(cc, CallConv::SystemV | CallConv::AppleAarch64) {
        return None;
    }
    let params: Vec<types::Type> = f.param_types().iter().flat_map(clif_types).collect();
    let ret = clif_types(&f.ret);
    let all_f64 = |ts: &[types::Type]| ts.iter().all(|t| *t == types::F64);
    let fits = params.len() <= REGISTER_ENTRY_ARGS && (1..=2).contains(&ret.len());
    (fits && all_f64(&params) && all_f64(&ret)).then_some((params.len(), ret.len()))
}

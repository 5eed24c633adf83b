//! Function signatures: every compiled function takes the run-time context
//! pointer first, then its parameters' flattened slots, and returns its
//! result's flattened slots (multi-value returns; large ones through an
//! implicit return area). Each function also gets a trampoline
//! `extern "C" fn(ctx, args: *const u64, results: *mut u64)` the host calls.
//! A small function's trampoline holds the function's body itself (no call,
//! no entry checks; see `FnLower::lower_trampoline_body`).

use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::isa::CallConv;

use super::layout::clif_types;
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

/// The host-side type of a trampoline.
pub type Trampoline = unsafe extern "C" fn(*mut u8, *const u64, *mut u64);

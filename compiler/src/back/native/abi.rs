//! The host ABI of natively compiled code, which every back end that compiles for this
//! process (Cranelift; an LLVM host JIT) produces and [`super`]'s callers use: each function
//! has a trampoline `extern "C" fn(ctx, args: *const u64, results: *mut u64)` over flat
//! 8-byte slots, small all-`f64` functions also a register entry `(ctx, f64…) -> f64…`, and
//! each element loop an entry `extern "C" fn(ctx, frame) -> f64`.

use crate::codegen::element_loop::BatchFrame;

/// The host-side type of a trampoline.
pub type Trampoline = unsafe extern "C" fn(*mut u8, *const u64, *mut u64);

/// The most `f64` argument slots a register entry takes.
pub const REGISTER_ENTRY_ARGS: usize = 4;


/// Two `f64` results as the host receives them from a register entry (the C
/// ABI returns this struct in the first two float registers, where Cranelift's
/// multi-value return puts them).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F64Pair(pub f64, pub f64);

/// A register entry's code, as stored; called after a cast to the
/// `extern "C"` type its slot counts give.
pub type RegisterEntry = unsafe extern "C" fn();

/// A register entry as the host keeps it.
#[derive(Clone, Copy, Debug)]
pub struct RegisterCall {
    pub code: RegisterEntry,
    pub n_args: usize,
    pub n_results: usize,
    /// The entry runs the body of a plain leaf ([`crate::codegen::leaf::is_plain_leaf`])
    /// inline: nothing it runs reads the depth or the stack limit, so the host
    /// need not set the limit before calling it, and a call that recorded no
    /// error leaves nothing in the context to reset.
    pub leaf: bool,
}

/// The entry of a compiled element loop.
pub type BatchFn = unsafe extern "C" fn(*mut u8, *const BatchFrame) -> f64;

/// Stack that a call on the calling thread may use below the caller's frame.
pub const RAW_STACK_BUDGET: usize = 256 << 10;

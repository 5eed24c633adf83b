//! Run-time support for code compiled by the Cranelift back end.
//!
//! - [`context`]: the context every compiled function receives (arena, error, depth, output).
//! - [`layout`]: how values are flattened into 64-bit slots and rebuilt.
//! - [`scalar`]: scalar op semantics on [`crate::Value`]s (casts included).
//! - [`direct`]: typed routines for the common `f64` heap-tensor ops, called directly.
//! - [`kernels`]: typed `f64` fast paths for the common heap-tensor ops.
//! - [`tensor`]: tensor op semantics for heap tensors and op-site descriptors.
//! - [`routines`]: the `extern "C"` routines and the symbol table for the JIT.
//! - [`math`]: libm-backed float routines called by symbol name.

pub mod broadcast;
pub mod context;
pub mod direct;
pub mod kernels;
pub mod layout;
pub mod math;
pub mod reshape;
pub mod routines;
pub mod scalar;
pub mod tensor;

pub use context::{JIT_STACK_SIZE, JitContext, MAX_CALL_DEPTH, STACK_MARGIN};
pub use layout::{Arg, FlatLayout};
pub use tensor::{ApplyDesc, TensorOp};

//! `mad-runtime`: what compiled mad code runs against.
//!
//! - [`value`]: host-side values ([`Value`], [`Tensor`]) that the interpreter computes
//!   with and that the embedding API passes in and out, and their printed form.
//! - [`ops`]: the scalar semantics of the elementwise operations, shared by the
//!   reference interpreter and the JIT's runtime routines so that both agree bit for bit.

pub mod jit;
pub mod ops;
pub mod value;

pub use ops::{BinaryOp, RtError, UnaryOp};
pub use value::{ScalarKind, Tensor, TensorData, Value};

//! The mad IR.
//!
//! - Typed SSA values and ops live in per-function arenas ([`arena`]) and are named
//!   by typed handles ([`ValueId`], [`OpId`]); functions live in a [`Module`].
//! - Control flow is structured: `If`, `For` and `While` are ops with nested
//!   [`Region`]s (as MLIR's `scf`, ONNX's `If`/`Loop`), see [`op`].
//! - Types ([`types`]) are scalars, tensors with fixed, symbolic or dynamic
//!   extents, and tuples; the language's `vec3`, `mat2x3`, `[f64; N]`, `[f64]`,
//!   `vector` and `matrix` are all tensors here.
//! - [`validate`] checks every invariant and runs after every pass; [`print`](mod@print) and
//!   [`parse`] give a text form that round-trips.

pub mod arena;
pub mod builder;
pub mod derived;
pub mod function;
pub mod op;
pub mod parse;
pub mod print;
pub mod types;
pub mod validate;
pub mod value_check;

pub use arena::{Arena, Handle};
pub use builder::Builder;
pub use derived::{Derivation, DerivedKey};
pub use function::{AdMode, FuncRef, Function, Module, Op, OpId, Region, ValueData, ValueId};
pub use op::{BinaryOp, Literal, OpKind, Reduce, UnaryOp};
pub use types::{Dim, ScalarKind, Type};
pub use value_check::check_args;

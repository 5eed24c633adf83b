//! `mad-runtime`: what compiled mad code runs against.
//!
//! - [`value`]: host-side values ([`Value`], [`Tensor`]) that the interpreter computes
//!   with and that the embedding API passes in and out, and their printed form.
//! - [`ops`]: the scalar semantics of the elementwise operations, shared by the
//!   reference interpreter and the JIT's runtime routines so that both agree bit for bit.
//! - [`special`]: the special functions those ops name (`erf`, `lgamma`, the polygamma
//!   family, `softplus`, `sigmoid`).
//! - [`mesh`]: triangle meshes (readers, writers, generators) and stencil incidence.
//! - [`sparse`]: Hessian patterns, precomputed slots, deterministic parallel assembly, pairs,
//!   Matrix Market output.
//! - [`npy`]: NumPy `.npy` files: reading and writing arrays, as tensors, values or `f64` fields.
//! - [`tape`]: the LIFO tape of reverse mode for regions known only at run time.
//! - [`solve`]: Newton, Newton-CG, L-BFGS, gradient descent, Gauss-Newton over an [`solve::Objective`];
//!   implicit Euler stepping.
//! - [`contact`]: the contact broad phase (an R*-tree over primitive boxes), exact primitive
//!   distances, and a conservative step bound that keeps a line search from stepping through contact.
//! - [`linalg`]: small dense linear algebra (symmetric eigensolver, PSD projection).

pub mod adbench;
pub mod contact;
pub mod jit;
pub mod linalg;
pub mod mesh;
pub mod npy;
pub mod ops;
pub mod solve;
pub mod special;
pub mod sparse;
pub mod tape;
pub mod value;

pub use ops::{BinaryOp, RtError, UnaryOp};
pub use value::{ScalarKind, Tensor, TensorData, Value};

//! mad: a compiler and JIT runtime for a differentiable language of mesh energies.
//!
//! - [`front`]: parsing (via `mad-grammar`), name resolution, type checking and
//!   lowering of `.mad` sources to the IR, with codespan-reporting diagnostics.
//! - [`ir`]: the typed SSA IR with structured control flow, its validator and text form;
//!   [`analysis`]: region walkers and the call graph, shared by every later layer.
//! - [`ad`]: differentiation at the IR level (forward and reverse source
//!   transformation over one rule table); [`passes`]: simplify, CSE, DCE.
//! - [`codegen`]: what every back end reads about a module (layouts, in-place updates,
//!   release and poll points, loop versions, element loops as data), computed once;
//!   [`back`]: the reference interpreter and the Cranelift JIT.
//! - [`api`]: the embedding API ([`Program`]) for Rust hosts; [`solve`]: solving a file's
//!   mesh energies as `madc run` does (settings, fixed vertices, static solves and time
//!   steps, iteration records).
//! - [`cli`]: the `madc` command line.
//!
//! ```
//! let prog = mad::Program::compile_str("b1.mad", "fn f(x: f64, y: f64) -> f64 { x*log(y) + log(x*y)*y }")?;
//! let f = prog.function::<(f64, f64), f64>("f")?;
//! let (x, y) = (2.0_f64, 3.0_f64);
//! assert!((f.call((x, y))? - (x * y.ln() + (x * y).ln() * y)).abs() < 1e-12);
//! # Ok::<(), mad::Error>(())
//! ```

pub mod ad;
pub mod analysis;
pub mod api;
pub mod back;
pub mod cli;
pub mod codegen;
pub mod energy;
pub mod front;
pub mod ir;
pub mod onnx;
pub mod passes;
pub mod solve;

pub use api::{Engine, Error, Matrix, Program, TypedFunction};
pub use mad_runtime::{RtError, Tensor, TensorData, Value};
/// The runtime crate (meshes and their I/O, solvers, sparse patterns), so that a host needs
/// only `mad` as a dependency: `mad::runtime::mesh::load_mesh`, `mad::runtime::solve::Solver`.
pub use mad_runtime as runtime;

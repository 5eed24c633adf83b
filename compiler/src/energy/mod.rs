//! Mesh energies on the CPU: a compiled `.mad` program's `energy` and `residual`
//! terms evaluated over a whole mesh — energy, assembled gradient, sparse
//! Hessian values, matrix-free Hessian-vector products and the sparse Jacobian
//! of the residuals.
//!
//! Two halves, and imports point one way, from [`eval`] to [`kernels`]:
//!
//! - Compile time, [`kernels`]: [`EnergyProgram`] ([`kernels::program`]) builds the
//!   per-term kernels once ([`kernels::term`], [`kernels::derive`], prepared by
//!   [`kernels::inline`] and [`kernels::fold`]), picks the batched element loops
//!   ([`kernels::batches`]) and JITs them all.
//! - Run time, [`eval`]: [`MeshEnergy`] ([`eval::bind`]) is the program bound to a
//!   mesh — dof layout, data, params, element lists and the CSR pattern (built once).
//!   Evaluation ([`eval::evaluate`]) runs element loops on rayon in the fixed schedule of
//!   [`mad_runtime::sparse::Coloring`], bit-identical on every thread count.
//!   Terms on fixed stencils run each chunk of that schedule in one compiled
//!   batched loop ([`eval::batched`]: gather, inlined kernel, scatter into the
//!   gradient and the CSR values, all in JIT code); rings, pairs and
//!   PSD-projected Hessians call the per-element kernels. [`MeshObjective`]
//!   ([`eval::objective`]) is the solver adapter.
//!
//! ```
//! use mad::energy::EnergyProgram;
//! use mad_runtime::mesh::load_mesh;
//!
//! let prog = EnergyProgram::compile_str(
//!     "springs.mad",
//!     "dof x: vertex -> vec3;  data rest: edge -> f64;  param k: f64 = 1.0;
//!      energy spring(e: edge) { 0.5 * k * (norm(x[e.v0] - x[e.v1]) - rest[e])^2 }",
//! )?;
//! let mut springs = prog.bind(&load_mesh("grid:4x4")?)?;   // rest lengths: the mesh's
//! springs.set_param("k", 2.0)?;
//! let x: Vec<f64> = springs.default_x().iter().map(|v| 1.1 * v).collect();
//! let (mut g, mut h) = (vec![0.0; springs.ndofs()], vec![0.0; springs.nnz()]);
//! let e = springs.hessian(&x, &mut g, &mut h, false)?;    // energy, gradient, CSR values
//! let mut hv = vec![0.0; springs.ndofs()];
//! springs.hvp(&x, &g, &mut hv)?;                          // matrix-free H·g
//! let mut hv2 = vec![0.0; springs.ndofs()];
//! springs.pattern().spmv(&h, &g, &mut hv2);
//! assert!(e > 0.0);
//! assert!(hv.iter().zip(&hv2).all(|(a, b)| (a - b).abs() < 1e-9));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layout
//!
//! Unknowns are laid out per `dof` field in declaration order, entity-major:
//! dof index = offset + d·i + c for vertex (or, for a `face` field, face) i,
//! component c of a d-dimensional field ([`eval::layout`]). Arrays in and out are flat
//! with that order (`(V, d)` or `(F, d)` row-major per field).
//!
//! # Data
//!
//! A `data` field is filled by the host ([`MeshEnergy::set_data`], or
//! `madc eval --data NAME=FILE.npy`), with `(n, slots)` values for the n elements
//! of its stencil (a `matRxC` is R·C row-major slots). A data field the host did
//! not fill gets a default from the mesh's rest geometry where one exists:
//! - a `vertex` field of type `f64`, `vec2` or `vec3`: the first components of the
//!   mesh's vertex positions (so `data X: vertex -> vec3;` is the rest shape);
//! - an `edge` field of type `f64`: the edge's rest length;
//! - a `face` field of type `f64`: the face's rest area.
//!
//! Any other unfilled data field is an error when the program is evaluated.
//!
//! # Rings
//!
//! A `ring` term has one kernel set for every valence ([`kernels::ring`]): its neighbour
//! inputs are heap slices, evaluated through
//! [`crate::back::native::ValueCaller`] ([`eval::ring`]). Its local dofs are
//! those of [`mad_runtime::sparse::element_dofs`] over `[v, n₀, …]` (a ragged
//! element list), so blocks of k = (1 + valence)·d land in precomputed CSR slots;
//! the dense block is built from k matrix-free HVPs, and PSD projection works for
//! any k. Ring residuals are not supported.
//!
//! # Pairs
//!
//! `pair` terms ([`eval::pairs`]) run over host-supplied vertex tuples
//! ([`MeshEnergy::set_pairs`], [`MeshEnergy::add_pair`],
//! [`MeshEnergy::remove_pair`]); the arity is one more than the highest `e.vK` a
//! pair term reads, shared by all pair terms (the largest). The Hessian pattern
//! is the static one plus an incremental overlay
//! ([`mad_runtime::sparse::PairPattern`]): [`MeshEnergy::nnz`] counts static
//! entries then overlay slots, and [`MeshEnergy::hessian_csr`] merges them into
//! one CSR matrix. Pair terms run serially in pair-id order.
//!
//! # Mixed derivatives
//!
//! [`MeshEnergy::mixed`] gives ∂²E/∂x∂θ for an `f64` param θ: per term a kernel
//! with one forward seed on θ over the reverse-mode gradient
//! ([`kernels::derive::grad_mixed`]; for rings, [`kernels::ring::RingKernels::mixed`]), plus the
//! derivative of θ-dependent objective weights times the term's gradient.
//!
//! # Face dofs
//!
//! `dof u: face -> …` has one value per face (default zeros). A `face` term
//! reads its own face's value (`u[f]`); a `diamond` term reads the faces on
//! both sides of its edge (`u[e.f0]`, `u[e.f1]`,
//! [`mad_runtime::mesh::Topology::diamond_faces`]). Face dofs sit in the
//! element's local vector like vertex dofs ([`eval::layout::term_dofs`]), so the CSR
//! pattern, the kernels and the evaluation loops need nothing else.
//!
//! # Initial values, state and updates
//!
//! [`MeshEnergy::initial_x`] gives the unknowns' start from each dof field's
//! initializer (`dof u: vertex -> vec2 = tutte;`, or [`MeshEnergy::set_init`]):
//! `positions`, `zeros`, a Tutte embedding, or a mesh / `.npy` file
//! ([`eval::state`]). `state` fields are data fields the program recomputes: bind
//! fills them from their initializers (zeros by default), and
//! [`MeshEnergy::update`] runs the `update` items (value kernels built by
//! [`kernels::term::build_value`], fixed stencils and rings), reading old values and
//! then writing all. [`MeshObjective`] runs the updates through
//! `Objective::update`, so every solver applies them before the first iteration
//! and after each accepted one.
//!
//! # Objective
//!
//! `objective = …` weights the energies (a linear form in the energies whose
//! coefficients may use params); without it the objective is their sum.
//!
//! # Numerics
//!
//! The kernels fold structural zeros ([`kernels::fold`]): a product with a constant 0
//! becomes 0. In the derivative kernels these are mostly their seeds' zeros, followed
//! through vectors, small matrices (`[u₁ − u₀, u₂ − u₀]·M⁻¹` seeded at one coordinate)
//! and the branches of `if`s; the value kernel folds its vectors only. For finite
//! intermediate values this is exact; where an intermediate value is infinite or NaN
//! a kernel may give 0 where an unfolded product would give NaN (the energy itself is
//! then not finite, or the term multiplies a written `0.0` by it).

pub mod eval;
pub mod kernels;

pub use eval::{Contact, MeshEnergy, MeshObjective, SparseMatrix, Timing};
pub use kernels::EnergyProgram;
pub use crate::front::state::Init;

use std::fmt;

/// Errors of building or evaluating mesh energies.
#[derive(Clone, Debug, PartialEq)]
pub enum EnergyError {
    /// A language feature the CPU evaluator does not handle yet.
    Unsupported { term: String, what: String },
    /// Building a kernel failed (a defect of the compiler).
    Kernel { term: String, message: String },
    /// The JIT failed (a defect of the compiler).
    Backend(String),
    /// The mesh is unusable.
    Mesh(String),
    /// Host data of the wrong shape, unknown names, bad values.
    Host(String),
    /// A run-time error inside a kernel: what failed (the term or update and its element,
    /// then the error) and, when the failing op came from source, where.
    Runtime {
        message: String,
        at: Option<crate::front::locate::SourceLocation>,
    },
    /// The objective is not a weighted sum of energies.
    Objective(String),
}

impl fmt::Display for EnergyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnergyError::Unsupported { term, what } => write!(
                f,
                "term `{term}`: {what} not supported by the CPU evaluator"
            ),
            EnergyError::Kernel { term, message } => {
                write!(f, "term `{term}`: cannot build its kernels: {message}")
            }
            EnergyError::Backend(m) => write!(f, "code generation failed: {m}"),
            EnergyError::Mesh(m) => write!(f, "mesh: {m}"),
            EnergyError::Host(m) => write!(f, "{m}"),
            EnergyError::Runtime { message, at } => {
                write!(f, "run-time error: {message}")?;
                if let Some(at) = at {
                    write!(f, "\n  --> {}:{}:{}", at.file, at.line, at.column)?;
                }
                Ok(())
            }
            EnergyError::Objective(m) => write!(f, "objective: {m}"),
        }
    }
}

impl std::error::Error for EnergyError {}

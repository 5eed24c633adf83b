//! Minimizers for energies given through the [`Objective`] trait, and implicit Euler stepping.
//!
//! All solvers share one iteration loop (`driver`), one backtracking Armijo line search
//! ([`LineSearch`]) and one stopping rule ([`SolveOptions`]); each solver only computes search
//! directions.
//!
//! # Public API
//!
//! - [`Objective`]: `num_dofs`, `value`, `value_grad` (required); `hessian_pattern`,
//!   `hessian_values(x, project_psd, values)`, `value_grad_hessian` (both from one evaluation,
//!   which Newton asks for where it expects to need the Hessian), `hvp` (finite-difference default),
//!   `hessian_diagonal`, `jacobian_pattern`, `residuals`, `residuals_jacobian`,
//!   `take_assembly_time`, `translation_classes`, `hessian_pattern_generation` (optional).
//!   [`next_pattern_generation`] hands out pattern generations; [`TranslationClasses`]
//!   `{ class_of, pins }` (`solve_mask`) lists the translations an energy is invariant under. Output buffers arrive zeroed; `+∞`/NaN energies mark
//!   infeasible points. Implemented for `&mut T`.
//! - [`JacobianPattern`] `{ rows, cols, row_ptr, col_idx }` (`from_entries`, `nnz`, `mul`,
//!   `mul_transpose`, `normal_diagonal`).
//! - Solvers, each `solve(&mut self, &mut O, &mut [f64], &SolveOptions, Option<Callback>)
//!   -> Result<SolveReport, SolveError>`:
//!   [`Newton`] (`shift:` [`ShiftOptions`], `project_psd`, `symbolic_factorizations()`, `numeric_factorizations()`),
//!   [`NewtonCg`] (`cg:` [`CgOptions`], `diagonal_probes`), [`Lbfgs`] (`new(memory)`),
//!   [`GradientDescent`], [`GaussNewton`] (`new(`[`GaussNewtonLinear`]`)`,
//!   `levenberg_marquardt(linear)`, `shift`, `damping: Option<`[`LevenbergMarquardt`]`>`
//!   `{ initial_mu, min_mu, scaling:` [`DampingScaling`] `Marquardt { floor } | Identity,
//!   max_rejections }`, `symbolic_factorizations()`, `numeric_factorizations()`), and
//!   [`Solver`] (`from_name`, `NAMES`, `solve`) to pick one by name.
//! - [`SolveOptions`] `{ max_iters, grad_abs_tol, grad_rel_tol, decrement_tol, step_tol, fixed,
//!   line_search }` and [`LineSearch`] `{ c1, shrink, max_backtracks }` (`search`).
//! - [`Callback`] = `&mut dyn FnMut(&IterationInfo) -> Control`; [`Control`] `Continue | Stop`.
//! - [`SolveReport`] `{ status, iterations, initial_energy, energy, initial_grad_norm,
//!   grad_norm, history: Vec<IterationInfo>, timings }`; [`IterationInfo`] `{ iteration, energy,
//!   grad_norm, step, step_norm, decrement, backtracks, shift, mu, linear_iterations, timings }`;
//!   [`Timings`] `{ derivatives, assembly, linear_solve, line_search }`; [`Status`]
//!   `GradientTolerance | NewtonDecrement | StepTolerance | MaxIterations | Stopped | Stalled`.
//! - [`SolveError`]: `Objective`, `Unsupported`, `Dimension`, `InfeasibleStart`, `NonFinite`,
//!   `Factorization`, `Sparse`.
//! - [`ImplicitEuler`]`::new(potential, mass, h, x0, v0)` (`with_damping`, `step`, `end_step`,
//!   `predicted`, `positions`, `velocities`, `potential(_mut)`, `refresh_pattern`): an
//!   [`Objective`] for one time step.
//!
//! # Behaviour at the edges
//!
//! - Fixed dofs (`SolveOptions::fixed`): gradient and step entries are zeroed; Newton factors a
//!   matrix whose fixed rows and columns are the identity.
//! - A non-descent direction is replaced by `−g`. A line search that fails with finite energies
//!   is retried along `−g`, then the solve ends with [`Status::Stalled`]. An energy that is
//!   non-finite even at the smallest trial step, a non-finite gradient, Hessian, Jacobian or
//!   direction is a [`SolveError::NonFinite`]; a non-finite starting energy is
//!   [`SolveError::InfeasibleStart`]. Every loop is bounded: no input makes a solve hang.
//! - Levenberg–Marquardt ([`GaussNewton`] with `damping`) has no line search: a trial step
//!   that does not lower `½‖r‖²` (or whose energy is `+∞`) is rejected and μ grows; a NaN trial
//!   energy is [`SolveError::NonFinite`]; more than `max_rejections` rejections in a row end the
//!   solve with [`Status::Stalled`].

mod cg;
mod cholesky;
mod driver;
mod error;
mod gauge;
mod gauss_newton;
mod gradient_descent;
mod implicit_euler;
mod jacobian;
mod lbfgs;
mod levenberg_marquardt;
mod line_search;
mod newton;
mod newton_cg;
mod objective;
mod report;
mod solver;
mod stopping;

pub use cg::CgOptions;
pub use driver::Callback;
pub use error::SolveError;
pub use gauge::TranslationClasses;
pub use gauss_newton::{GaussNewton, GaussNewtonLinear};
pub use gradient_descent::GradientDescent;
pub use implicit_euler::ImplicitEuler;
pub use jacobian::JacobianPattern;
pub use lbfgs::Lbfgs;
pub use levenberg_marquardt::{DampingScaling, LevenbergMarquardt};
pub use line_search::{LineSearch, LineSearchOutcome};
pub use newton::{Newton, ShiftOptions};
pub use newton_cg::NewtonCg;
pub use objective::{HessianEntries, Objective, next_pattern_generation};
pub use report::{Control, IterationInfo, SolveReport, Status, Timings};
pub use solver::Solver;
pub use stopping::{STEP_STOP_GRADIENT_REDUCTION, SolveOptions};

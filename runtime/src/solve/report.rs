//! What a solve reports: per-iteration records, timings, the final status.

use std::time::Duration;

/// Time spent in one iteration (or a whole solve), by kind of work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Energy, gradient, Hessian, HVP, residual and Jacobian evaluation (less what the objective
    /// reports as assembly).
    pub derivatives: Duration,
    /// Scattering into global buffers (as reported by the objective) and the solver's own matrix
    /// preparation (masking, shifting, `JᵀJ`).
    pub assembly: Duration,
    /// Factorizations, triangular solves, CG iterations (excluding their HVPs).
    pub linear_solve: Duration,
    /// The line search, energy evaluations included.
    pub line_search: Duration,
}

impl Timings {
    pub fn total(&self) -> Duration {
        self.derivatives + self.assembly + self.linear_solve + self.line_search
    }
    pub(crate) fn add(&mut self, o: &Timings) {
        self.derivatives += o.derivatives;
        self.assembly += o.assembly;
        self.linear_solve += o.linear_solve;
        self.line_search += o.line_search;
    }
}

/// One accepted iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationInfo {
    /// 1 for the first step.
    pub iteration: usize,
    /// The energy after the step.
    pub energy: f64,
    /// ‖g‖₂ over the free dofs after the step.
    pub grad_norm: f64,
    /// The accepted line-search step length t (the step is `t·d`).
    pub step: f64,
    /// ‖t·d‖₂.
    pub step_norm: f64,
    /// The squared Newton decrement `−gᵀd` before the step (Newton-type solvers).
    pub decrement: Option<f64>,
    /// Halvings (shrinks) the line search made; for Levenberg–Marquardt, the trial steps
    /// rejected before this one was accepted.
    pub backtracks: usize,
    /// The diagonal shift added to the Hessian (Newton, Gauss-Newton assembled), 0 if none.
    pub shift: f64,
    /// The Levenberg–Marquardt damping μ of the accepted step (`None` for other solvers).
    pub mu: Option<f64>,
    /// Inner linear iterations (CG), 0 for direct solves.
    pub linear_iterations: usize,
    pub timings: Timings,
}

/// What the per-iteration callback returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// Why a solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// ‖g‖ ≤ `grad_abs_tol`, or ‖g‖ ≤ `grad_rel_tol`·‖g₀‖.
    GradientTolerance,
    /// Half the squared Newton decrement fell below `decrement_tol`.
    NewtonDecrement,
    /// ‖Δx‖ ≤ `step_tol`·(1 + ‖x‖) with ‖g‖ brought down to at most 10⁻³·‖g₀‖: the
    /// iterates stopped moving at floating-point resolution near a stationary point (such a
    /// step with the gradient not reduced, or one that the line search shortened past a NaN
    /// or `+∞` trial, is [`Status::Stalled`] instead).
    StepTolerance,
    /// `max_iters` steps were taken.
    MaxIterations,
    /// The callback returned [`Control::Stop`].
    Stopped,
    /// The line search found no step with sufficient decrease although every trial energy was
    /// finite: the energy cannot be decreased further at floating-point resolution along the
    /// direction (and along −g); or it accepted only a step below the step tolerance after a
    /// NaN or `+∞` trial (a wall just ahead); or Levenberg–Marquardt's damping grew until its
    /// step fell below it. `x` is the last accepted iterate.
    Stalled,
}

impl Status {
    /// Whether the status is a convergence criterion (gradient, decrement, step).
    pub fn converged(self) -> bool {
        matches!(
            self,
            Status::GradientTolerance | Status::NewtonDecrement | Status::StepTolerance
        )
    }
}

/// The result of a solve: the final state and the history of accepted iterations.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveReport {
    pub status: Status,
    /// Accepted steps.
    pub iterations: usize,
    pub initial_energy: f64,
    pub energy: f64,
    pub initial_grad_norm: f64,
    pub grad_norm: f64,
    pub history: Vec<IterationInfo>,
    /// The sum over the iterations (plus the initial evaluation's derivatives).
    pub timings: Timings,
}

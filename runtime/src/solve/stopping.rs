//! The stopping rule shared by all solvers, and the options every solve takes.
/// The reduction of ‖g‖ below which a stop on the step tolerance counts as converged
/// ([`SolveOptions::step_stop_converged`]).
pub const STEP_STOP_GRADIENT_REDUCTION: f64 = 1e-3;


use super::line_search::LineSearch;
use super::report::Status;

/// Options common to every solver: stopping, line search, fixed dofs.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveOptions {
    /// The most steps to take.
    pub max_iters: usize,
    /// Stop when ‖g‖₂ (free dofs) ≤ this.
    pub grad_abs_tol: f64,
    /// Stop when ‖g‖₂ ≤ this · ‖g₀‖₂ (0 disables).
    pub grad_rel_tol: f64,
    /// Newton-type solvers stop before stepping when `−gᵀd / 2 ≤` this (0 disables).
    pub decrement_tol: f64,
    /// Stop when an accepted step has ‖Δx‖₂ ≤ this · (1 + ‖x‖₂) (0 disables).
    pub step_tol: f64,
    /// `fixed[i]` pins dof i: its gradient and step are zero and it keeps its starting value.
    pub fixed: Option<Vec<bool>>,
    pub line_search: LineSearch,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            max_iters: 200,
            grad_abs_tol: 1e-8,
            grad_rel_tol: 0.0,
            decrement_tol: 0.0,
            step_tol: 1e-15,
            fixed: None,
            line_search: LineSearch::default(),
        }
    }
}

impl SolveOptions {
    /// Checks the values against their documented ranges: the line search's c₁ and shrink
    /// factor in (0, 1) and at least one backtrack, the tolerances ≥ 0 (not NaN). Every solve
    /// checks them first ([`super::SolveError::InvalidOption`]).
    pub fn validate(&self) -> Result<(), super::SolveError> {
        let bad = |m: String| Err(super::SolveError::InvalidOption(m));
        let ls = &self.line_search;
        if ls.c1.is_nan() || ls.c1 <= 0.0 || ls.c1 >= 1.0 {
            return bad(format!("line_search.c1 = {} (the sufficient-decrease constant must be in (0, 1))", ls.c1));
        }
        if ls.shrink.is_nan() || ls.shrink <= 0.0 || ls.shrink >= 1.0 {
            return bad(format!("line_search.shrink = {} (the shrink factor must be in (0, 1))", ls.shrink));
        }
        if ls.max_backtracks == 0 {
            return bad("line_search.max_backtracks = 0 (at least one backtrack)".into());
        }
        for (name, v) in [
            ("grad_abs_tol", self.grad_abs_tol),
            ("grad_rel_tol", self.grad_rel_tol),
            ("decrement_tol", self.decrement_tol),
            ("step_tol", self.step_tol),
        ] {
            if v.is_nan() || v < 0.0 {
                return bad(format!("{name} = {v} (a tolerance must be ≥ 0)"));
            }
        }
        Ok(())
    }

    pub(crate) fn gradient_stop(&self, gnorm: f64, g0: f64) -> Option<Status> {
        (gnorm <= self.grad_abs_tol || gnorm <= self.grad_rel_tol * g0)
            .then_some(Status::GradientTolerance)
    }

    /// The stop before an iteration: the gradient tolerance, then the iteration cap
    /// (`done` iterations so far).
    pub(crate) fn before_iteration(&self, gnorm: f64, g0: f64, done: usize) -> Option<Status> {
        self.gradient_stop(gnorm, g0)
            .or((done >= self.max_iters).then_some(Status::MaxIterations))
    }

    pub(crate) fn decrement_stop(&self, lambda2: Option<f64>) -> Option<Status> {
        match lambda2 {
            Some(l) if self.decrement_tol > 0.0 && 0.5 * l <= self.decrement_tol => {
                Some(Status::NewtonDecrement)
            }
            _ => None,
        }
    }

    pub(crate) fn step_stop(&self, step_norm: f64, x_norm: f64) -> Option<Status> {
        (step_norm <= self.step_tol * (1.0 + x_norm)).then_some(Status::StepTolerance)
    }

    /// Whether a stop on the step tolerance is a convergence: the gradient came down to at
    /// most [`STEP_STOP_GRADIENT_REDUCTION`] of its start (or meets the gradient tolerance).
    /// Otherwise the iterates stopped moving far from a stationary point (an energy unbounded
    /// below whose iterates grew until a step of millions was below 10⁻¹⁵·‖x‖), and the
    /// solve is [`Status::Stalled`].
    pub(crate) fn step_stop_converged(&self, gnorm: f64, g0: f64) -> bool {
        gnorm <= STEP_STOP_GRADIENT_REDUCTION * g0 || self.gradient_stop(gnorm, g0).is_some()
    }
}

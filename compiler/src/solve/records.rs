//! What a solve reports, as data: one [`IterationRecord`] per iteration, one [`StepRecord`]
//! per time step, a [`SummaryRecord`] at the end, and an [`ErrorRecord`] for a run that
//! failed. Each serializes (as a [`Record`], [`Record::to_json`]) to the JSON line
//! `madc run --json` prints: `{"type":"iteration",…}`, `{"type":"step",…}`,
//! `{"type":"summary",…}`, `{"type":"error",…}`, with non-finite numbers as `null`.

use mad_runtime::solve::{IterationInfo, Status};
use serde::{Serialize, Serializer};
use std::time::Duration;

/// One iteration of a minimization.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationRecord {
    /// The time step (1 for the first) of a dynamics run; `None` in a static solve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_step: Option<usize>,
    /// 1 for the first iteration (of each time step).
    pub iteration: usize,
    /// The objective after the iteration (a time step's incremental potential in dynamics).
    pub energy: f64,
    /// ‖g‖ over the free dofs after the iteration; in dynamics, the residual of the
    /// equations of motion, ‖M(x − x̂)/h² + ∇E‖ (the quantity `tol` bounds).
    pub grad_norm: f64,
    /// The accepted line-search step length t.
    pub step: f64,
    /// ‖t·d‖₂.
    pub step_norm: f64,
    /// Line-search halvings (Levenberg–Marquardt: rejected trial steps).
    pub backtracks: usize,
    /// The diagonal shift added to the Hessian, 0 if none.
    pub shift: f64,
    /// The Levenberg–Marquardt damping μ of the accepted step (`None` for other solvers).
    pub mu: Option<f64>,
    /// Inner linear (CG) iterations, 0 for direct solves.
    pub linear_iterations: usize,
    /// Wall time of the iteration and of its parts, in milliseconds.
    pub time_ms: f64,
    pub derivatives_ms: f64,
    pub assembly_ms: f64,
    pub linear_solve_ms: f64,
    pub line_search_ms: f64,
}

impl IterationRecord {
    /// The record of the solver's iteration `it` (of time step `time_step`, if any).
    pub fn new(time_step: Option<usize>, it: &IterationInfo) -> IterationRecord {
        let t = &it.timings;
        IterationRecord {
            time_step,
            iteration: it.iteration,
            energy: it.energy,
            grad_norm: it.grad_norm,
            step: it.step,
            step_norm: it.step_norm,
            backtracks: it.backtracks,
            shift: it.shift,
            mu: it.mu,
            linear_iterations: it.linear_iterations,
            time_ms: ms(t.total()),
            derivatives_ms: ms(t.derivatives),
            assembly_ms: ms(t.assembly),
            linear_solve_ms: ms(t.linear_solve),
            line_search_ms: ms(t.line_search),
        }
    }
}

/// One implicit Euler time step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepRecord {
    /// 1 for the first step.
    pub time_step: usize,
    /// The time at the end of the step, `time_step · dt`.
    pub time: f64,
    /// The iterations of the step's minimization.
    pub iterations: usize,
    /// Why the step's minimization ended.
    #[serde(serialize_with = "status")]
    pub status: Status,
    /// The potential energy E after the step.
    pub potential: f64,
    /// The residual of the equations of motion after the step.
    pub grad_norm: f64,
}

/// The end of a run. A dynamics run reports `initial_energy`/`energy` for the objective of
/// its last minimization (the last step's incremental potential), and the potential energy E
/// at the start and after the last step as `initial_potential`/`potential` (`None` for a
/// static solve).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRecord {
    pub solver: String,
    pub mesh: String,
    /// Why the (last) minimization ended.
    #[serde(serialize_with = "status")]
    pub status: Status,
    /// Whether it converged ([`Status::converged`]).
    pub converged: bool,
    /// The iterations of the (last) minimization.
    pub iterations: usize,
    /// The iterations of every minimization of the run.
    pub total_iterations: usize,
    /// The time steps run (0 for a static solve).
    pub time_steps: usize,
    pub initial_energy: f64,
    pub energy: f64,
    pub initial_grad_norm: f64,
    pub grad_norm: f64,
    pub initial_potential: Option<f64>,
    pub potential: Option<f64>,
    /// Wall time of the run in milliseconds.
    pub time_ms: f64,
    /// The file holding the result (in a dynamics run, the last frame), if one is written.
    pub out: Option<String>,
}

/// A run that failed after its settings were read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorRecord {
    pub message: String,
    /// The exit status `madc` ends with: 1 for bad input, 2 for a solver failure.
    pub exit_status: i32,
}

/// Any record, tagged with its `type` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Iteration(IterationRecord),
    Step(StepRecord),
    Summary(SummaryRecord),
    Error(ErrorRecord),
}

impl Record {
    /// The record as one line of JSON (without the newline).
    pub fn to_json(&self) -> String {
        super::json::to_line(self)
    }
}

/// The name of a solver status, as the records write it (`gradient_tolerance`, …).
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::GradientTolerance => "gradient_tolerance",
        Status::NewtonDecrement => "newton_decrement",
        Status::StepTolerance => "step_tolerance",
        Status::MaxIterations => "max_iterations",
        Status::Stopped => "stopped",
        Status::Stalled => "stalled",
    }
}

fn status<S: Serializer>(s: &Status, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(status_name(*s))
}

/// A duration in milliseconds.
pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

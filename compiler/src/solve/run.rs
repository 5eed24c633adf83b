//! The solve itself: one static minimization, or implicit Euler time steps, of the problem
//! that [`Settings`] describe, reporting warnings, iterations and time steps to an event
//! handler as they happen, and returning an [`Outcome`].
//!
//! Dynamics (`steps`): implicit Euler with a lumped mass of 1 per vertex (every dof component
//! of a vertex has mass 1), starting at rest. Gradient norms there are the residual of the
//! equations of motion, ‖M(x − x̂)/h² + ∇E‖, the quantity `tol` bounds.

use super::failure::{Failure, solver_failure};
use super::fixed::fixed_mask;
use super::output::{Frame, frame_path};
use super::problem::Problem;
use super::records::{IterationRecord, StepRecord, SummaryRecord, ms};
use super::settings::Settings;
use crate::energy::EnergyProgram;
use mad_runtime::solve::{
    Control, ImplicitEuler, IterationInfo, Objective as _, SolveOptions, SolveReport, Solver,
    Status,
};
use std::time::Instant;

/// What a solve reports while it runs.
pub enum Event<'a> {
    /// A warning about the input (the run goes on): a mesh the loader had to repair, a term
    /// without elements, a setting that fixes nothing or is dropped.
    Warning(&'a str),
    /// The problem is set up: the minimization (or the first time step) begins.
    Started,
    /// An iteration of a minimization (of a time step, in dynamics).
    Iteration(&'a IterationRecord),
    /// A time step, with the positions after it.
    Step(&'a StepRecord, Frame<'a>),
}

/// How a run ended.
pub struct Outcome<'p> {
    /// Whether the static solve converged (a fixed-step gradient descent that ran its
    /// `max_iters` iterations counts), or every time step ran.
    pub success: bool,
    /// The report of the static solve, or of the last time step's minimization (its
    /// gradient norms as in [`IterationRecord::grad_norm`]).
    pub report: SolveReport,
    /// The time steps run (0 for a static solve).
    pub time_steps: usize,
    /// The iterations of every minimization of the run.
    pub total_iterations: usize,
    /// In dynamics, the potential energy E at the start and after the last step.
    pub potentials: Option<(f64, f64)>,
    /// The problem, its `x` where the run ended.
    pub problem: Problem<'p>,
    started: Instant,
}

impl Outcome<'_> {
    /// The result, with what writing it as a mesh needs.
    pub fn frame(&self) -> Frame<'_> {
        self.problem.frame()
    }

    /// The summary of the run of `s`, its time measured from the start of the solve to now.
    pub fn summary(&self, s: &Settings) -> SummaryRecord {
        let r = &self.report;
        // The file holding the result: in a dynamics run, the last frame written.
        let out = match (&s.out, s.steps.is_some()) {
            (Some(o), true) if self.time_steps > 0 => Some(frame_path(o, self.time_steps)),
            (Some(o), false) => Some(o.clone()),
            _ => None,
        };
        SummaryRecord {
            solver: s.solver.clone(),
            mesh: s.mesh.clone(),
            status: r.status,
            converged: r.status.converged(),
            iterations: r.iterations,
            total_iterations: self.total_iterations,
            time_steps: self.time_steps,
            initial_energy: r.initial_energy,
            energy: r.energy,
            initial_grad_norm: r.initial_grad_norm,
            grad_norm: r.grad_norm,
            initial_potential: self.potentials.map(|p| p.0),
            potential: self.potentials.map(|p| p.1),
            time_ms: ms(self.started.elapsed()),
            out,
        }
    }
}

/// The solver named by `s`, configured by it (projected Newton, gradient descent's step).
pub fn configure_solver(s: &Settings) -> Result<Solver, String> {
    let mut solver =
        Solver::from_name(&s.solver).ok_or_else(|| format!("unknown solver `{}`", s.solver))?;
    if let Solver::Newton(n) = &mut solver {
        n.project_psd = s.project_psd;
    }
    if let Solver::GradientDescent(g) = &mut solver {
        g.step = s.step;
    }
    Ok(solver)
}

/// Solves `prog`'s terms as `s` says, passing each [`Event`] to `handler`; an error the
/// handler returns stops the run ([`Failure::Handler`]). Nothing is printed or written:
/// the result mesh, frames and plots are the caller's to write ([`Outcome::frame`],
/// [`Frame::write_mesh`] in the handler's [`Event::Step`]).
pub fn solve<'p>(
    prog: &'p EnergyProgram,
    s: &Settings,
    mut handler: impl FnMut(Event<'_>) -> Result<(), String>,
) -> Result<Outcome<'p>, Failure> {
    let mut events = Events {
        handler: &mut handler,
        error: None,
        iterations: 0,
    };
    let problem = Problem::new(prog, s, &mut |w| events.warning(w));
    events.check()?;
    let mut problem = problem?;
    let energy = problem.objective.energy();
    // Missing params or data, or an `out_field` that names no field, are bad
    // input, not a failure of the solver.
    energy.check_data().map_err(|e| e.to_string())?;
    if let Some(f) = &s.out_field {
        energy
            .field_positions(&problem.x, f)
            .map_err(|e| format!("out_field: {e}"))?;
    } else if let Some(out) = &s.out
        && energy.positions_of(&problem.x).is_none()
    {
        return Err(Failure::Input(format!(
            "--out {out}: the mesh written takes its positions from the first vertex `dof` \
             field, and this program's dofs are not on vertices; set `out_field` in the solve \
             block to a vertex `state` to write, or leave out --out"
        )));
    }
    let mut opts = SolveOptions {
        max_iters: s.max_iters,
        grad_abs_tol: s.tol,
        ..SolveOptions::default()
    };
    if let Some(spec) = &s.fix {
        let mask = fixed_mask(energy, spec, s.fix_from_flag, &mut |w| events.warning(w));
        events.check()?;
        opts.fixed = Some(mask?);
    }
    let mut solver = configure_solver(s)?;
    (events.handler)(Event::Started).map_err(Failure::Handler)?;
    let started = Instant::now();
    let (success, report, time_steps, potentials) = match s.steps {
        None => {
            let report = static_solve(&mut problem, &mut solver, &opts, s, &mut events)?;
            // A fixed-step gradient descent is a fixed number of iterations (smoothing).
            let fixed_run =
                s.step.is_some() && s.solver == "gd" && report.status == Status::MaxIterations;
            (report.status.converged() || fixed_run, report, 0, None)
        }
        Some(steps) => {
            let (report, potentials) =
                time_steps(&mut problem, &mut solver, &opts, s, steps, &mut events)?;
            (true, report, steps, Some(potentials))
        }
    };
    Ok(Outcome {
        success,
        report,
        time_steps,
        total_iterations: events.iterations,
        potentials,
        problem,
        started,
    })
}

/// One minimization of the problem's objective from its `x`.
fn static_solve(
    problem: &mut Problem,
    solver: &mut Solver,
    opts: &SolveOptions,
    s: &Settings,
    events: &mut Events,
) -> Result<SolveReport, Failure> {
    let mut cb = |it: &IterationInfo| events.iteration(IterationRecord::new(None, it));
    let report = solver.solve(&mut problem.objective, &mut problem.x, opts, Some(&mut cb));
    events.check()?;
    report.map_err(|e| solver_failure("", &s.solver, e))
}

/// `steps` implicit Euler steps from the problem's `x` at rest; returns the last step's
/// report and the potential energy at the start and after the last step.
fn time_steps(
    problem: &mut Problem,
    solver: &mut Solver,
    opts: &SolveOptions,
    s: &Settings,
    steps: usize,
    events: &mut Events,
) -> Result<(SolveReport, (f64, f64)), Failure> {
    let Problem { objective, x, mesh } = problem;
    let n = x.len();
    let mut euler = ImplicitEuler::new(&mut *objective, vec![1.0; n], s.dt, x.clone(), vec![0.0; n])
        .map_err(|e| e.to_string())?;
    let mut last = None;
    let first_potential = euler.potential_mut().value(x).map_err(|e| e.to_string())?;
    let mut last_potential = first_potential;
    // Gradient norms are shown as the residual of the equations of motion, the
    // incremental potential's over h², the quantity `tol` bounds
    // (`ImplicitEuler::step_options`).
    let h2 = s.dt * s.dt;
    for k in 1..=steps {
        let mut cb = |it: &IterationInfo| {
            let mut record = IterationRecord::new(Some(k), it);
            record.grad_norm = it.grad_norm / h2;
            events.iteration(record)
        };
        let report = euler.step(solver, opts, Some(&mut cb));
        events.check()?;
        let mut report =
            report.map_err(|e| solver_failure(&format!("time step {k}: "), &s.solver, e))?;
        report.grad_norm /= h2;
        report.initial_grad_norm /= h2;
        let pos = euler.positions().to_vec();
        let potential = euler
            .potential_mut()
            .value(&pos)
            .map_err(|e| e.to_string())?;
        let record = StepRecord {
            time_step: k,
            time: k as f64 * s.dt,
            iterations: report.iterations,
            status: report.status,
            potential,
            grad_norm: report.grad_norm,
        };
        let frame = Frame {
            energy: euler.potential().energy(),
            mesh,
            x: euler.positions(),
        };
        (events.handler)(Event::Step(&record, frame)).map_err(Failure::Handler)?;
        last = Some(report);
        last_potential = potential;
    }
    x.copy_from_slice(euler.positions());
    let last = last.expect("a dynamics run has at least one time step");
    Ok((last, (first_potential, last_potential)))
}

/// The handler of a run, the first error it returned, and the iterations reported.
struct Events<'h> {
    handler: &'h mut dyn FnMut(Event<'_>) -> Result<(), String>,
    error: Option<String>,
    iterations: usize,
}

impl Events<'_> {
    fn warning(&mut self, message: &str) {
        if self.error.is_none()
            && let Err(e) = (self.handler)(Event::Warning(message))
        {
            self.error = Some(e);
        }
    }

    /// Reports an iteration; stops the solver once the handler returned an error.
    fn iteration(&mut self, record: IterationRecord) -> Control {
        self.iterations += 1;
        if self.error.is_some() {
            return Control::Stop;
        }
        match (self.handler)(Event::Iteration(&record)) {
            Ok(()) => Control::Continue,
            Err(e) => {
                self.error = Some(e);
                Control::Stop
            }
        }
    }

    /// The handler's error, if it returned one.
    fn check(&mut self) -> Result<(), Failure> {
        self.error.take().map_or(Ok(()), |e| Err(Failure::Handler(e)))
    }
}

//! The iteration loop every solver shares: evaluate, ask the method for a direction, stop or
//! line-search, record, call back.
//!
//! Per iteration: stop on the gradient rule; compute a direction (a non-descent one is replaced
//! by −g); stop on the Newton decrement; cap the first trial step by the objective's
//! [`Objective::max_step`]; line-search (if the search fails with finite energies or with `+∞`
//! — a wall — at its smallest trial step, retry once along −g, then end with
//! [`Status::Stalled`]; if the energy is NaN at the smallest trial step, return
//! [`SolveError::NonFinite`]); take the step; run
//! [`Objective::update`] (also once before the first evaluation; its time counts as derivative
//! evaluation; when it reports a change the method restarts instead of learning from the step);
//! re-evaluate (a
//! non-finite energy or gradient at an accepted point is an error); record; call back; stop on the
//! step rule or the iteration cap.

use super::error::check_len;
use super::report::{Control, IterationInfo, SolveReport, Status, Timings};
use super::{LineSearchOutcome, Objective, SolveError, SolveOptions};
use std::time::{Duration, Instant};

/// The per-iteration callback type.
pub type Callback<'a> = &'a mut dyn FnMut(&IterationInfo) -> Control;

/// What a method reports with a direction.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DirectionInfo {
    pub decrement: Option<f64>,
    pub shift: f64,
    pub linear_iterations: usize,
}

/// A way of computing search directions.
pub(crate) trait Method<O: Objective + ?Sized> {
    /// The energy the line search minimizes.
    fn energy(&mut self, obj: &mut O, x: &[f64]) -> Result<f64, SolveError> {
        obj.value(x)
    }
    /// The energy and its gradient (`g` is zeroed by the caller).
    fn energy_grad(&mut self, obj: &mut O, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        obj.value_grad(x, g)
    }
    /// A search direction at `x` (gradient `g`, masked) into `d`.
    fn direction(
        &mut self,
        obj: &mut O,
        ctx: &Ctx,
        x: &[f64],
        g: &[f64],
        d: &mut [f64],
        t: &mut Timings,
    ) -> Result<DirectionInfo, SolveError>;
    /// The first trial step of the line search.
    fn initial_step(&mut self, _g: &[f64], _d: &[f64]) -> f64 {
        1.0
    }
    /// Called after an accepted step `s` with gradient change `y`.
    fn accepted(&mut self, _s: &[f64], _y: &[f64], _step: f64) {}
    /// Called instead of `accepted` when an [`Objective::update`] changed the energy: the
    /// method forgets what it learned about the old one.
    fn restart(&mut self) {}
}

/// What a method may need to know about the solve.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub fixed: Option<&'a [bool]>,
    pub iteration: usize,
    /// The gradient norm at or below which the solve stops (the gradient rule).
    pub gradient_stop: f64,
    /// Whether this is the last iteration the cap allows.
    pub last: bool,
}

/// ‖v‖ (0 for no entries: the float `sum` of nothing is −0).
pub(crate) fn norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |s, a| s + a * a).sqrt()
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// Zeroes the entries of fixed dofs.
pub(crate) fn mask(fixed: Option<&[bool]>, v: &mut [f64]) {
    if let Some(f) = fixed {
        for (vi, &fi) in v.iter_mut().zip(f) {
            if fi {
                *vi = 0.0;
            }
        }
    }
}

/// Calls an objective method and books its time as derivative evaluation, less what the
/// objective reports as assembly.
pub(crate) fn timed_eval<O: Objective + ?Sized, R>(
    obj: &mut O,
    t: &mut Timings,
    f: impl FnOnce(&mut O) -> R,
) -> R {
    let start = Instant::now();
    let r = f(obj);
    let total = start.elapsed();
    let assembly = obj.take_assembly_time().min(total);
    t.derivatives += total - assembly;
    t.assembly += assembly;
    r
}

/// Runs `body` and adds its time to `slot`.
pub(crate) fn timed<R>(slot: &mut Duration, body: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = body();
    *slot += start.elapsed();
    r
}

/// What every solver loop does first: checks the lengths of `x` and of the fixed-dof mask,
/// runs the objective's `update`, and evaluates the energy and the (masked) gradient at `x`
/// with `energy_grad`, booked in `total`. Errors on an infinite or NaN start energy
/// [`Objective::update`] with the fixed dofs held: an update that moves one (a `dof`
/// field's `update` in a mesh program) is undone for it, since fixed dofs keep the values
/// they start with. Returns whether the update changed anything.
pub(crate) fn update_keeping_fixed<O: Objective + ?Sized>(
    obj: &mut O,
    x: &mut [f64],
    fixed: Option<&[bool]>,
) -> Result<bool, SolveError> {
    let Some(f) = fixed.filter(|f| f.iter().any(|&b| b)) else {
        return obj.update(x);
    };
    let held: Vec<(usize, f64)> = f.iter().enumerate().filter(|(_, b)| **b).map(|(i, _)| (i, x[i])).collect();
    let changed = obj.update(x)?;
    for (i, v) in held {
        x[i] = v;
    }
    Ok(changed)
}

/// ([`SolveError::InfeasibleStart`]) and on a non-finite gradient.
pub(crate) fn start<'o, O: Objective + ?Sized>(
    obj: &mut O,
    x: &mut [f64],
    opts: &'o SolveOptions,
    total: &mut Timings,
    energy_grad: impl FnOnce(&mut O, &[f64], &mut [f64]) -> Result<f64, SolveError>,
) -> Result<Start<'o>, SolveError> {
    opts.validate()?;
    let n = obj.num_dofs();
    check_len("x", n, x.len())?;
    let fixed = opts.fixed.as_deref();
    if let Some(f) = fixed {
        check_len("fixed-dof mask", n, f.len())?;
    }
    update_keeping_fixed(obj, x, fixed)?;
    let mut g = vec![0.0; n];
    let f = timed_eval(obj, total, |o| energy_grad(o, x, &mut g))?;
    if !f.is_finite() {
        return Err(SolveError::InfeasibleStart { energy: f });
    }
    mask(fixed, &mut g);
    if g.iter().any(|v| !v.is_finite()) {
        return Err(SolveError::NonFinite {
            iteration: 0,
            what: "gradient",
        });
    }
    Ok(Start { fixed, f, g })
}

/// What [`start`] returns: the fixed-dof mask, the energy and the masked gradient at x.
pub(crate) struct Start<'o> {
    pub fixed: Option<&'o [bool]>,
    pub f: f64,
    pub g: Vec<f64>,
}

pub(crate) fn run<O: Objective + ?Sized, M: Method<O>>(
    method: &mut M,
    obj: &mut O,
    x: &mut [f64],
    opts: &SolveOptions,
    mut callback: Option<Callback>,
) -> Result<SolveReport, SolveError> {
    let n = obj.num_dofs();
    let mut total = Timings::default();
    let Start { fixed, mut f, mut g } = start(obj, x, opts, &mut total, |o, x, g| method.energy_grad(o, x, g))?;
    let (f0, g0) = (f, norm(&g));
    let mut gnorm = g0;
    let mut history = Vec::new();
    let mut d = vec![0.0; n];
    let mut trial = vec![0.0; n];
    let mut g_new = vec![0.0; n];
    let mut s = vec![0.0; n];
    let status;
    let mut iteration = 0;
    loop {
        if let Some(st) = opts.before_iteration(gnorm, g0, iteration) {
            status = st;
            break;
        }
        iteration += 1;
        let mut t = Timings::default();
        d.fill(0.0);
        let ctx = Ctx {
            fixed,
            iteration,
            gradient_stop: opts.grad_abs_tol.max(opts.grad_rel_tol * g0),
            last: iteration >= opts.max_iters,
        };
        let info = method.direction(obj, &ctx, x, &g, &mut d, &mut t)?;
        mask(fixed, &mut d);
        if d.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::NonFinite {
                iteration,
                what: "search direction",
            });
        }
        let mut slope = dot(&g, &d);
        let mut steepest = false;
        if slope >= 0.0 || !slope.is_finite() {
            for (di, gi) in d.iter_mut().zip(&g) {
                *di = -gi;
            }
            slope = -gnorm * gnorm;
            steepest = true;
        }
        if let Some(st) = opts.decrement_stop(info.decrement) {
            status = st;
            break;
        }
        let t0 = if steepest {
            1.0
        } else {
            method.initial_step(&g, &d)
        };
        let t0 = obj.max_step(x, &d, t0)?;
        let ls_start = Instant::now();
        let mut energy = |y: &[f64]| {
            let mut dummy = Timings::default();
            timed_eval(obj, &mut dummy, |o| method.energy(o, y))
        };
        let mut outcome = opts
            .line_search
            .search(&mut energy, x, f, &d, slope, t0, &mut trial)?;
        // A wall (a NaN or +∞ trial) met by a failed first search counts for the retry too.
        // A search whose smallest trial was still beyond a `+∞` wall retries as well: the
        // direction (a huge Newton step where the Hessian is singular) may be the problem.
        let mut walled_before = false;
        if let LineSearchOutcome::Failed {
            nan_at_smallest: false,
            walled,
        } = outcome
            && !steepest
        {
            walled_before = walled;
            for (di, gi) in d.iter_mut().zip(&g) {
                *di = -gi;
            }
            slope = -gnorm * gnorm;
            let t0 = obj.max_step(x, &d, 1.0)?;
            let mut energy = |y: &[f64]| {
                let mut dummy = Timings::default();
                timed_eval(obj, &mut dummy, |o| method.energy(o, y))
            };
            outcome = opts
                .line_search
                .search(&mut energy, x, f, &d, slope, t0, &mut trial)?;
        }
        t.line_search += ls_start.elapsed();
        let (step, backtracks, walled) = match outcome {
            LineSearchOutcome::Accepted {
                step, backtracks, walled, ..
            } => (step, backtracks, walled || walled_before),
            LineSearchOutcome::Failed {
                nan_at_smallest: true,
                ..
            } => {
                return Err(SolveError::NonFinite {
                    iteration,
                    what: "energy along the search direction",
                });
            }
            LineSearchOutcome::Failed { .. } => {
                status = Status::Stalled;
                break;
            }
        };
        for ((si, xi), ti) in s.iter_mut().zip(x.iter_mut()).zip(&trial) {
            *si = ti - *xi;
            *xi = *ti;
        }
        // Updates are booked with the derivative evaluations.
        let changed = timed_eval(obj, &mut t, |o| update_keeping_fixed(o, x, fixed))?;
        g_new.fill(0.0);
        f = timed_eval(obj, &mut t, |o| method.energy_grad(o, x, &mut g_new))?;
        mask(fixed, &mut g_new);
        check_accepted(f, &g_new, iteration)?;
        for (gi, gn) in g.iter_mut().zip(&g_new) {
            *gi = gn - *gi;
        }
        if changed {
            method.restart();
        } else {
            method.accepted(&s, &g, step);
        }
        g.copy_from_slice(&g_new);
        gnorm = norm(&g);
        let step_norm = norm(&s);
        total.add(&t);
        let rec = IterationInfo {
            iteration,
            energy: f,
            grad_norm: gnorm,
            step,
            step_norm,
            decrement: info.decrement,
            backtracks,
            shift: info.shift,
            mu: None,
            linear_iterations: info.linear_iterations,
            timings: t,
        };
        if let Some(st) = end_iteration(rec, &mut callback, &mut history, opts, x, g0) {
            // A step below the step tolerance that the line search had to shorten past a NaN
            // or +∞ trial is stuck at that wall, not converged; so is one far from a
            // stationary point (the gradient not reduced: `step_stop_converged`).
            let stuck = walled || !opts.step_stop_converged(gnorm, g0);
            status = if st == Status::StepTolerance && stuck { Status::Stalled } else { st };
            break;
        }
    }
    Ok(report(status, history, (f0, g0), (f, gnorm), total))
}

/// The checks on the energy and the gradient at an accepted point of `iteration`.
pub(crate) fn check_accepted(f: f64, g: &[f64], iteration: usize) -> Result<(), SolveError> {
    if !f.is_finite() {
        return Err(SolveError::NonFinite {
            iteration,
            what: "energy at the accepted point",
        });
    }
    if g.iter().any(|v| !v.is_finite()) {
        return Err(SolveError::NonFinite {
            iteration,
            what: "gradient",
        });
    }
    Ok(())
}

/// Hands an iteration's record to the callback and keeps it; returns the status that ends
/// the solve, if any (the callback asked to stop, or the step tolerance is met).
pub(crate) fn end_iteration(
    rec: IterationInfo,
    callback: &mut Option<Callback>,
    history: &mut Vec<IterationInfo>,
    opts: &SolveOptions,
    x: &[f64],
    g0: f64,
) -> Option<Status> {
    let step_norm = rec.step_norm;
    let gnorm = rec.grad_norm;
    let control = match callback.as_mut() {
        Some(cb) => cb(&rec),
        None => Control::Continue,
    };
    history.push(rec);
    if control == Control::Stop {
        return Some(Status::Stopped);
    }
    // A step below the step tolerance that also brought ‖g‖ within the gradient tolerance
    // stops on the gradient (the rule the user set; the next iteration's test would say so).
    opts.step_stop(step_norm, norm(x))
        .map(|st| opts.gradient_stop(gnorm, g0).unwrap_or(st))
}

/// The report of a finished loop: `start` and `end` are (energy, gradient norm).
pub(crate) fn report(
    status: Status,
    history: Vec<IterationInfo>,
    start: (f64, f64),
    end: (f64, f64),
    timings: Timings,
) -> SolveReport {
    SolveReport {
        status,
        iterations: history.len(),
        initial_energy: start.0,
        energy: end.0,
        initial_grad_norm: start.1,
        grad_norm: end.1,
        history,
        timings,
    }
}

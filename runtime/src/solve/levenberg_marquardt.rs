//! Levenberg–Marquardt damping for [`GaussNewton`]: a trust-region style step instead of the
//! line search.
//!
//! Each iteration solves `(JᵀJ + μD) h = −Jᵀr` (assembled and factored, or matrix-free CG on
//! `Jᵀ(J v) + μ D v`), evaluates the residuals once at `x + h` and compares the actual reduction
//! of `E = ½‖r‖²` with the reduction the Gauss-Newton model predicts,
//! `pred = −gᵀh − ½‖Jh‖²`, in the gain ratio `ρ = (E(x) − E(x + h)) / pred`. Nielsen's rule
//! (Madsen, Nielsen & Tingleff, *Methods for non-linear least squares problems*, 2004, §3.2)
//! updates the damping: a step with `ρ > 0` is accepted and `μ ← μ·max(1/3, 1 − (2ρ − 1)³)`,
//! `ν ← 2`; otherwise the step is rejected, `μ ← μ·ν`, `ν ← 2ν`, and the system is solved again
//! with the same Jacobian (a rejection costs one residual evaluation and one numeric
//! factorization or CG solve; the symbolic factorization is kept while the pattern is
//! unchanged).
//!
//! # The damping matrix D
//!
//! [`DampingScaling::Marquardt`] (the default) uses `D = diag(JᵀJ)`, each entry raised to at
//! least `floor · max diag(JᵀJ)`. The unknowns of one problem often have different units
//! and curvatures (positions pulled by a stiff fit weight next to rotation coefficients whose
//! columns shrink with the edge length): with `D = I` one μ large enough to tame the stiff
//! unknowns freezes the soft ones, while `diag(JᵀJ)` damps every unknown in proportion to its
//! own curvature, so the step does not depend on how the unknowns are scaled. The floor keeps
//! `D` positive for unknowns that no residual touches (zero columns), so `JᵀJ + μD` is
//! positive definite for any μ > 0 even when J is rank-deficient. [`DampingScaling::Identity`]
//! (`D = I`, μ₀ relative to `max diag(JᵀJ)`) is offered for problems whose unknowns share one
//! scale.
//!
//! # Edge cases and stopping
//!
//! - Fixed dofs: masked out of the gradient and the step (identity rows in the factorization).
//! - A trial energy of `+∞` is a rejection (μ grows), so barrier-like residuals keep the iterate
//!   feasible; a NaN trial energy is [`SolveError::NonFinite`]. A factorization that fails
//!   (not numerically positive definite) also counts as a rejection, without a residual
//!   evaluation.
//! - The shared stopping rule: the gradient test before each iteration, the Newton-decrement test
//!   on the first step of an iteration (`−gᵀh`), the step test on every accepted step and on
//!   every proposed step (a proposed step no longer than the step tolerance ends the solve with
//!   [`Status::StepTolerance`] without being evaluated, or with [`Status::Stalled`] when it
//!   was proposed after rejections in the same iteration), and the iteration cap, which counts
//!   accepted steps. More than `max_rejections` rejections in a row end the solve with
//!   [`Status::Stalled`].
//! - Each accepted step is one [`IterationInfo`] (with `backtracks` = the rejections before it
//!   and `mu` = the damping it was solved with) passed to the callback;
//!   [`Objective::max_step`] caps the proposed step; [`Objective::update`] runs after every
//!   accepted step (a change resets ν).
//! - Timings: the Jacobian evaluations are "derivatives", `JᵀJ` and the diagonal "assembly",
//!   factorizations and CG "linear solve", the trial residual evaluations "line search".

use super::cg::{inverse_jacobi, truncated_pcg};
use super::driver::{
    update_keeping_fixed,
    Callback, Method, Start, check_accepted, dot, end_iteration, mask, norm, report, start, timed,
    timed_eval,
};
use super::gauss_newton::{GaussNewton, GaussNewtonLinear};
use super::jacobian::NormalProduct;
use super::newton::ensure_factorization;
use super::report::{IterationInfo, SolveReport, Status, Timings};
use super::{Objective, SolveError, SolveOptions};
use std::time::Instant;

/// How the damping term `μD` is scaled (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DampingScaling {
    /// `D = max(diag(JᵀJ), floor · max diag(JᵀJ))` (Marquardt).
    Marquardt { floor: f64 },
    /// `D = I` (Levenberg); μ₀ is relative to `max diag(JᵀJ)`.
    Identity,
}

/// Levenberg–Marquardt parameters of [`GaussNewton`] (see the module docs).
///
/// The default μ₀ = 10⁻⁵ (relative to `diag(JᵀJ)`) starts close to Gauss-Newton: Nielsen's rule
/// shrinks μ by at most 3 per accepted step but raises it fast after a rejection, so a small
/// start costs a few rejections where the Gauss-Newton step overshoots, while a large one
/// damps the stiff-but-useful directions of an ill-conditioned `JᵀJ` for many iterations
/// (embedded deformation on grid:32x32: 39 iterations with μ₀ = 10⁻³, 16 with 10⁻⁵).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevenbergMarquardt {
    /// The first damping μ₀ (with [`DampingScaling::Identity`]: `μ₀ · max diag(JᵀJ)`).
    pub initial_mu: f64,
    /// The smallest damping (relative like `initial_mu`): accepted steps shrink μ no further.
    pub min_mu: f64,
    pub scaling: DampingScaling,
    /// The most rejected trial steps in a row before the solve ends as stalled.
    pub max_rejections: usize,
}

impl Default for LevenbergMarquardt {
    fn default() -> Self {
        LevenbergMarquardt {
            initial_mu: 1e-5,
            min_mu: 1e-15,
            scaling: DampingScaling::Marquardt { floor: 1e-6 },
            max_rejections: 40,
        }
    }
}

/// The damping state: μ and Nielsen's growth factor ν.
#[derive(Clone, Copy, Debug)]
struct Damping {
    mu: f64,
    nu: f64,
    min: f64,
}

impl Damping {
    /// After an accepted step with gain ratio ρ.
    fn accept(&mut self, rho: f64) {
        let r = 2.0 * rho - 1.0;
        self.mu = (self.mu * (1.0 - r * r * r).max(1.0 / 3.0)).max(self.min);
        self.nu = 2.0;
    }

    /// After a rejected step (or a failed factorization).
    fn reject(&mut self) {
        self.mu *= self.nu;
        self.nu *= 2.0;
    }
}

/// The damping diagonal `D` (over all dofs) from the diagonal of `JᵀJ`, and the scale `μ` is
/// relative to.
fn damping_diagonal(scaling: DampingScaling, jtj_diag: &[f64], d: &mut [f64]) -> f64 {
    let max = jtj_diag
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(*v));
    match scaling {
        DampingScaling::Marquardt { floor } => {
            let lo = if max > 0.0 { floor * max } else { 1.0 };
            for (di, &a) in d.iter_mut().zip(jtj_diag) {
                *di = a.max(lo);
            }
            1.0
        }
        DampingScaling::Identity => {
            d.fill(1.0);
            if max > 0.0 { max } else { 1.0 }
        }
    }
}

/// Runs Levenberg–Marquardt with `gn`'s Jacobian buffers and linear solver.
pub(crate) fn run<O: Objective + ?Sized>(
    gn: &mut GaussNewton,
    lm: LevenbergMarquardt,
    obj: &mut O,
    x: &mut [f64],
    opts: &SolveOptions,
    mut callback: Option<Callback>,
) -> Result<SolveReport, SolveError> {
    let n = obj.num_dofs();
    let mut total = Timings::default();
    let Start { fixed, mut f, mut g } = start(obj, x, opts, &mut total, |o, x, g| gn.energy_grad(o, x, g))?;
    let (f0, g0) = (f, norm(&g));
    let mut gnorm = g0;
    let mut history = Vec::new();
    let mut damping: Option<Damping> = None;
    let (mut h, mut trial) = (vec![0.0; n], vec![0.0; n]);
    let (mut jtj_diag, mut dvec, mut add) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut jh = Vec::new();
    let status;
    let mut iteration = 0;
    'outer: loop {
        if let Some(st) = opts.before_iteration(gnorm, g0, iteration) {
            status = st;
            break;
        }
        iteration += 1;
        let mut t = Timings::default();
        if gn.jac.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::NonFinite {
                iteration,
                what: "Jacobian",
            });
        }
        let jp = gn.jac_pattern.as_ref().expect("energy_grad ran first");
        timed(&mut t.assembly, || {
            jp.normal_diagonal(&gn.jac, &mut jtj_diag)
        });
        let scale = damping_diagonal(lm.scaling, &jtj_diag, &mut dvec);
        let dmp = damping.get_or_insert(Damping {
            mu: lm.initial_mu * scale,
            nu: 2.0,
            min: lm.min_mu * scale,
        });
        if matches!(gn.linear, GaussNewtonLinear::Assembled) {
            if gn.normal.is_none() {
                gn.normal = Some(timed(&mut t.assembly, || NormalProduct::new(jp)));
            }
            let normal = gn.normal.as_ref().expect("set above");
            gn.jtj.resize(normal.pattern.nnz(), 0.0);
            timed(&mut t.assembly, || normal.values(jp, &gn.jac, &mut gn.jtj));
        }
        let mut rejections = 0;
        let mut linear_iterations = 0;
        let mut first = true;
        let (step, mu_used, decrement, step_norm) = loop {
            let mu = dmp.mu;
            for (a, &di) in add.iter_mut().zip(&dvec) {
                *a = mu * di;
            }
            let solved = match gn.linear {
                GaussNewtonLinear::Assembled => {
                    let normal = gn.normal.as_ref().expect("assembled above");
                    let chol = ensure_factorization(
                        &mut gn.chol,
                        &normal.pattern,
                        &mut gn.symbolic_count,
                        &mut t,
                    )?;
                    let ok = timed(&mut t.linear_solve, || {
                        chol.factor_diagonal(&gn.jtj, fixed, &add)
                    })
                    .map_err(|e| at_iteration(e, iteration))?;
                    if ok {
                        for (hi, gi) in h.iter_mut().zip(&g) {
                            *hi = -gi;
                        }
                        timed(&mut t.linear_solve, || chol.solve(&mut h))?;
                    }
                    ok
                }
                GaussNewtonLinear::MatrixFree(cg) => {
                    let start = Instant::now();
                    let pre: Vec<f64> = jtj_diag.iter().zip(&add).map(|(a, b)| a + b).collect();
                    let inv = inverse_jacobi(&pre, fixed);
                    let b: Vec<f64> = g.iter().map(|v| -v).collect();
                    let tol = cg.forcing.min(gnorm.sqrt()) * gnorm;
                    let max_iters = if cg.max_iters == 0 { n } else { cg.max_iters };
                    let jac = &gn.jac;
                    let mut v = vec![0.0; n];
                    let mut w = vec![0.0; jp.rows];
                    let add = &add;
                    let mut apply = |p: &[f64], out: &mut [f64]| {
                        v.copy_from_slice(p);
                        mask(fixed, &mut v);
                        jp.mul(jac, &v, &mut w);
                        jp.mul_transpose(jac, &w, out);
                        for ((o, a), vi) in out.iter_mut().zip(add).zip(&v) {
                            *o += a * vi;
                        }
                        mask(fixed, out);
                        Ok(())
                    };
                    let res = truncated_pcg(&mut apply, &b, &inv, tol, max_iters, &mut h)?;
                    linear_iterations += res.iterations;
                    t.linear_solve += start.elapsed();
                    true
                }
            };
            if solved {
                mask(fixed, &mut h);
                if h.iter().any(|v| !v.is_finite()) {
                    return Err(SolveError::NonFinite {
                        iteration,
                        what: "search direction",
                    });
                }
                let decrement = -dot(&g, &h);
                if first && let Some(st) = opts.decrement_stop(Some(decrement)) {
                    status = st;
                    break 'outer;
                }
                first = false;
                let cap = obj.max_step(x, &h, 1.0)?;
                if cap != 1.0 {
                    for hi in h.iter_mut() {
                        *hi *= cap;
                    }
                }
                let step_norm = norm(&h);
                if let Some(st) = opts.step_stop(step_norm, norm(x)) {
                    // After rejections the damping, not the problem, made the step that
                    // small: stalled (as a line search shortened that far), not converged.
                    // Far from a stationary point, it is stalled too (`step_stop_converged`).
                    let stuck = rejections > 0 || !opts.step_stop_converged(gnorm, g0);
                    status = if stuck { Status::Stalled } else { st };
                    break 'outer;
                }
                // The reduction the Gauss-Newton model predicts: −gᵀh − ½‖Jh‖².
                jh.resize(jp.rows, 0.0);
                jp.mul(&gn.jac, &h, &mut jh);
                let pred = -dot(&g, &h) - 0.5 * dot(&jh, &jh);
                for ((y, a), b) in trial.iter_mut().zip(x.iter()).zip(&h) {
                    *y = a + b;
                }
                let f_new = timed(&mut t.line_search, || {
                    timed_eval(obj, &mut Timings::default(), |o| residual_energy(o, &trial))
                })?;
                if f_new.is_nan() {
                    return Err(SolveError::NonFinite {
                        iteration,
                        what: "energy at a trial point",
                    });
                }
                let rho = (f - f_new) / pred;
                if pred > 0.0 && rho > 0.0 {
                    dmp.accept(rho);
                    break (cap, mu, Some(decrement), step_norm);
                }
            }
            dmp.reject();
            rejections += 1;
            if rejections > lm.max_rejections || !dmp.mu.is_finite() {
                status = Status::Stalled;
                break 'outer;
            }
        };
        x.copy_from_slice(&trial);
        let changed = timed_eval(obj, &mut t, |o| update_keeping_fixed(o, x, fixed))?;
        if changed {
            dmp.nu = 2.0;
        }
        g.fill(0.0);
        f = timed_eval(obj, &mut t, |o| gn.energy_grad(o, x, &mut g))?;
        mask(fixed, &mut g);
        check_accepted(f, &g, iteration)?;
        gnorm = norm(&g);
        total.add(&t);
        let rec = IterationInfo {
            iteration,
            energy: f,
            grad_norm: gnorm,
            step,
            step_norm,
            decrement,
            backtracks: rejections,
            shift: 0.0,
            mu: Some(mu_used),
            linear_iterations,
            timings: t,
        };
        if let Some(st) = end_iteration(rec, &mut callback, &mut history, opts, x, g0) {
            status = st;
            break;
        }
    }
    Ok(report(status, history, (f0, g0), (f, gnorm), total))
}

/// `½‖r(x)‖²` at a trial point (residuals only, no Jacobian).
fn residual_energy<O: Objective + ?Sized>(obj: &mut O, x: &[f64]) -> Result<f64, SolveError> {
    let m = obj
        .jacobian_pattern()
        .ok_or(SolveError::Unsupported("a residual Jacobian pattern"))?
        .rows;
    let mut r = vec![0.0; m];
    obj.residuals(x, &mut r)?;
    Ok(0.5 * dot(&r, &r))
}

fn at_iteration(e: SolveError, iteration: usize) -> SolveError {
    match e {
        SolveError::Factorization { message, .. } => {
            SolveError::Factorization { iteration, message }
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nielsen_update() {
        let mut d = Damping {
            mu: 1.0,
            nu: 2.0,
            min: 1e-15,
        };
        // ρ = 1 (the model is exact): μ shrinks by 3.
        d.accept(1.0);
        assert_eq!(d.mu, 1.0 / 3.0);
        // ρ = 0.5: 1 − 0 = 1, μ unchanged.
        d.accept(0.5);
        assert_eq!(d.mu, 1.0 / 3.0);
        // Rejections double μ, then quadruple it.
        d.reject();
        d.reject();
        assert_eq!(d.mu, 1.0 / 3.0 * 8.0);
        assert_eq!(d.nu, 8.0);
        // An accepted step resets ν; μ never drops below the floor.
        d.mu = 1e-15;
        d.accept(1.0);
        assert_eq!((d.mu, d.nu), (1e-15, 2.0));
    }

    #[test]
    fn marquardt_diagonal_has_a_floor() {
        let mut d = [0.0; 3];
        let s = damping_diagonal(
            DampingScaling::Marquardt { floor: 1e-6 },
            &[4.0, 0.0, 1e-9],
            &mut d,
        );
        assert_eq!((s, d), (1.0, [4.0, 4e-6, 4e-6]));
        let s = damping_diagonal(DampingScaling::Identity, &[4.0, 0.0, 2.0], &mut d);
        assert_eq!((s, d), (4.0, [1.0; 3]));
    }
}

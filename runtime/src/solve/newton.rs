//! Newton's method with a sparse Cholesky factorization and a diagonal-shift fallback.
//!
//! Each iteration assembles the Hessian values (optionally per-element PSD-projected by the
//! objective), factors `H + τI` reusing the symbolic factorization while the objective's pattern
//! is unchanged, and solves `(H + τI) d = −g`. τ starts at 0 (or just above `−min diag H` when
//! a diagonal entry is not positive) and grows geometrically (`growth`, from
//! `initial·max|diag H|`) until the factorization succeeds and `d` is a descent direction with
//! `−gᵀd ≥ min_descent_cosine·‖g‖‖d‖`: indefinite and singular Hessians are handled this way.
//! A factorization whose shifted values are unchanged bit for bit is reused, not recomputed.
//! When the objective reports translation classes (an energy invariant under translations,
//! whose Hessian is singular), one dof of each class is held at zero step in the linear solve
//! ([`super::gauge`]): the step is still an exact Newton step.
//!
//! **One evaluation per iteration where the objective offers it.** After a step, the energy
//! and gradient at the new point are needed, and, unless the solve stops there, the Hessian.
//! Objectives whose Hessian evaluation computes the gradient anyway offer
//! [`Objective::value_grad_hessian`]; Newton calls it instead of `value_grad` when it expects
//! to go on from the new point: the iteration cap is not reached and the gradient norm where
//! the step was taken is above 10³ times the gradient tolerance (so the new point is not
//! expected to meet it). The values are kept with a copy of the point and used by the next
//! direction at the same point. The gradient, the values and so every iterate are the same
//! bits either way; a wrong guess costs one Hessian evaluation at the point where the solve
//! stops. The values buffer is zeroed before each evaluation unless the objective overwrites
//! every entry ([`Objective::hessian_values_overwrite`]).
//!
//! **The upper triangle.** The factorization reads the entries whose column is ≥ their row,
//! so Newton asks for those alone ([`HessianEntries::Upper`]): an objective may skip the
//! mirror images below the diagonal (mesh energies with projected element blocks add 21 of
//! a 6×6 block's 36 entries).

use super::cholesky::ShiftedCholesky;
use super::driver::{Callback, Ctx, DirectionInfo, Method, dot, norm, run, timed, timed_eval};
use super::{HessianEntries, Objective, SolveError, SolveOptions, SolveReport, Timings};
use crate::sparse::CsrPattern;

/// The diagonal-shift fallback's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShiftOptions {
    /// The first non-zero shift, relative to the largest |diagonal entry| (absolute if the
    /// diagonal is zero).
    pub initial: f64,
    /// The factor by which the shift grows after a failed attempt.
    pub growth: f64,
    /// The most factorization attempts per iteration.
    pub max_attempts: usize,
    /// The smallest accepted cosine between `d` and `−g`.
    pub min_descent_cosine: f64,
}

impl Default for ShiftOptions {
    fn default() -> Self {
        ShiftOptions {
            initial: 1e-8,
            growth: 10.0,
            max_attempts: 40,
            min_descent_cosine: 1e-10,
        }
    }
}

/// Newton's method (see the module docs).
pub struct Newton {
    pub shift: ShiftOptions,
    /// Passed to [`Objective::hessian_values`]: per-element PSD projection (projected Newton).
    pub project_psd: bool,
    chol: Option<ShiftedCholesky>,
    hess: Vec<f64>,
    symbolic_count: usize,
    /// The Hessian pattern of the last iteration and the objective's generation for it
    /// (`Objective::hessian_pattern_generation`): reused without a copy or a comparison while
    /// the generation is the same.
    pattern: Option<(CsrPattern, Option<u64>)>,
    /// The linear solve's fixed-dof mask when the objective has translation classes.
    solve_mask: Vec<bool>,
    /// The gradient with the pinned dofs' entries zeroed.
    pinned_g: Vec<f64>,
    /// Whether the next energy-and-gradient evaluation should also compute the Hessian values
    /// (module docs).
    combine_next: bool,
    /// The point at which `hess` holds the values of a combined evaluation, if any.
    combined_at: Option<Vec<f64>>,
}

/// How far above the gradient tolerance the gradient norm must be for Newton to expect that
/// the next point needs a Hessian (module docs).
const COMBINE_MARGIN: f64 = 1e3;

impl Default for Newton {
    fn default() -> Self {
        Newton::new()
    }
}

impl Newton {
    pub fn new() -> Newton {
        Newton {
            shift: ShiftOptions::default(),
            project_psd: false,
            chol: None,
            hess: Vec::new(),
            symbolic_count: 0,
            pattern: None,
            solve_mask: Vec::new(),
            pinned_g: Vec::new(),
            combine_next: false,
            combined_at: None,
        }
    }

    /// How many symbolic factorizations this solver has computed (one per distinct pattern).
    pub fn symbolic_factorizations(&self) -> usize {
        self.symbolic_count
    }

    /// How many numeric factorizations of `H + τI` this solver has computed since the
    /// Hessian pattern last changed: an iteration whose shifted Hessian values equal those of
    /// the previous factorization bit for bit (a constant Hessian) reuses it and adds none.
    pub fn numeric_factorizations(&self) -> usize {
        self.chol.as_ref().map_or(0, |c| c.numeric_factorizations())
    }

    /// Minimizes `obj` from `x` (updated in place).
    pub fn solve<O: Objective + ?Sized>(
        &mut self,
        obj: &mut O,
        x: &mut [f64],
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        run(self, obj, x, opts, callback)
    }
}

impl Newton {
    /// Whether the kept pattern and factorization are those of the objective's pattern
    /// `generation` (a known generation, unchanged since they were taken).
    fn pattern_known(&self, generation: Option<u64>) -> bool {
        generation.is_some()
            && self.chol.is_some()
            && self.pattern.as_ref().is_some_and(|(_, g)| *g == generation)
    }
}

/// Whether every entry of the upper triangle (column ≥ row) is finite: the entries the
/// factorization reads, and all that Newton asks the objective for. (One pass over all the
/// values first, which vectorizes; the rows are looked at only when it finds one.)
fn upper_finite(pattern: &CsrPattern, values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
        || (0..pattern.n).all(|r| {
        let row = pattern.row_ptr[r]..pattern.row_ptr[r + 1];
        pattern.col_idx[row.clone()]
            .iter()
            .zip(&values[row])
            .all(|(&c, v)| (c as usize) < r || v.is_finite())
    })
}

/// Sizes `values` to `nnz` entries for a Hessian evaluation: zeros, or (when the objective
/// overwrites every entry and the length is already right) the old values left in place.
fn prepare_values(values: &mut Vec<f64>, nnz: usize, overwrite: bool) {
    if !(overwrite && values.len() == nnz) {
        values.clear();
        values.resize(nnz, 0.0);
    }
}

/// Solves `(H + τI) d = −g` with the smallest τ of the shift schedule that works; returns τ.
#[allow(clippy::too_many_arguments)]
pub(crate) fn shifted_solve(
    chol: &mut ShiftedCholesky,
    hess: &[f64],
    ctx: &Ctx,
    shift: &ShiftOptions,
    g: &[f64],
    d: &mut [f64],
    t: &mut Timings,
) -> Result<f64, SolveError> {
    let (max_abs, min_diag) = timed(&mut t.assembly, || chol.diagonal_range(hess, ctx.fixed));
    let beta = if max_abs > 0.0 && max_abs.is_finite() {
        shift.initial * max_abs
    } else {
        shift.initial
    };
    let mut tau = if min_diag > 0.0 {
        0.0
    } else {
        beta - min_diag.min(0.0)
    };
    let gnorm = norm(g);
    for _ in 0..shift.max_attempts.max(1) {
        let ok = timed(&mut t.linear_solve, || chol.factor(hess, ctx.fixed, tau))
            .map_err(|e| with_iteration(e, ctx.iteration))?;
        if ok {
            for (di, gi) in d.iter_mut().zip(g) {
                *di = -gi;
            }
            timed(&mut t.linear_solve, || chol.solve(d))?;
            let dn = norm(d);
            let descent = -dot(g, d);
            if d.iter().all(|v| v.is_finite()) && descent >= shift.min_descent_cosine * gnorm * dn {
                return Ok(tau);
            }
        }
        tau = (tau * shift.growth).max(beta);
    }
    Err(SolveError::Factorization {
        iteration: ctx.iteration,
        message: format!(
            "no diagonal shift up to {tau:e} gave a positive definite matrix and a descent direction"
        ),
    })
}

fn with_iteration(e: SolveError, iteration: usize) -> SolveError {
    match e {
        SolveError::Factorization { message, .. } => {
            SolveError::Factorization { iteration, message }
        }
        e => e,
    }
}

/// Keeps a factorization matching `pattern`, rebuilding the symbolic part when it changed.
pub(crate) fn ensure_factorization<'a>(
    chol: &'a mut Option<ShiftedCholesky>,
    pattern: &CsrPattern,
    count: &mut usize,
    t: &mut Timings,
) -> Result<&'a mut ShiftedCholesky, SolveError> {
    if !chol.as_ref().is_some_and(|c| c.matches(pattern)) {
        *chol = Some(timed(&mut t.linear_solve, || {
            ShiftedCholesky::new(pattern)
        })?);
        *count += 1;
    }
    Ok(chol.as_mut().expect("set above"))
}

impl<O: Objective + ?Sized> Method<O> for Newton {
    fn energy_grad(&mut self, obj: &mut O, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        let combine = std::mem::take(&mut self.combine_next);
        // Only with the pattern already known: a new one is read (and factored symbolically)
        // by `direction`, timed as the linear solve.
        let known = self.pattern_known(obj.hessian_pattern_generation());
        if combine && known {
            let nnz = self.pattern.as_ref().expect("known").0.nnz();
            prepare_values(&mut self.hess, nnz, obj.hessian_values_overwrite());
            if let Some(f) = obj.value_grad_hessian_of(x, g, self.project_psd, HessianEntries::Upper, &mut self.hess)? {
                let mut at = self.combined_at.take().unwrap_or_default();
                at.clear();
                at.extend_from_slice(x);
                self.combined_at = Some(at);
                return Ok(f);
            }
        }
        if let Some(at) = &mut self.combined_at {
            at.clear();
        }
        obj.value_grad(x, g)
    }

    fn direction(
        &mut self,
        obj: &mut O,
        ctx: &Ctx,
        x: &[f64],
        g: &[f64],
        d: &mut [f64],
        t: &mut Timings,
    ) -> Result<DirectionInfo, SolveError> {
        let n = x.len();
        let generation = obj.hessian_pattern_generation();
        let known = self.pattern_known(generation);
        if !known {
            let p = obj
                .hessian_pattern()
                .ok_or(SolveError::Unsupported("a Hessian pattern"))?
                .clone();
            super::error::check_len("Hessian pattern size", n, p.n)?;
            ensure_factorization(&mut self.chol, &p, &mut self.symbolic_count, t)?;
            self.pattern = Some((p, generation));
        }
        let pattern = &self.pattern.as_ref().expect("set above").0;
        let chol = self.chol.as_mut().expect("set above");
        // The values of a combined evaluation at this very point (same pattern) are used as
        // they are; otherwise they are evaluated here.
        let combined = known
            && self.hess.len() == pattern.nnz()
            && self.combined_at.as_deref().is_some_and(|at| at == x);
        if let Some(at) = &mut self.combined_at {
            at.clear();
        }
        if !combined {
            prepare_values(&mut self.hess, pattern.nnz(), obj.hessian_values_overwrite());
            let project = self.project_psd;
            let hess = &mut self.hess;
            timed_eval(obj, t, |o| o.hessian_values_of(x, project, HessianEntries::Upper, hess))?;
        }
        if !upper_finite(pattern, &self.hess) {
            return Err(SolveError::NonFinite {
                iteration: ctx.iteration,
                what: "Hessian",
            });
        }
        // Translation classes: one dof of each held at zero step (`super::gauge`).
        let pinned = match obj.translation_classes() {
            Some(c) => c.solve_mask(n, ctx.fixed, &mut self.solve_mask),
            None => false,
        };
        let tau = if pinned {
            self.pinned_g.clear();
            self.pinned_g.extend(g.iter().zip(&self.solve_mask).map(|(&v, &m)| if m { 0.0 } else { v }));
            let pctx = Ctx {
                fixed: Some(&self.solve_mask),
                ..*ctx
            };
            shifted_solve(chol, &self.hess, &pctx, &self.shift, &self.pinned_g, d, t)?
        } else {
            shifted_solve(chol, &self.hess, ctx, &self.shift, g, d, t)?
        };
        self.combine_next = !ctx.last && norm(g) > COMBINE_MARGIN * ctx.gradient_stop;
        Ok(DirectionInfo {
            decrement: Some(-dot(g, d)),
            shift: tau,
            linear_iterations: 0,
        })
    }
}

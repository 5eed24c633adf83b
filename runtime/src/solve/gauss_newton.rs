//! Gauss-Newton for residual objectives `E(x) = ½‖r(x)‖²`: directions solve `JᵀJ d = −Jᵀr`,
//! either with `JᵀJ` assembled (pattern computed once per Jacobian pattern) and factored with the
//! same Cholesky and diagonal-shift fallback as [`super::Newton`] (used only when `JᵀJ` does not
//! factor), or matrix-free with Jacobi-preconditioned CG on `Jᵀ(J v)`.
//!
//! The energy used for the line search and the stopping rule is `½‖r‖²` (the objective's
//! `value` is not called); the gradient is `Jᵀr`.
//!
//! With [`GaussNewton::damping`] set (`Some(`[`LevenbergMarquardt`]`)`, as
//! [`GaussNewton::levenberg_marquardt`] does), the line search is replaced by
//! Levenberg–Marquardt damping with a gain-ratio update of μ (module
//! `levenberg_marquardt`), for either linear solver.

use super::cg::{CgOptions, inverse_jacobi, truncated_pcg};
use super::cholesky::ShiftedCholesky;
use super::driver::{Callback, Ctx, DirectionInfo, Method, dot, mask, norm, run, timed};
use super::jacobian::{JacobianPattern, NormalProduct};
use super::levenberg_marquardt::{self, LevenbergMarquardt};
use super::newton::{ShiftOptions, ensure_factorization, shifted_solve};
use super::{Objective, SolveError, SolveOptions, SolveReport, Timings};
use std::time::Instant;

/// How Gauss-Newton solves its linear systems.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GaussNewtonLinear {
    /// Assemble `JᵀJ` and factor it.
    Assembled,
    /// CG on `Jᵀ(J v)`.
    MatrixFree(CgOptions),
}

/// Gauss-Newton (see the module docs).
pub struct GaussNewton {
    pub linear: GaussNewtonLinear,
    /// The diagonal-shift fallback of the undamped, assembled solve.
    pub shift: ShiftOptions,
    /// `Some`: Levenberg–Marquardt steps instead of the line search.
    pub damping: Option<LevenbergMarquardt>,
    pub(super) jac_pattern: Option<JacobianPattern>,
    pub(super) normal: Option<NormalProduct>,
    pub(super) chol: Option<ShiftedCholesky>,
    pub(super) symbolic_count: usize,
    r: Vec<f64>,
    pub(super) jac: Vec<f64>,
    pub(super) jtj: Vec<f64>,
}

impl Default for GaussNewton {
    fn default() -> Self {
        GaussNewton::new(GaussNewtonLinear::Assembled)
    }
}

impl GaussNewton {
    pub fn new(linear: GaussNewtonLinear) -> GaussNewton {
        GaussNewton {
            linear,
            shift: ShiftOptions::default(),
            damping: None,
            jac_pattern: None,
            normal: None,
            chol: None,
            symbolic_count: 0,
            r: Vec::new(),
            jac: Vec::new(),
            jtj: Vec::new(),
        }
    }

    /// Levenberg–Marquardt: Gauss-Newton with the default [`LevenbergMarquardt`] damping.
    pub fn levenberg_marquardt(linear: GaussNewtonLinear) -> GaussNewton {
        GaussNewton {
            damping: Some(LevenbergMarquardt::default()),
            ..GaussNewton::new(linear)
        }
    }

    /// How many symbolic factorizations of `JᵀJ` this solver has computed (one per distinct
    /// Jacobian pattern; assembled solves only).
    pub fn symbolic_factorizations(&self) -> usize {
        self.symbolic_count
    }

    /// How many numeric factorizations this solver has computed since the pattern last changed.
    pub fn numeric_factorizations(&self) -> usize {
        self.chol.as_ref().map_or(0, |c| c.numeric_factorizations())
    }

    /// Minimizes `½‖r(x)‖²` from `x` (updated in place).
    pub fn solve<O: Objective + ?Sized>(
        &mut self,
        obj: &mut O,
        x: &mut [f64],
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        match self.damping {
            Some(lm) => levenberg_marquardt::run(self, lm, obj, x, opts, callback),
            None => run(self, obj, x, opts, callback),
        }
    }

    /// Refreshes the stored Jacobian pattern (and the `JᵀJ` pattern when it changed).
    fn sync_pattern<O: Objective + ?Sized>(
        &mut self,
        obj: &O,
    ) -> Result<&JacobianPattern, SolveError> {
        let p = obj
            .jacobian_pattern()
            .ok_or(SolveError::Unsupported("a residual Jacobian pattern"))?;
        if self.jac_pattern.as_ref() != Some(p) {
            super::error::check_len("Jacobian columns", obj.num_dofs(), p.cols)?;
            if p.row_ptr.len() != p.rows + 1 || p.row_ptr.last() != Some(&p.col_idx.len()) {
                return Err(SolveError::Objective("malformed Jacobian pattern".into()));
            }
            self.jac_pattern = Some(p.clone());
            self.normal = None;
        }
        Ok(self.jac_pattern.as_ref().expect("set above"))
    }
}

impl<O: Objective + ?Sized> Method<O> for GaussNewton {
    fn energy(&mut self, obj: &mut O, x: &[f64]) -> Result<f64, SolveError> {
        let m = self.sync_pattern(obj)?.rows;
        let mut r = vec![0.0; m];
        obj.residuals(x, &mut r)?;
        Ok(0.5 * dot(&r, &r))
    }

    fn energy_grad(&mut self, obj: &mut O, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        let (m, nnz) = {
            let p = self.sync_pattern(obj)?;
            (p.rows, p.nnz())
        };
        self.r.clear();
        self.r.resize(m, 0.0);
        self.jac.clear();
        self.jac.resize(nnz, 0.0);
        obj.residuals_jacobian(x, &mut self.r, &mut self.jac)?;
        let p = self.jac_pattern.as_ref().expect("synced");
        p.mul_transpose(&self.jac, &self.r, g);
        Ok(0.5 * dot(&self.r, &self.r))
    }

    fn direction(
        &mut self,
        _obj: &mut O,
        ctx: &Ctx,
        x: &[f64],
        g: &[f64],
        d: &mut [f64],
        t: &mut Timings,
    ) -> Result<DirectionInfo, SolveError> {
        let n = x.len();
        if self.jac.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::NonFinite {
                iteration: ctx.iteration,
                what: "Jacobian",
            });
        }
        let jp = self.jac_pattern.as_ref().expect("energy_grad ran first");
        match self.linear {
            GaussNewtonLinear::Assembled => {
                if self.normal.is_none() {
                    self.normal = Some(timed(&mut t.assembly, || NormalProduct::new(jp)));
                }
                let normal = self.normal.as_ref().expect("set above");
                self.jtj.resize(normal.pattern.nnz(), 0.0);
                timed(&mut t.assembly, || {
                    normal.values(jp, &self.jac, &mut self.jtj)
                });
                let chol = ensure_factorization(
                    &mut self.chol,
                    &normal.pattern,
                    &mut self.symbolic_count,
                    t,
                )?;
                let tau =
                    shifted_solve(chol, &self.jtj, ctx, &self.shift, g, d, t)?;
                Ok(DirectionInfo {
                    decrement: Some(-dot(g, d)),
                    shift: tau,
                    linear_iterations: 0,
                })
            }
            GaussNewtonLinear::MatrixFree(cg) => {
                let start = Instant::now();
                let mut diag = vec![0.0; n];
                jp.normal_diagonal(&self.jac, &mut diag);
                let inv = inverse_jacobi(&diag, ctx.fixed);
                let b: Vec<f64> = g.iter().map(|v| -v).collect();
                let gnorm = norm(g);
                let tol = cg.forcing.min(gnorm.sqrt()) * gnorm;
                let max_iters = if cg.max_iters == 0 { n } else { cg.max_iters };
                let (fixed, jac) = (ctx.fixed, &self.jac);
                let mut v = vec![0.0; n];
                let mut w = vec![0.0; jp.rows];
                let mut apply = |p: &[f64], out: &mut [f64]| {
                    v.copy_from_slice(p);
                    mask(fixed, &mut v);
                    jp.mul(jac, &v, &mut w);
                    jp.mul_transpose(jac, &w, out);
                    mask(fixed, out);
                    Ok(())
                };
                let res = truncated_pcg(&mut apply, &b, &inv, tol, max_iters, d)?;
                t.linear_solve += start.elapsed();
                Ok(DirectionInfo {
                    decrement: Some(-dot(g, d)),
                    shift: 0.0,
                    linear_iterations: res.iterations,
                })
            }
        }
    }
}

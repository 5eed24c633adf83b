//! Newton-CG: truncated, Jacobi-preconditioned CG on Hessian-vector products (matrix-free).
//!
//! The preconditioner's diagonal comes from [`Objective::hessian_diagonal`] when the objective
//! provides it, else from `diagonal_probes` Rademacher probes `diag ≈ mean(v ⊙ Hv)` (Bekas et
//! al.; 0 probes: no preconditioning). CG stops at the forcing tolerance or at the first
//! direction of non-positive curvature.

use super::cg::{CgOptions, inverse_jacobi, truncated_pcg};
use super::driver::{Callback, Ctx, DirectionInfo, Method, dot, mask, norm, run, timed_eval};
use super::{Objective, SolveError, SolveOptions, SolveReport, Timings};
use std::time::Instant;

/// Newton-CG (see the module docs).
pub struct NewtonCg {
    pub cg: CgOptions,
    pub diagonal_probes: usize,
}

impl Default for NewtonCg {
    fn default() -> Self {
        NewtonCg {
            cg: CgOptions::default(),
            diagonal_probes: 4,
        }
    }
}

impl NewtonCg {
    pub fn new() -> NewtonCg {
        NewtonCg::default()
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

/// A deterministic ±1 sequence (xorshift64).
fn rademacher(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if s & 1 == 0 { 1.0 } else { -1.0 }
        })
        .collect()
}

impl<O: Objective + ?Sized> Method<O> for NewtonCg {
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
        let mut diag = vec![0.0; n];
        let provided = timed_eval(obj, t, |o| o.hessian_diagonal(x, &mut diag))?;
        if !provided {
            diag.fill(if self.diagonal_probes == 0 { 1.0 } else { 0.0 });
            let mut hv = vec![0.0; n];
            for k in 0..self.diagonal_probes {
                let v = rademacher(k as u64 + 1, n);
                hv.fill(0.0);
                timed_eval(obj, t, |o| o.hvp(x, &v, &mut hv))?;
                for i in 0..n {
                    diag[i] += v[i] * hv[i] / self.diagonal_probes as f64;
                }
            }
        }
        let inv = inverse_jacobi(&diag, ctx.fixed);
        let b: Vec<f64> = g.iter().map(|v| -v).collect();
        let gnorm = norm(g);
        let tol = self.cg.forcing.min(gnorm.sqrt()) * gnorm;
        let max_iters = if self.cg.max_iters == 0 {
            n
        } else {
            self.cg.max_iters
        };
        let start = Instant::now();
        let mut hvp_time = Timings::default();
        let fixed = ctx.fixed;
        let mut v = vec![0.0; n];
        let mut apply = |p: &[f64], out: &mut [f64]| {
            v.copy_from_slice(p);
            mask(fixed, &mut v);
            out.fill(0.0);
            timed_eval(obj, &mut hvp_time, |o| o.hvp(x, &v, out))?;
            mask(fixed, out);
            Ok(())
        };
        let res = truncated_pcg(&mut apply, &b, &inv, tol, max_iters, d)?;
        let total = start.elapsed();
        t.derivatives += hvp_time.derivatives;
        t.assembly += hvp_time.assembly;
        t.linear_solve += total.saturating_sub(hvp_time.derivatives + hvp_time.assembly);
        Ok(DirectionInfo {
            decrement: Some(-dot(g, d)),
            shift: 0.0,
            linear_iterations: res.iterations,
        })
    }
}

//! Jacobi-preconditioned conjugate gradients, truncated at negative curvature, for the inner
//! solves of Newton-CG and matrix-free Gauss-Newton.

use super::SolveError;
use super::driver::{dot, norm};

/// Inner CG parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOptions {
    /// The most CG iterations per outer iteration (0: the number of dofs).
    pub max_iters: usize,
    /// The residual target is `min(forcing, √‖g‖)·‖g‖` (an inexact-Newton forcing sequence).
    pub forcing: f64,
}

impl Default for CgOptions {
    fn default() -> Self {
        CgOptions {
            max_iters: 0,
            forcing: 0.5,
        }
    }
}

pub(crate) struct CgResult {
    pub iterations: usize,
}

/// Approximately solves `A x = b` from `x = 0`, where `apply(v, out)` sets `out = A v`. Stops at
/// `‖r‖ ≤ tol`, after `max_iters`, or at the first direction of non-positive curvature (then `x`
/// is the last iterate, or `M⁻¹b` if that happens at once). `inv_diag` is the inverse of the
/// preconditioner's diagonal (0 on fixed dofs).
/// `apply(v, out)`: `out = A v`.
pub(crate) type Apply<'a> = dyn FnMut(&[f64], &mut [f64]) -> Result<(), SolveError> + 'a;

pub(crate) fn truncated_pcg(
    apply: &mut Apply,
    b: &[f64],
    inv_diag: &[f64],
    tol: f64,
    max_iters: usize,
    x: &mut [f64],
) -> Result<CgResult, SolveError> {
    let n = b.len();
    x.fill(0.0);
    let mut r = b.to_vec();
    let mut z: Vec<f64> = r.iter().zip(inv_diag).map(|(a, m)| a * m).collect();
    let mut p = z.clone();
    let mut ap = vec![0.0; n];
    let mut rz = dot(&r, &z);
    let mut k = 0;
    while k < max_iters {
        if norm(&r) <= tol {
            break;
        }
        apply(&p, &mut ap)?;
        let pap = dot(&p, &ap);
        k += 1;
        if pap <= 0.0 || !pap.is_finite() {
            if k == 1 {
                x.copy_from_slice(&z);
            }
            break;
        }
        let alpha = rz / pap;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        for i in 0..n {
            z[i] = r[i] * inv_diag[i];
        }
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    Ok(CgResult { iterations: k })
}

/// The inverse of a positive Jacobi preconditioner from a diagonal: `1/max(|d|, floor)` with
/// `floor = 1e-8·max|d|` (1 where the whole diagonal is 0), 0 on fixed dofs.
pub(crate) fn inverse_jacobi(diag: &[f64], fixed: Option<&[bool]>) -> Vec<f64> {
    let max = diag
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let floor = if max > 0.0 { 1e-8 * max } else { 1.0 };
    diag.iter()
        .enumerate()
        .map(|(i, &v)| {
            if fixed.is_some_and(|f| f[i]) {
                0.0
            } else if v.is_finite() {
                1.0 / v.abs().max(floor)
            } else {
                1.0 / floor
            }
        })
        .collect()
}

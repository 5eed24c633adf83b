//! The [`Objective`] trait: what a solver asks of an energy.
//!
//! Buffers handed to an objective (`grad`, Hessian `values`, `out`, residuals, Jacobian values)
//! arrive **zeroed**, so an objective may add into them (as [`crate::sparse::assemble`] does)
//! or overwrite them. The one exception is opted into: an objective whose
//! [`Objective::hessian_values_overwrite`] is `true` may get its Hessian `values` holding old
//! values, and must then overwrite every entry.
//!
//! An energy signals an infeasible point (an inverted element under an injectivity barrier, a
//! point outside a log barrier's domain) by returning `+∞` or NaN from [`Objective::value`] or
//! [`Objective::value_grad`]: the line search never accepts such a point. Errors (`Err`) end the
//! solve.

use super::{SolveError, TranslationClasses};
use super::jacobian::JacobianPattern;
use crate::sparse::CsrPattern;
use std::time::Duration;

/// A pattern generation no objective has reported yet (see
/// [`Objective::hessian_pattern_generation`]).
pub fn next_pattern_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Which entries of a Hessian evaluation the caller reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HessianEntries {
    /// Every entry of the pattern.
    #[default]
    All,
    /// The upper triangle only (entries whose column is ≥ their row), as a Cholesky
    /// factorization of the symmetric matrix reads it. The entries below the diagonal are
    /// unspecified: an objective may fill them, or leave them holding what they held.
    Upper,
}

/// An energy over `num_dofs()` unknowns and the derivatives the solvers use.
///
/// Required: the value and the gradient. Newton needs [`hessian_pattern`](Objective::hessian_pattern)
/// and [`hessian_values`](Objective::hessian_values); Newton-CG uses
/// [`hvp`](Objective::hvp) (a finite-difference default is provided) and, if available,
/// [`hessian_diagonal`](Objective::hessian_diagonal); Gauss-Newton needs
/// [`jacobian_pattern`](Objective::jacobian_pattern), [`residuals`](Objective::residuals) and
/// [`residuals_jacobian`](Objective::residuals_jacobian).
pub trait Objective {
    /// The number of unknowns.
    fn num_dofs(&self) -> usize;

    /// The energy at `x`.
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError>;

    /// The energy at `x`; its gradient is added into `grad` (zeroed on entry).
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError>;

    /// The symmetric CSR pattern (both triangles) of the Hessian. It is read once per
    /// iteration and compared with the previous one: the symbolic factorization is reused while
    /// it is unchanged.
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        None
    }

    /// A number that changes whenever [`hessian_pattern`](Objective::hessian_pattern) may
    /// have changed, so that a caller holding a copy of the pattern need not compare it entry
    /// by entry. Generations are unique across objectives: take each new one from
    /// [`next_pattern_generation`] (two objectives never report the same number, so a solver
    /// reused on another objective does not mistake its pattern). `None` (the default):
    /// unknown; callers compare the patterns.
    fn hessian_pattern_generation(&self) -> Option<u64> {
        None
    }

    /// The Hessian values at `x`, added into `values` (pattern order, zeroed on entry unless
    /// [`Objective::hessian_values_overwrite`] says every entry is overwritten). With
    /// `project_psd`, each element's block should be projected to positive semidefinite before
    /// it is added (projected Newton); objectives that cannot do so may ignore the flag.
    fn hessian_values(
        &mut self,
        x: &[f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        let _ = (x, project_psd, values);
        Err(SolveError::Unsupported("Hessian values"))
    }

    /// [`hessian_values`](Objective::hessian_values) for a caller that reads only `entries`
    /// (Newton's Cholesky reads [`HessianEntries::Upper`]): an objective may then skip the
    /// entries below the diagonal, which it would otherwise compute and add as mirror images
    /// of the upper ones. The entries read get the bits `hessian_values` would give them. The
    /// default fills every entry.
    fn hessian_values_of(
        &mut self,
        x: &[f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        let _ = entries;
        self.hessian_values(x, project_psd, values)
    }

    /// Whether [`hessian_values`](Objective::hessian_values), and
    /// [`value_grad_hessian`](Objective::value_grad_hessian) where it returns `Some`, overwrite
    /// every entry of a `values` of the pattern's length instead of adding into it. Callers may
    /// then hand them a buffer holding old values instead of zeroing it first (a memory pass
    /// over the values saved per evaluation). `false` (the default): `values` is zeroed.
    fn hessian_values_overwrite(&self) -> bool {
        false
    }

    /// The energy, its gradient and the Hessian values at `x` from one evaluation, for
    /// objectives whose Hessian evaluation computes the gradient anyway: the gradient is added
    /// into `grad` and the values into `values` as [`value_grad`](Objective::value_grad) and
    /// [`hessian_values`](Objective::hessian_values) would add them (the same bits), and the
    /// energy is returned. Newton asks for it at points where it expects to need the Hessian,
    /// which saves a separate gradient evaluation per iteration. `Ok(None)` (the default):
    /// not provided; nothing was written and the caller evaluates the two separately. An
    /// objective whose pattern may change at this evaluation (contact pairs found at `x`)
    /// returns `Ok(None)` as well.
    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        let _ = (x, grad, project_psd, values);
        Ok(None)
    }

    /// The Hessian-vector product `H(x) v`, added into `out` (zeroed on entry).
    ///
    /// The default is a central difference of gradients, `(∇E(x+εv) − ∇E(x−εv)) / 2ε` with
    /// `ε = 1e-6·(1+‖x‖)/‖v‖`: two gradient evaluations, accurate to about 1e-8 relative.
    /// [`value_grad_hessian`](Objective::value_grad_hessian) for a caller that reads only
    /// `entries` of the Hessian values (as in
    /// [`hessian_values_of`](Objective::hessian_values_of)). The default fills every entry.
    fn value_grad_hessian_of(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        let _ = entries;
        self.value_grad_hessian(x, grad, project_psd, values)
    }

    fn hvp(&mut self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), SolveError> {
        let vn = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if vn == 0.0 {
            return Ok(());
        }
        let xn = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        let eps = 1e-6 * (1.0 + xn) / vn;
        let n = x.len();
        let mut xp: Vec<f64> = x.iter().zip(v).map(|(a, b)| a + eps * b).collect();
        let mut gp = vec![0.0; n];
        self.value_grad(&xp, &mut gp)?;
        for (xi, (a, b)) in xp.iter_mut().zip(x.iter().zip(v)) {
            *xi = a - eps * b;
        }
        let mut gm = vec![0.0; n];
        self.value_grad(&xp, &mut gm)?;
        for (o, (p, m)) in out.iter_mut().zip(gp.iter().zip(&gm)) {
            *o += (p - m) / (2.0 * eps);
        }
        Ok(())
    }

    /// The Hessian's diagonal at `x` (or a cheap positive estimate of it), added into `out`.
    /// Returns `Ok(false)` when not provided (the default): Newton-CG then estimates it.
    fn hessian_diagonal(&mut self, x: &[f64], out: &mut [f64]) -> Result<bool, SolveError> {
        let _ = (x, out);
        Ok(false)
    }

    /// For residual objectives `E = ½‖r(x)‖²`: the pattern of the Jacobian `∂r/∂x`
    /// (`rows` residuals × `num_dofs()` columns).
    fn jacobian_pattern(&self) -> Option<&JacobianPattern> {
        None
    }

    /// The residuals at `x`, written into `r` (length `jacobian_pattern().rows`).
    fn residuals(&mut self, x: &[f64], r: &mut [f64]) -> Result<(), SolveError> {
        let _ = (x, r);
        Err(SolveError::Unsupported("residuals"))
    }

    /// The residuals and the Jacobian values (in `jacobian_pattern()` order) at `x`.
    fn residuals_jacobian(
        &mut self,
        x: &[f64],
        r: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SolveError> {
        let _ = (x, r, jac);
        Err(SolveError::Unsupported("a residual Jacobian"))
    }

    /// The first trial step of a line search from `x` along `d`, at most `t0`: objectives
    /// whose feasible set the line search alone cannot guard (contact, where a long step may
    /// pass through an obstacle and out again) return a smaller, safe step. The default
    /// keeps `t0`.
    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        let _ = (x, d);
        Ok(t0)
    }

    /// Time spent assembling (scattering element results into global buffers) since the last
    /// call. Solvers move it from "derivative evaluation" to "assembly" in their timings.
    fn take_assembly_time(&mut self) -> Duration {
        Duration::ZERO
    }

    /// The translations under which the energy is exactly invariant, as classes of dofs
    /// ([`TranslationClasses`]): Newton holds one dof of each class (that has no fixed dof) at
    /// zero step in its linear solve, which makes the singular system nonsingular without
    /// changing its solutions. `None` (the default): no such invariance is known.
    fn translation_classes(&self) -> Option<&TranslationClasses> {
        None
    }

    /// Recomputes what the energy depends on besides `x` (per-element state), at the start
    /// point and after every accepted step; it may also re-assign `x` (e.g. reset tangent
    /// coordinates after a retraction). Returns `true` when the energy may have changed:
    /// solvers then restart their memory (L-BFGS pairs) but keep `x`. The default does nothing.
    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        let _ = x;
        Ok(false)
    }
}

impl<T: Objective + ?Sized> Objective for &mut T {
    fn num_dofs(&self) -> usize {
        (**self).num_dofs()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        (**self).value(x)
    }
    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        (**self).value_grad(x, grad)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        (**self).hessian_pattern()
    }
    fn hessian_pattern_generation(&self) -> Option<u64> {
        (**self).hessian_pattern_generation()
    }
    fn hessian_values(
        &mut self,
        x: &[f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        (**self).hessian_values(x, project_psd, values)
    }
    fn hessian_values_of(
        &mut self,
        x: &[f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        (**self).hessian_values_of(x, project_psd, entries, values)
    }
    fn hessian_values_overwrite(&self) -> bool {
        (**self).hessian_values_overwrite()
    }
    fn value_grad_hessian_of(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        (**self).value_grad_hessian_of(x, grad, project_psd, entries, values)
    }
    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        (**self).value_grad_hessian(x, grad, project_psd, values)
    }
    fn hvp(&mut self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), SolveError> {
        (**self).hvp(x, v, out)
    }
    fn hessian_diagonal(&mut self, x: &[f64], out: &mut [f64]) -> Result<bool, SolveError> {
        (**self).hessian_diagonal(x, out)
    }
    fn jacobian_pattern(&self) -> Option<&JacobianPattern> {
        (**self).jacobian_pattern()
    }
    fn residuals(&mut self, x: &[f64], r: &mut [f64]) -> Result<(), SolveError> {
        (**self).residuals(x, r)
    }
    fn residuals_jacobian(
        &mut self,
        x: &[f64],
        r: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SolveError> {
        (**self).residuals_jacobian(x, r, jac)
    }
    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        (**self).max_step(x, d, t0)
    }
    fn take_assembly_time(&mut self) -> Duration {
        (**self).take_assembly_time()
    }
    fn translation_classes(&self) -> Option<&TranslationClasses> {
        (**self).translation_classes()
    }
    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        (**self).update(x)
    }
}

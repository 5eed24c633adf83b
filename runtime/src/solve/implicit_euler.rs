//! Implicit Euler time stepping as an incremental potential.
//!
//! One step from positions `xₙ`, velocities `vₙ` minimizes over `x`
//!
//! `E(x) = ½ (x − x̂)ᵀ M (x − x̂) + ½ h α (x − xₙ)ᵀ M (x − xₙ) + h² P(x)`, with `x̂ = xₙ + h vₙ`,
//!
//! where `M` is a lumped (diagonal) mass, `P` the potential and `α ≥ 0` a mass-proportional
//! damping rate. Its stationarity condition is the implicit Euler update
//! `M (vₙ₊₁ − vₙ)/h = −∇P(xₙ₊₁) − α M vₙ₊₁` with `vₙ₊₁ = (xₙ₊₁ − xₙ)/h`; after the solve the
//! velocities are updated that way ([`ImplicitEuler::end_step`]).
//!
//! [`ImplicitEuler`] is itself an [`Objective`] (any solver minimizes it), with the potential's
//! Hessian pattern plus the diagonal, HVPs and diagonals passed through.

use super::error::check_len;
use super::{Callback, HessianEntries, Objective, SolveError, SolveOptions, SolveReport, Solver};
use crate::sparse::CsrPattern;
use std::time::Duration;

/// The incremental potential of one implicit Euler step, and the state between steps.
pub struct ImplicitEuler<P: Objective> {
    potential: P,
    mass: Vec<f64>,
    h: f64,
    damping: f64,
    x: Vec<f64>,
    v: Vec<f64>,
    target: Vec<f64>,
    /// The potential's pattern (as last seen), the pattern with every diagonal, and where each
    /// potential entry and each diagonal lands in it.
    inner_pattern: Option<CsrPattern>,
    /// The potential's pattern generation when `inner_pattern` was taken.
    inner_generation: Option<u64>,
    /// This objective's pattern generation (a new one at each `refresh_pattern`).
    generation: u64,
    pattern: Option<CsrPattern>,
    inner_slots: Vec<usize>,
    diag_slots: Vec<usize>,
    /// Whether the potential's pattern already has every diagonal entry (the combined pattern
    /// is the same and `inner_slots` the identity): its values are then written in place.
    same_pattern: bool,
    scratch: Vec<f64>,
}

impl<P: Objective> ImplicitEuler<P> {
    /// A stepper from positions `x0` and velocities `v0` with per-dof lumped masses and time
    /// step `h > 0`.
    pub fn new(
        potential: P,
        mass: Vec<f64>,
        h: f64,
        x0: Vec<f64>,
        v0: Vec<f64>,
    ) -> Result<ImplicitEuler<P>, SolveError> {
        let n = potential.num_dofs();
        check_len("masses", n, mass.len())?;
        check_len("positions", n, x0.len())?;
        check_len("velocities", n, v0.len())?;
        // (h² scales the step's tolerances, `step_options`: it must not round to 0.)
        if !(h > 0.0 && h.is_finite() && h * h > 0.0) {
            return Err(SolveError::InvalidOption(format!(
                "time step {h}: must be a positive finite number (whose square is not 0)"
            )));
        }
        if let Some(m) = mass.iter().find(|m| !(**m >= 0.0 && m.is_finite())) {
            return Err(SolveError::InvalidOption(format!(
                "mass {m}: masses must be finite and ≥ 0"
            )));
        }
        let mut s = ImplicitEuler {
            potential,
            mass,
            h,
            damping: 0.0,
            target: x0.clone(),
            x: x0,
            v: v0,
            inner_pattern: None,
            inner_generation: None,
            generation: 0,
            pattern: None,
            inner_slots: Vec::new(),
            diag_slots: Vec::new(),
            same_pattern: false,
            scratch: Vec::new(),
        };
        s.refresh_pattern();
        s.set_target();
        Ok(s)
    }

    /// Sets the mass-proportional damping rate α (≥ 0; a negative or NaN rate is taken as 0,
    /// no damping).
    pub fn with_damping(mut self, alpha: f64) -> Self {
        self.damping = alpha.max(0.0);
        self
    }

    pub fn time_step(&self) -> f64 {
        self.h
    }
    pub fn positions(&self) -> &[f64] {
        &self.x
    }
    pub fn velocities(&self) -> &[f64] {
        &self.v
    }
    pub fn potential(&self) -> &P {
        &self.potential
    }
    /// The potential, e.g. to update its per-step state; call [`Self::refresh_pattern`] if its
    /// Hessian pattern changes.
    pub fn potential_mut(&mut self) -> &mut P {
        &mut self.potential
    }

    /// Rebuilds the combined pattern from the potential's current one.
    pub fn refresh_pattern(&mut self) {
        let n = self.mass.len();
        self.generation = super::objective::next_pattern_generation();
        self.inner_generation = self.potential.hessian_pattern_generation();
        let Some(p) = self.potential.hessian_pattern() else {
            self.inner_pattern = None;
            self.pattern = None;
            return;
        };
        let inner = p.clone();
        let combined = CsrPattern::from_entries(
            n,
            (0..n)
                .flat_map(|r| inner.row(r).iter().map(move |&c| (r as u32, c)))
                .chain((0..n as u32).map(|i| (i, i))),
        );
        self.inner_slots = (0..n)
            .flat_map(|r| inner.row(r).iter().map(move |&c| (r, c)))
            .map(|(r, c)| combined.find(r, c).expect("superset"))
            .collect();
        self.diag_slots = (0..n)
            .map(|i| combined.find(i, i as u32).expect("diagonal added"))
            .collect();
        self.same_pattern = combined == inner;
        self.inner_pattern = Some(inner);
        self.pattern = Some(combined);
    }

    fn set_target(&mut self) {
        for ((t, x), v) in self.target.iter_mut().zip(&self.x).zip(&self.v) {
            *t = x + self.h * v;
        }
    }

    /// The predicted positions `x̂ = xₙ + h vₙ`, the usual initial guess of a step.
    pub fn predicted(&self) -> &[f64] {
        &self.target
    }

    /// Accepts the minimizer `x_new` of the incremental potential: `vₙ₊₁ = (x_new − xₙ)/h`,
    /// `xₙ₊₁ = x_new`.
    pub fn end_step(&mut self, x_new: &[f64]) -> Result<(), SolveError> {
        check_len("positions", self.x.len(), x_new.len())?;
        for ((v, x), xn) in self.v.iter_mut().zip(self.x.iter_mut()).zip(x_new) {
            *v = (xn - *x) / self.h;
            *x = *xn;
        }
        self.set_target();
        Ok(())
    }

    /// One time step: minimizes the incremental potential with `solver` from a safe start
    /// ([`ImplicitEuler::start`]; fixed dofs keep their current positions), then updates
    /// positions and velocities. A solve that ends at the iteration cap or stalls still
    /// advances (the report says so).
    ///
    /// `opts`' gradient and decrement tolerances are those of the equations of motion, as in a
    /// static solve of the potential: the solve stops when the residual `M (x − x̂)/h² + ∇P(x)`
    /// (the incremental potential's gradient over h²) is within `grad_abs_tol`
    /// ([`ImplicitEuler::step_options`]). The report's gradient norm is the incremental
    /// potential's (divide by h² for the residual's).
    pub fn step(
        &mut self,
        solver: &mut Solver,
        opts: &SolveOptions,
        callback: Option<Callback>,
    ) -> Result<SolveReport, SolveError> {
        let mut x = self.start(opts.fixed.as_deref())?;
        let report = solver.solve(self, &mut x, &self.step_options(opts), callback)?;
        self.end_step(&x)?;
        Ok(report)
    }

    /// The options of a step's minimization: `opts` with the absolute gradient and decrement
    /// tolerances scaled by h², the scale of the incremental potential against the potential.
    /// Unscaled, a tolerance meant for the potential's gradient was met at the start of every
    /// step of a small h (‖h²∇P‖ is tiny): no iteration was taken and nothing moved.
    pub fn step_options(&self, opts: &SolveOptions) -> SolveOptions {
        let h2 = self.h * self.h;
        SolveOptions {
            grad_abs_tol: opts.grad_abs_tol * h2,
            decrement_tol: opts.decrement_tol * h2,
            ..opts.clone()
        }
    }

    /// The start of a step's minimization: the prediction `x̂ = xₙ + h vₙ` where it is safe,
    /// else a point on the way from `xₙ` to it.
    ///
    /// The prediction is the usual initial guess, but the path to it is not checked by
    /// anything: a fast vertex can be predicted inside a barrier (`+∞`, and the solve could
    /// not start) or, worse, through a thin obstacle and out on its other side (finite again,
    /// and the solve would converge there, through the contact). So the move `xₙ → x̂` is
    /// capped like a line-search step: by the potential's [`Objective::max_step`] (contact
    /// pairs: continuous collision detection along the move), then halved (at most 20 times,
    /// then `xₙ` itself) while the incremental potential there is not finite. `xₙ`, the last
    /// accepted positions, is always a valid start. Fixed dofs stay at `xₙ`.
    pub fn start(&mut self, fixed: Option<&[bool]>) -> Result<Vec<f64>, SolveError> {
        let n = self.x.len();
        let mut d: Vec<f64> = self.target.iter().zip(&self.x).map(|(t, x)| t - x).collect();
        if let Some(f) = fixed {
            check_len("fixed-dof mask", n, f.len())?;
            for (di, &fi) in d.iter_mut().zip(f) {
                if fi {
                    *di = 0.0;
                }
            }
        }
        let xn = self.x.clone();
        // The whole move is the prediction itself (bit for bit), fixed dofs at xₙ.
        let predicted: Vec<f64> = self.target.iter().zip(&xn).zip(&d).map(|((&p, &x), &di)| if di == 0.0 { x } else { p }).collect();
        let at = |t: f64| -> Vec<f64> {
            if t == 1.0 {
                predicted.clone()
            } else {
                xn.iter().zip(&d).map(|(x, di)| x + t * di).collect()
            }
        };
        if d.iter().all(|&v| v == 0.0) {
            return Ok(xn.clone());
        }
        let mut t = self.max_step(&xn, &d, 1.0)?.clamp(0.0, 1.0);
        for _ in 0..20 {
            let x = at(t);
            if self.value(&x)?.is_finite() {
                return Ok(x);
            }
            t *= 0.5;
        }
        Ok(xn.clone())
    }

    /// Whether the potential's pattern is still the one taken by `refresh_pattern`: by its
    /// generation when it reports one, else entry by entry.
    fn potential_pattern_unchanged(&self) -> bool {
        match (self.potential.hessian_pattern_generation(), self.inner_generation) {
            (Some(now), Some(then)) if now == then => true,
            _ => self.potential.hessian_pattern() == self.inner_pattern.as_ref(),
        }
    }

    fn inertia(&self, x: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let hd = self.h * self.damping;
        let mut e = 0.0;
        let mut g = grad;
        for i in 0..x.len() {
            let (a, b) = (x[i] - self.target[i], x[i] - self.x[i]);
            e += 0.5 * self.mass[i] * (a * a + hd * b * b);
            if let Some(g) = g.as_deref_mut() {
                g[i] += self.mass[i] * (a + hd * b);
            }
        }
        e
    }
}

impl<P: Objective> Objective for ImplicitEuler<P> {
    fn num_dofs(&self) -> usize {
        self.mass.len()
    }

    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let p = self.potential.value(x)?;
        Ok(self.inertia(x, None) + self.h * self.h * p)
    }

    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        let p = self.potential.value_grad(x, grad)?;
        // A potential whose pattern follows x (contact pairs) changes it here, before the
        // solver reads the combined pattern at this point.
        if !self.potential_pattern_unchanged() {
            self.refresh_pattern();
        }
        let h2 = self.h * self.h;
        for g in grad.iter_mut() {
            *g *= h2;
        }
        Ok(self.inertia(x, Some(grad)) + h2 * p)
    }

    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        self.pattern.as_ref()
    }

    fn hessian_pattern_generation(&self) -> Option<u64> {
        Some(self.generation)
    }

    /// With the potential's pattern as the combined one, its values are written straight
    /// into `values`, scaled, and the masses added: every entry is overwritten when the
    /// potential overwrites.
    fn hessian_values_overwrite(&self) -> bool {
        self.same_pattern && self.potential.hessian_values_overwrite()
    }

    fn hessian_values(
        &mut self,
        x: &[f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        self.hessian_values_of(x, project_psd, HessianEntries::All, values)
    }

    /// The potential is asked for the same `entries` (its pattern and the combined one number
    /// the dofs alike, so an upper entry of one is an upper entry of the other); the mass
    /// terms sit on the diagonal.
    fn hessian_values_of(
        &mut self,
        x: &[f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        let (Some(inner), Some(_)) = (&self.inner_pattern, &self.pattern) else {
            return Err(SolveError::Unsupported("a Hessian pattern"));
        };
        if !self.potential_pattern_unchanged() {
            return Err(SolveError::Objective(
                "the potential's Hessian pattern changed; call refresh_pattern".into(),
            ));
        }
        let h2 = self.h * self.h;
        if self.same_pattern {
            // The potential writes straight into `values` (zeroed on entry, or overwritten
            // entry by entry when it says so: `hessian_values_overwrite`).
            self.potential.hessian_values_of(x, project_psd, entries, values)?;
            for v in values.iter_mut() {
                *v *= h2;
            }
        } else {
            self.scratch.clear();
            self.scratch.resize(inner.nnz(), 0.0);
            self.potential
                .hessian_values_of(x, project_psd, entries, &mut self.scratch)?;
            for (&s, &v) in self.inner_slots.iter().zip(&self.scratch) {
                values[s] += h2 * v;
            }
        }
        let hd = self.h * self.damping;
        for (&s, &m) in self.diag_slots.iter().zip(&self.mass) {
            values[s] += m * (1.0 + hd);
        }
        Ok(())
    }

    fn value_grad_hessian(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        self.value_grad_hessian_of(x, grad, project_psd, HessianEntries::All, values)
    }

    fn value_grad_hessian_of(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<Option<f64>, SolveError> {
        // Only where the potential writes straight into `values` and its pattern is the one
        // the combined pattern was built from (a potential with a moving pattern declines).
        if !self.same_pattern || self.inner_pattern.is_none() || !self.potential_pattern_unchanged() {
            return Ok(None);
        }
        let Some(p) = self.potential.value_grad_hessian_of(x, grad, project_psd, entries, values)? else {
            return Ok(None);
        };
        if !self.potential_pattern_unchanged() {
            return Err(SolveError::Objective(
                "the potential's Hessian pattern changed during a combined evaluation".into(),
            ));
        }
        let h2 = self.h * self.h;
        for g in grad.iter_mut() {
            *g *= h2;
        }
        for v in values.iter_mut() {
            *v *= h2;
        }
        let hd = self.h * self.damping;
        for (&s, &m) in self.diag_slots.iter().zip(&self.mass) {
            values[s] += m * (1.0 + hd);
        }
        Ok(Some(self.inertia(x, Some(grad)) + h2 * p))
    }

    fn hvp(&mut self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), SolveError> {
        self.potential.hvp(x, v, out)?;
        let h2 = self.h * self.h;
        let hd = self.h * self.damping;
        for ((o, m), vi) in out.iter_mut().zip(&self.mass).zip(v) {
            *o = h2 * *o + m * (1.0 + hd) * vi;
        }
        Ok(())
    }

    fn hessian_diagonal(&mut self, x: &[f64], out: &mut [f64]) -> Result<bool, SolveError> {
        if !self.potential.hessian_diagonal(x, out)? {
            return Ok(false);
        }
        let h2 = self.h * self.h;
        let hd = self.h * self.damping;
        for (o, m) in out.iter_mut().zip(&self.mass) {
            *o = h2 * *o + m * (1.0 + hd);
        }
        Ok(true)
    }

    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        self.potential.max_step(x, d, t0)
    }

    fn take_assembly_time(&mut self) -> Duration {
        self.potential.take_assembly_time()
    }

    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        self.potential.update(x)
    }
}

//! [`MeshObjective`]: a bound mesh energy ([`MeshEnergy`]) as a solver
//! [`Objective`], so every solver of `mad_runtime::solve` minimizes it.
//!
//! - Value and gradient: the objective of the energy terms plus, when the
//!   program has `residual` terms, `½‖r(x)‖²` (gradient `Jᵀr`).
//! - Hessian: the energy terms' CSR pattern and values, each element block
//!   optionally projected to positive semi-definite; its diagonal comes from the
//!   same assembly. A program with residual terms has no Hessian here (use
//!   `gauss-newton`, `lbfgs` or `gd`).
//! - HVP: the matrix-free kernel of the energy terms (plus `Jᵀ(J v)` for
//!   residuals).
//! - Residuals and Jacobian for Gauss-Newton: the Jacobian pattern is taken once
//!   at construction (it depends only on the mesh) and checked on every call.
//!
//! - Updates: [`Objective::update`] runs the program's `update` items
//!   ([`MeshEnergy::update`]), so every solver recomputes `state` fields after each
//!   accepted iteration.
//! - Pairs: with pair terms, the Hessian pattern is the static pattern merged
//!   with the live pairs' entries (it changes as pairs come and go; solvers
//!   refactor symbolically then). With a `broadphase` declaration the pair list
//!   is refreshed at every evaluation point and each line search's first trial
//!   step is capped ([`super::contact`]).
//!
//! Errors of the energy (a run-time error in a kernel, bad data) become
//! [`SolveError::Objective`].

use super::contact::Contact;
use crate::energy::{EnergyError, MeshEnergy};
use mad_runtime::solve::{
    HessianEntries, JacobianPattern, Objective, SolveError, TranslationClasses, next_pattern_generation,
};
use mad_runtime::sparse::CsrPattern;


/// The residuals and the Jacobian values of one evaluation.
type ResidualParts = (Vec<f64>, Vec<f64>);
/// A [`MeshEnergy`] seen by the solvers.
pub struct MeshObjective<'p> {
    energy: MeshEnergy<'p>,
    has_energies: bool,
    jac_pattern: Option<JacobianPattern>,
    grad: Vec<f64>,
    hess: Vec<f64>,
    contact: Option<Contact>,
    /// With pair terms: the merged Hessian pattern, rebuilt when the pairs change
    /// (`None` until needed or after `energy_mut`).
    merged: Option<CsrPattern>,
    /// The translations the energy is invariant under ([`super::gauge`]).
    classes: Option<TranslationClasses>,
    /// Bumped whenever the Hessian pattern may change (`Objective::hessian_pattern_generation`).
    generation: u64,
}

fn err(e: EnergyError) -> SolveError {
    match e {
        // `SolveError::Objective` says "objective: " itself.
        EnergyError::Objective(m) => SolveError::Objective(m),
        e => SolveError::Objective(e.to_string()),
    }
}

impl<'p> MeshObjective<'p> {
    /// Wraps a bound energy. With residual terms, the Jacobian pattern is computed
    /// here at `x0` (any point of the right length: the pattern depends only on
    /// the mesh).
    pub fn new(energy: MeshEnergy<'p>, x0: &[f64]) -> Result<MeshObjective<'p>, EnergyError> {
        let has_energies = !energy.prog.energies.is_empty();
        let jac_pattern = if energy.prog.residuals.is_empty() {
            None
        } else {
            let (_, j) = energy.jacobian(x0)?;
            Some(JacobianPattern {
                rows: j.nrows,
                cols: j.ncols,
                row_ptr: j.row_ptr,
                col_idx: j.col_idx,
            })
        };
        let n = energy.ndofs();
        let nnz = energy.nnz();
        let contact = Contact::from_program(&energy)?;
        let mut o = MeshObjective {
            energy,
            has_energies,
            jac_pattern,
            grad: vec![0.0; n],
            hess: vec![0.0; nnz],
            contact,
            merged: None,
            classes: None,
            generation: next_pattern_generation(),
        };
        o.classes = super::gauge::translation_classes(&o.energy);
        o.sync(x0).map_err(|e| EnergyError::Host(e.to_string()))?;
        Ok(o)
    }

    /// The broad phase of the program's `broadphase` declaration, if any.
    pub fn contact(&self) -> Option<&Contact> {
        self.contact.as_ref()
    }

    /// Brings the pair list (broad phase) and the merged pattern up to date at `x`.
    fn sync(&mut self, x: &[f64]) -> Result<(), SolveError> {
        if x.len() != self.energy.ndofs() {
            return Err(SolveError::Dimension {
                what: "x",
                expected: self.energy.ndofs(),
                found: x.len(),
            });
        }
        let mut changed = false;
        if let Some(c) = &mut self.contact {
            changed = c.refresh(&mut self.energy, x).map_err(err)?;
        }
        if self.energy.pair_arity() > 0 && (changed || self.merged.is_none()) {
            self.merged = Some(self.energy.hessian_csr_pattern());
            self.generation = next_pattern_generation();
        }
        Ok(())
    }

    /// The bound energy.
    pub fn energy(&self) -> &MeshEnergy<'p> {
        &self.energy
    }

    /// The bound energy, e.g. to change a param or the pairs between solves.
    pub fn energy_mut(&mut self) -> &mut MeshEnergy<'p> {
        self.merged = None;
        self.generation = next_pattern_generation();
        if let Some(c) = &mut self.contact {
            c.invalidate();
        }
        &mut self.energy
    }

    /// Gives the bound energy back.
    pub fn into_inner(self) -> MeshEnergy<'p> {
        self.energy
    }

    /// The residuals and Jacobian values at `x`, checking the pattern.
    fn residual_parts(&self, x: &[f64]) -> Result<Option<ResidualParts>, SolveError> {
        let Some(p) = &self.jac_pattern else {
            return Ok(None);
        };
        let (r, j) = self.energy.jacobian(x).map_err(err)?;
        if j.row_ptr != p.row_ptr || j.col_idx != p.col_idx {
            return Err(SolveError::Objective(
                "the residual Jacobian's pattern changed".into(),
            ));
        }
        Ok(Some((r, j.values)))
    }
}

impl MeshEnergy<'_> {
    /// The global indices of every unknown at vertex `i` (all vertex dof fields),
    /// in the vertex-major layout of the module docs.
    pub fn vertex_dofs(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for (f, d) in self.prog.decls.dofs.iter().enumerate() {
            if d.stencil != crate::front::StencilKind::Vertex {
                continue;
            }
            let dim = crate::energy::kernels::sizes::type_slots(&d.ty).unwrap_or(1);
            out.extend((0..dim).map(|c| self.dof_offsets[f] + dim * i + c));
        }
        out
    }

    /// The vertex positions held by `x`: the first vertex dof field's first (up
    /// to 3) components per vertex, zero-padded; `None` when the program has no
    /// vertex dofs.
    pub fn positions_of(&self, x: &[f64]) -> Option<Vec<[f64; 3]>> {
        let f = self
            .prog
            .decls
            .dofs
            .iter()
            .position(|d| d.stencil == crate::front::StencilKind::Vertex)?;
        let dim = crate::energy::kernels::sizes::type_slots(&self.prog.decls.dofs[f].ty).unwrap_or(1);
        let off = self.dof_offsets[f];
        Some(
            (0..self.num_vertices())
                .map(|i| {
                    let mut p = [0.0; 3];
                    for (c, pc) in p.iter_mut().enumerate().take(dim.min(3)) {
                        *pc = x[off + dim * i + c];
                    }
                    p
                })
                .collect(),
        )
    }

    /// The mesh the energy is bound to.
    pub fn mesh(&self) -> &mad_runtime::mesh::Mesh {
        &self.mesh
    }
}

impl MeshObjective<'_> {
    /// `Err` when the program has `energy` terms besides its residuals (see
    /// [`Objective::residuals`] for this objective).
    fn residuals_alone(&self) -> Result<(), SolveError> {
        if self.has_energies && self.jac_pattern.is_some() {
            return Err(SolveError::Unsupported(
                "residuals alone (the program has `energy` terms too, which a residual solver would leave out)",
            ));
        }
        Ok(())
    }
}

impl Objective for MeshObjective<'_> {
    fn num_dofs(&self) -> usize {
        self.energy.ndofs()
    }

    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        self.sync(x)?;
        let mut e = if self.has_energies {
            self.energy.energy(x).map_err(err)?
        } else {
            0.0
        };
        if let Some((r, _)) = self.residual_parts(x)? {
            e += 0.5 * r.iter().map(|v| v * v).sum::<f64>();
        }
        Ok(e)
    }

    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, SolveError> {
        self.sync(x)?;
        let mut e = 0.0;
        if self.has_energies {
            e = self.energy.gradient(x, &mut self.grad).map_err(err)?;
            for (g, s) in grad.iter_mut().zip(&self.grad) {
                *g += s;
            }
        }
        if let Some((r, jv)) = self.residual_parts(x)? {
            e += 0.5 * r.iter().map(|v| v * v).sum::<f64>();
            let p = self
                .jac_pattern
                .as_ref()
                .expect("residual parts imply a pattern");
            p.mul_transpose(&jv, &r, &mut self.grad);
            for (g, s) in grad.iter_mut().zip(&self.grad) {
                *g += s;
            }
        }
        Ok(e)
    }

    fn translation_classes(&self) -> Option<&TranslationClasses> {
        self.classes.as_ref()
    }

    fn hessian_pattern_generation(&self) -> Option<u64> {
        Some(self.generation)
    }

    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        match (&self.jac_pattern, &self.merged) {
            (Some(_), _) => None,
            (None, Some(m)) if self.energy.pair_arity() > 0 => Some(m),
            _ => Some(self.energy.pattern()),
        }
    }

    fn hessian_values(
        &mut self,
        x: &[f64],
        project_psd: bool,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        self.hessian_values_of(x, project_psd, HessianEntries::All, values)
    }

    /// Straight into `values` (the plain case of `hessian_values_overwrite`), the projected
    /// element blocks of [`HessianEntries::Upper`] add only their upper triangle; the other
    /// cases fill every entry.
    fn hessian_values_of(
        &mut self,
        x: &[f64],
        project_psd: bool,
        entries: HessianEntries,
        values: &mut [f64],
    ) -> Result<(), SolveError> {
        if self.jac_pattern.is_some() {
            return Err(SolveError::Unsupported(
                "Hessian values (the program has residual terms)",
            ));
        }
        self.sync(x)?;
        if self.energy.pair_arity() == 0 && values.len() == self.energy.nnz() {
            // The evaluation overwrites every value (`hessian_values_overwrite`): straight in.
            self.energy
                .hessian_of(x, &mut self.grad, values, project_psd, entries)
                .map_err(err)?;
            return Ok(());
        }
        self.hess.resize(self.energy.nnz(), 0.0);
        self.energy
            .hessian(x, &mut self.grad, &mut self.hess, project_psd)
            .map_err(err)?;
        if self.energy.pair_arity() > 0 {
            let (p, merged) = self.energy.hessian_csr(&self.hess).map_err(err)?;
            if Some(&p) != self.merged.as_ref() || values.len() != merged.len() {
                return Err(SolveError::Objective(
                    "the Hessian pattern changed without a new evaluation".into(),
                ));
            }
            for (v, h) in values.iter_mut().zip(&merged) {
                *v += h;
            }
            return Ok(());
        }
        for (v, h) in values.iter_mut().zip(&self.hess) {
            *v += h;
        }
        Ok(())
    }

    /// The plain case writes straight into `values`: energies without residual terms and
    /// without pairs (whose values are merged into a moving pattern).
    fn hessian_values_overwrite(&self) -> bool {
        self.jac_pattern.is_none() && self.energy.pair_arity() == 0
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
        // The plain case only: energies without residual terms or pairs (whose pattern may
        // move), the values in the program's own pattern.
        if self.jac_pattern.is_some()
            || !self.has_energies
            || self.energy.pair_arity() > 0
            || values.len() != self.energy.nnz()
        {
            return Ok(None);
        }
        self.sync(x)?;
        // The Hessian evaluation fills the gradient as the gradient evaluation does (same
        // bits), and overwrites the zeroed values.
        let e = self
            .energy
            .hessian_of(x, &mut self.grad, values, project_psd, entries)
            .map_err(err)?;
        for (g, s) in grad.iter_mut().zip(&self.grad) {
            *g += s;
        }
        Ok(Some(e))
    }

    fn hvp(&mut self, x: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), SolveError> {
        self.sync(x)?;
        if self.has_energies {
            self.energy.hvp(x, v, &mut self.grad).map_err(err)?;
            for (o, s) in out.iter_mut().zip(&self.grad) {
                *o += s;
            }
        }
        if let Some((_, jv)) = self.residual_parts(x)? {
            let p = self
                .jac_pattern
                .as_ref()
                .expect("residual parts imply a pattern");
            let mut jx = vec![0.0; p.rows];
            p.mul(&jv, v, &mut jx);
            p.mul_transpose(&jv, &jx, &mut self.grad);
            for (o, s) in out.iter_mut().zip(&self.grad) {
                *o += s;
            }
        }
        Ok(())
    }

    fn hessian_diagonal(&mut self, x: &[f64], out: &mut [f64]) -> Result<bool, SolveError> {
        if self.jac_pattern.is_some() || !self.has_energies {
            return Ok(false);
        }
        self.sync(x)?;
        self.hess.resize(self.energy.nnz(), 0.0);
        self.energy
            .hessian(x, &mut self.grad, &mut self.hess, true)
            .map_err(err)?;
        let (p, vals) = self.energy.hessian_csr(&self.hess).map_err(err)?;
        for (i, o) in out.iter_mut().enumerate() {
            if let Some(k) = p.find(i, i as u32) {
                *o += vals[k];
            }
        }
        Ok(true)
    }

    fn max_step(&mut self, x: &[f64], d: &[f64], t0: f64) -> Result<f64, SolveError> {
        match &self.contact {
            Some(c) => c.max_step(&self.energy, x, d, t0).map_err(err),
            None => Ok(t0),
        }
    }

    fn jacobian_pattern(&self) -> Option<&JacobianPattern> {
        self.jac_pattern.as_ref()
    }

    fn update(&mut self, x: &mut [f64]) -> Result<bool, SolveError> {
        self.energy.update(x).map_err(err)
    }

    /// Gauss-Newton and Levenberg–Marquardt minimize `½‖r‖²` alone: with `energy` terms
    /// besides the residuals the objective is not of that form, and they are refused
    /// (`SolveError::Unsupported`) rather than left out of the minimization.
    fn residuals(&mut self, x: &[f64], r: &mut [f64]) -> Result<(), SolveError> {
        self.residuals_alone()?;
        let (res, _) = self.residual_parts(x)?.ok_or(SolveError::Unsupported(
            "residuals (the program has no residual terms)",
        ))?;
        r.copy_from_slice(&res);
        Ok(())
    }

    fn residuals_jacobian(
        &mut self,
        x: &[f64],
        r: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SolveError> {
        self.residuals_alone()?;
        let (res, jv) = self.residual_parts(x)?.ok_or(SolveError::Unsupported(
            "residuals (the program has no residual terms)",
        ))?;
        r.copy_from_slice(&res);
        jac.copy_from_slice(&jv);
        Ok(())
    }
}

//! The batched element loops to compile for a program's energy terms: per term on a
//! fixed stencil (`vertex`/`edge`/`face`/`diamond`) whose kernels are plain scalar code,
//! one [`BatchSpec`] per workload ([`BatchKind`]: energy, energy + gradient, energy +
//! gradient + Hessian values, HVP, Hessian blocks), picked when the program is compiled.
//! The loops run at run time, in `energy::eval::batched`.

use super::sizes::type_slots;
use super::{Source, TermKernels};
use crate::codegen::element_loop::batchable;
use crate::codegen::element_loop::{BatchInput, BatchKind, BatchSpec};
use crate::front::{MeshDecls, StencilKind};
use crate::ir::Module;

/// The batched loops of one energy term: an index into the compiled specs per
/// [`BatchKind`] (`Value`, `Grad`, `Hess`, `Hvp`, `HessBlock`), where one exists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermBatches {
    pub kinds: [Option<usize>; 5],
    /// The `Hess` loop over compact slots, and its runs ([`BatchSpec::runs`]).
    pub hess_compact: Option<(usize, Vec<usize>)>,
}

fn slot(kind: BatchKind) -> usize {
    match kind {
        BatchKind::Value => 0,
        BatchKind::Grad => 1,
        BatchKind::Hess => 2,
        BatchKind::Hvp => 3,
        BatchKind::HessBlock => 4,
    }
}

impl TermBatches {
    pub fn get(&self, kind: BatchKind) -> Option<usize> {
        self.kinds[slot(kind)]
    }
}

/// The batched loops to compile for `energies` (one [`TermBatches`] per term).
pub fn specs(
    module: &Module,
    energies: &[TermKernels],
    decls: &MeshDecls,
) -> (Vec<BatchSpec>, Vec<TermBatches>) {
    let mut out = Vec::new();
    let mut per_term = Vec::new();
    for (i, t) in energies.iter().enumerate() {
        let mut tb = TermBatches::default();
        let fixed = matches!(
            decls.energies.get(i).map(|d| d.stencil),
            Some(
                StencilKind::Vertex | StencilKind::Edge | StencilKind::Face | StencilKind::Diamond
            )
        );
        if fixed && t.ring.is_none() && t.k > 0 {
            let inputs: Vec<BatchInput> = t
                .others
                .iter()
                .map(|s| match *s {
                    Source::Data {
                        field,
                        vertex,
                        slots,
                    } => BatchInput::Data {
                        array: field,
                        vertex,
                        slots,
                    },
                    Source::Param { param, .. } => BatchInput::Const { at: param },
                    Source::Dof { .. } => BatchInput::Const { at: usize::MAX },
                })
                .collect();
            let ok_inputs = inputs
                .iter()
                .all(|i| !matches!(i, BatchInput::Const { at: usize::MAX }));
            for (kind, f) in [
                (BatchKind::Value, Some(t.local)),
                (BatchKind::Grad, t.grad),
                (BatchKind::Hess, t.hess),
                (BatchKind::Hvp, t.hvp),
                (BatchKind::HessBlock, t.hess),
            ] {
                let Some(f) = f else { continue };
                let Some(func) = module.functions.get(f) else {
                    continue;
                };
                if ok_inputs && batchable(func, kind, t.k, inputs.len()) {
                    tb.kinds[slot(kind)] = Some(out.len());
                    out.push(BatchSpec {
                        kernel: f,
                        kind,
                        k: t.k,
                        nverts: t.nverts,
                        inputs: inputs.clone(),
                        runs: Vec::new(),
                    });
                    let runs = dof_runs(t, decls);
                    if kind == BatchKind::Hess && runs.len() < t.k {
                        tb.hess_compact = Some((out.len(), runs.clone()));
                        out.push(BatchSpec {
                            kernel: f,
                            kind,
                            k: t.k,
                            nverts: t.nverts,
                            inputs: inputs.clone(),
                            runs,
                        });
                    }
                }
            }
        }
        per_term.push(tb);
    }
    (out, per_term)
}

/// The runs of consecutive global dof indices in a term's local dofs: per dof
/// field (declaration order), per dof vertex, the field's components.
fn dof_runs(t: &TermKernels, decls: &MeshDecls) -> Vec<usize> {
    let mut runs = Vec::new();
    for &f in &t.dof_fields {
        let dim = decls
            .dofs
            .get(f)
            .and_then(|d| type_slots(&d.ty))
            .unwrap_or(1);
        runs.extend(std::iter::repeat_n(dim, t.dof_verts.len()));
    }
    if runs.iter().sum::<usize>() == t.k {
        runs
    } else {
        vec![1; t.k]
    }
}

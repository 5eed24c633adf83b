//! `pair` terms: energies over vertex tuples the host supplies at run time
//! (contact pairs), with the Hessian pattern updated incrementally.
//!
//! A pair term reads `e.v0 … e.vK`; its **arity** is one more than the highest
//! vertex it reads (a term reading `e.v0` and `e.v1` is a vertex–vertex pair, one
//! reading `e.v0 … e.v3` a vertex–face or edge–edge pair; the language does not
//! tell those apart, the term's body does). All pair terms of a program share
//! one pair list whose tuples have the largest arity among them; a term reads
//! the first vertices of each tuple.
//!
//! Pairs live in a [`PairPattern`] over the static (mesh) pattern: adding or
//! removing a pair costs O(k²) hash operations, whatever the mesh size. Hessian
//! values then have [`MeshEnergy::nnz`] = static entries followed by overlay
//! slots; [`MeshEnergy::hessian_csr`] gives them as one CSR matrix. Pair terms
//! are evaluated serially in pair-id order (bit-identical on every thread count).

use mad_runtime::sparse::{Field, PairId, PairPattern};

use super::bind::MeshEnergy;
use crate::energy::kernels::sizes::type_slots;
use crate::energy::kernels::{Source, TermKernels};
use crate::energy::{EnergyError, EnergyProgram};
use crate::front::StencilKind;

/// The pair list of a bound program.
pub(crate) struct PairState {
    pub pattern: PairPattern,
    /// The pair terms (indices into the energies) with, per term-local dof, its
    /// position among the pair's local dofs.
    pub terms: Vec<(usize, Vec<usize>)>,
    pub arity: usize,
}

fn sparse_err(e: mad_runtime::sparse::SparseError) -> EnergyError {
    EnergyError::Host(e.to_string())
}

impl PairState {
    /// The pair state of `prog` over the static pattern, or `None` without pair terms.
    pub(crate) fn new(
        prog: &EnergyProgram,
        base: &mad_runtime::sparse::CsrPattern,
        dof_offsets: &[usize],
        nv: usize,
    ) -> Result<Option<PairState>, EnergyError> {
        let pair_terms: Vec<usize> = (0..prog.energies.len())
            .filter(|&i| prog.decls.energies[i].stencil == StencilKind::Pair)
            .collect();
        if let Some(d) = prog
            .decls
            .residuals
            .iter()
            .find(|d| d.stencil == StencilKind::Pair)
        {
            return Err(EnergyError::Unsupported {
                term: d.name.clone(),
                what: "residuals on pairs".into(),
            });
        }
        if pair_terms.is_empty() {
            return Ok(None);
        }
        let dim = |f: usize| type_slots(&prog.decls.dofs[f].ty).unwrap_or(1);
        let arity = pair_terms
            .iter()
            .map(|&i| prog.energies[i].nverts)
            .max()
            .unwrap_or(1);
        let mut fields: Vec<usize> = pair_terms
            .iter()
            .flat_map(|&i| prog.energies[i].dof_fields.clone())
            .collect();
        fields.sort_unstable();
        fields.dedup();
        // Pair-local position of (field, vertex, component).
        let pos = |f: usize, v: usize, c: usize| -> usize {
            let mut off = 0;
            for &g in &fields {
                if g == f {
                    break;
                }
                off += arity * dim(g);
            }
            off + v * dim(f) + c
        };
        let mut terms = Vec::new();
        for &i in &pair_terms {
            let t: &TermKernels = &prog.energies[i];
            if t.others
                .iter()
                .any(|s| matches!(s, Source::Data { vertex: None, .. }))
            {
                return Err(EnergyError::Unsupported {
                    term: t.name.clone(),
                    what: "data on pairs".into(),
                });
            }
            let mut map = Vec::with_capacity(t.k);
            for &f in &t.dof_fields {
                for v in 0..t.nverts {
                    for c in 0..dim(f) {
                        map.push(pos(f, v, c));
                    }
                }
            }
            terms.push((i, map));
        }
        let pfields = fields
            .iter()
            .map(|&f| Field {
                offset: dof_offsets[f],
                dim: dim(f),
            })
            .collect();
        let pattern = PairPattern::new(base.clone(), pfields, nv, arity).map_err(sparse_err)?;
        Ok(Some(PairState {
            pattern,
            terms,
            arity,
        }))
    }
}

impl MeshEnergy<'_> {
    /// The number of vertices per pair (0 without pair terms).
    pub fn pair_arity(&self) -> usize {
        self.pairs.as_ref().map_or(0, |p| p.arity)
    }

    fn pair_state(&mut self) -> Result<&mut PairState, EnergyError> {
        self.pairs
            .as_mut()
            .ok_or_else(|| EnergyError::Host("the program has no pair terms".into()))
    }

    /// Adds a pair of [`MeshEnergy::pair_arity`] vertex ids; the Hessian pattern
    /// gains its entries incrementally.
    pub fn add_pair(&mut self, vertices: &[u32]) -> Result<PairId, EnergyError> {
        self.pair_state()?
            .pattern
            .add_pair(vertices)
            .map_err(sparse_err)
    }

    /// Removes a live pair (entries only it needed leave the pattern).
    pub fn remove_pair(&mut self, id: PairId) -> Result<(), EnergyError> {
        self.pair_state()?
            .pattern
            .remove_pair(id)
            .map_err(sparse_err)
    }

    /// The Hessian's pattern with the live pairs' entries (the pattern of
    /// [`MeshEnergy::hessian_csr`]).
    pub fn hessian_csr_pattern(&self) -> mad_runtime::sparse::CsrPattern {
        match &self.pairs {
            Some(p) => p.pattern.to_csr(),
            None => self.pattern().clone(),
        }
    }

    /// The live pairs: (id, vertices), in id order.
    pub fn pairs(&self) -> Vec<(PairId, Vec<u32>)> {
        let Some(p) = &self.pairs else {
            return Vec::new();
        };
        p.pattern
            .pair_ids()
            .into_iter()
            .filter_map(|id| p.pattern.pair(id).map(|(v, _, _)| (id, v.to_vec())))
            .collect()
    }

    /// Replaces the pair list by `pairs` (flat, [`MeshEnergy::pair_arity`] ids
    /// per pair): pairs already present are kept, the others removed or added
    /// (incremental pattern updates). Checked before anything changes.
    pub fn set_pairs(&mut self, pairs: &[u32]) -> Result<(), EnergyError> {
        let nv = self.num_vertices();
        let live = self.pairs();
        let st = self.pair_state()?;
        let a = st.arity;
        if !pairs.len().is_multiple_of(a) {
            return Err(EnergyError::Host(format!(
                "pairs: {} ids is not a multiple of the arity {a}",
                pairs.len()
            )));
        }
        if let Some(v) = pairs.iter().find(|&&v| v as usize >= nv) {
            return Err(EnergyError::Host(format!(
                "pairs: vertex {v} is out of range ({nv} vertices)"
            )));
        }
        let mut want: std::collections::HashMap<&[u32], usize> = std::collections::HashMap::new();
        for p in pairs.chunks(a) {
            *want.entry(p).or_default() += 1;
        }
        for (id, v) in live {
            match want.get_mut(&v[..]) {
                Some(c) if *c > 0 => *c -= 1,
                _ => st.pattern.remove_pair(id).map_err(sparse_err)?,
            }
        }
        let mut added = std::collections::HashMap::new();
        for p in pairs.chunks(a) {
            let left = want.get(p).copied().unwrap_or(0);
            let done: &mut usize = added.entry(p).or_default();
            if *done < left {
                *done += 1;
                st.pattern.add_pair(p).map_err(sparse_err)?;
            }
        }
        Ok(())
    }
}

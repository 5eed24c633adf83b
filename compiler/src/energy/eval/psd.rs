//! Which PSD projection a term's Hessian blocks take.
//!
//! A term whose Hessian kernel seeds only the vertices after the first (it reads its vertex
//! dofs only through differences of points, see [`crate::energy::kernels::derive::value_grad_hess`]) has its
//! blocks projected in difference coordinates
//! ([`mad_runtime::linalg::differences`]): the test and the decomposition work on the
//! (n−1)d × (n−1)d block the kernel computes. Other terms over one vertex dof field take the
//! projection on the translation complement ([`mad_runtime::linalg::translation`]), which
//! tests the translation structure of each block itself; the rest take the full projection.
//!
//! The block a term adds is its objective weight w times its Hessian H, and it is w·H that
//! projected Newton needs positive semi-definite. For w ≥ 0 that is w·P(H), P the clamp of
//! the eigenvalues at 0; for w < 0 it is |w|·P(−H), so a projector made for a negative
//! weight ([`PsdProjector::for_weight`]) hands back −P(−H) (negation is exact), which the
//! caller scales by w as it scales every block.

use mad_runtime::linalg::differences::{
    project_psd_differences, project_psd_differences_many, project_psd_differences_many_upper,
};
use mad_runtime::linalg::sym_eigen::PsdWork;
use mad_runtime::linalg::translation::{project_psd_translation, project_psd_translation_many};

use crate::energy::kernels::TermKernels;
use crate::front::mesh::FieldDecl;

/// The projection of one term's k×k Hessian blocks (clamp at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PsdProjector {
    pub k: usize,
    /// The translation vertex count ([`TermKernels::translation_nverts`]; 0: none).
    pub nverts: usize,
    /// Whether the blocks are Hessians of a function of the differences (module docs).
    pub differences: bool,
    /// Whether the blocks will be scaled by a negative weight (module docs).
    pub negative: bool,
}

impl PsdProjector {
    pub fn of(t: &TermKernels, dofs: &[FieldDecl]) -> PsdProjector {
        let nverts = t.translation_nverts(dofs);
        PsdProjector {
            k: t.k,
            nverts,
            differences: nverts >= 2 && t.hess_seeds > 0 && t.hess_seeds < t.k,
            negative: false,
        }
    }

    /// This projector for blocks that will be scaled by `weight`.
    pub fn for_weight(self, weight: f64) -> PsdProjector {
        PsdProjector {
            negative: weight < 0.0,
            ..self
        }
    }

    /// Projects one block (row-major k×k); whether it changed.
    pub fn one(&self, block: &mut [f64], work: &mut PsdWork) -> bool {
        negated_if(self.negative, block);
        let changed = self.one_unsigned(block, work);
        negated_if(self.negative, block);
        changed
    }

    /// Projects consecutive blocks; how many changed. With `upper_only`, the caller reads
    /// the upper triangles (entries (i, j), j ≥ i) only, and the lower triangles of the
    /// projected blocks may keep their input values
    /// ([`project_psd_differences_many_upper`]).
    pub fn many(&self, blocks: &mut [f64], upper_only: bool, work: &mut PsdWork) -> usize {
        negated_if(self.negative, blocks);
        let changed = self.many_unsigned(blocks, upper_only, work);
        negated_if(self.negative, blocks);
        changed
    }

    fn one_unsigned(&self, block: &mut [f64], work: &mut PsdWork) -> bool {
        if self.differences {
            project_psd_differences(block, self.k, self.nverts, work)
        } else {
            project_psd_translation(block, self.k, self.nverts, 0.0, work)
        }
    }

    fn many_unsigned(&self, blocks: &mut [f64], upper_only: bool, work: &mut PsdWork) -> usize {
        if self.differences && upper_only {
            project_psd_differences_many_upper(blocks, self.k, self.nverts, work)
        } else if self.differences {
            project_psd_differences_many(blocks, self.k, self.nverts, work)
        } else {
            project_psd_translation_many(blocks, self.k, self.nverts, 0.0, work)
        }
    }
}

/// Negates every value when `flip` holds.
pub(crate) fn negated_if(flip: bool, values: &mut [f64]) {
    if flip {
        values.iter_mut().for_each(|v| *v = -*v);
    }
}

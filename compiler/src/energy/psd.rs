//! Which PSD projection a term's Hessian blocks take.
//!
//! A term whose Hessian kernel seeds only the vertices after the first (it reads its vertex
//! dofs only through differences of points, see [`super::derive::value_grad_hess`]) has its
//! blocks projected in difference coordinates
//! ([`mad_runtime::linalg::differences`]): the test and the decomposition work on the
//! (n−1)d × (n−1)d block the kernel computes. Other terms over one vertex dof field take the
//! projection on the translation complement ([`mad_runtime::linalg::translation`]), which
//! tests the translation structure of each block itself; the rest take the full projection.

use mad_runtime::linalg::differences::{project_psd_differences, project_psd_differences_many};
use mad_runtime::linalg::sym_eigen::PsdWork;
use mad_runtime::linalg::translation::{project_psd_translation, project_psd_translation_many};

use super::kernels::TermKernels;
use crate::front::mesh::FieldDecl;

/// The projection of one term's k×k Hessian blocks (clamp at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PsdProjector {
    pub k: usize,
    /// The translation vertex count ([`TermKernels::translation_nverts`]; 0: none).
    pub nverts: usize,
    /// Whether the blocks are Hessians of a function of the differences (module docs).
    pub differences: bool,
}

impl PsdProjector {
    pub fn of(t: &TermKernels, dofs: &[FieldDecl]) -> PsdProjector {
        let nverts = t.translation_nverts(dofs);
        PsdProjector {
            k: t.k,
            nverts,
            differences: nverts >= 2 && t.hess_seeds > 0 && t.hess_seeds < t.k,
        }
    }

    /// Projects one block (row-major k×k); whether it changed.
    pub fn one(&self, block: &mut [f64], work: &mut PsdWork) -> bool {
        if self.differences {
            project_psd_differences(block, self.k, self.nverts, work)
        } else {
            project_psd_translation(block, self.k, self.nverts, 0.0, work)
        }
    }

    /// Projects consecutive blocks; how many changed.
    pub fn many(&self, blocks: &mut [f64], work: &mut PsdWork) -> usize {
        if self.differences {
            project_psd_differences_many(blocks, self.k, self.nverts, work)
        } else {
            project_psd_translation_many(blocks, self.k, self.nverts, 0.0, work)
        }
    }
}

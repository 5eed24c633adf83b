//! Which colours of the assembly schedule run on the thread pool.
//!
//! Handing a colour's chunks to the pool wakes its workers, which costs tens of
//! microseconds: more than a whole energy evaluation of a 900-vertex cloth takes on one
//! thread. A colour is therefore run on the pool only when it has at least two chunks and
//! its estimated work — elements times a weight for the evaluation kind — reaches
//! [`PARALLEL_MIN_WORK`] (or the binding's own threshold); smaller colours run on the calling
//! thread. Either way every chunk
//! runs the same code in the same schedule, so results are the same bits whichever thread
//! runs a chunk (the module docs of [`super::batched`]).
//!
//! The weights are the relative costs per element measured on the parameterization and the
//! cloth (`docs/benchmarks.md`): an energy ≈ 1, a gradient ≈ 2, an HVP ≈ 3, a Hessian block
//! ≈ 4, a projected Hessian block ≈ 10. The threshold puts the energies and gradients of
//! meshes of a few thousand elements on one thread and their projected Hessians on all.

use crate::back::cranelift::BatchKind;
use mad_runtime::sparse::Coloring;

/// What an evaluation computes per element, for the work estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    Value,
    Grad,
    Hvp,
    Hess,
    ProjectedHess,
}

impl Work {
    /// The work of a batched loop of kind `kind`.
    pub(crate) fn of_batch(kind: BatchKind) -> Work {
        match kind {
            BatchKind::Value => Work::Value,
            BatchKind::Grad => Work::Grad,
            BatchKind::Hvp => Work::Hvp,
            BatchKind::Hess => Work::Hess,
            BatchKind::HessBlock => Work::ProjectedHess,
        }
    }

    /// The weight of one element (module docs).
    fn weight(self) -> usize {
        match self {
            Work::Value => 1,
            Work::Grad => 2,
            Work::Hvp => 3,
            Work::Hess => 4,
            Work::ProjectedHess => 10,
        }
    }
}

/// The estimated work below which a colour runs on the calling thread (by default:
/// [`MeshEnergy::set_min_parallel_work`](super::bind::MeshEnergy::set_min_parallel_work)).
pub const PARALLEL_MIN_WORK: usize = 4096;

/// Whether colour `colour` of `coloring` is worth handing to the pool: two chunks or more,
/// and an estimated work of at least `min_work` (module docs).
pub(crate) fn worth_parallel(
    coloring: &Coloring,
    colour: usize,
    work: Work,
    min_work: usize,
) -> bool {
    let chunks = coloring.colour(colour);
    if chunks.len() < 2 {
        return false;
    }
    let elements: usize = chunks
        .iter()
        .map(|&ch| coloring.chunk_elements(ch).len())
        .sum();
    elements * work.weight() >= min_work
}

#[cfg(test)]
mod tests {
    use super::*;
    use mad_runtime::sparse::ElementList;

    /// `n` disjoint edges (no shared dof): one colour of ⌈n / chunk⌉ chunks.
    fn disjoint(n: usize) -> Coloring {
        let idx: Vec<u32> = (0..2 * n as u32).collect();
        let dofs = ElementList::fixed(2, idx);
        Coloring::greedy(&dofs, 2 * n)
    }

    #[test]
    fn small_colours_and_single_chunks_stay_on_the_calling_thread() {
        // 1,000 elements: 4 chunks of 256 in one colour.
        let c = disjoint(1000);
        assert_eq!(c.num_colours(), 1);
        assert!(!worth_parallel(&c, 0, Work::Value, PARALLEL_MIN_WORK));
        assert!(!worth_parallel(&c, 0, Work::Grad, PARALLEL_MIN_WORK));
        // A threshold of 0: every colour of two chunks or more.
        assert!(worth_parallel(&c, 0, Work::Value, 0));
        assert!(worth_parallel(
            &c,
            0,
            Work::ProjectedHess,
            PARALLEL_MIN_WORK
        ));
        // 256 elements: one chunk, nothing to share.
        let one = disjoint(256);
        assert!(!worth_parallel(&one, 0, Work::ProjectedHess, 0));
        // 100,000 elements: everything on the pool.
        let big = disjoint(100_000);
        assert!(worth_parallel(&big, 0, Work::Value, PARALLEL_MIN_WORK));
    }
}

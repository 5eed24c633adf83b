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

use crate::codegen::element_loop::BatchKind;
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

/// Runs the colours of `coloring` in turn, the chunks of a colour in parallel where
/// [`worth_parallel`] says so, and returns the sum of `run`'s results in colour and chunk
/// order (the same bits on any number of threads).
///
/// When some colour runs on the pool, the whole schedule runs inside one `pool.install`:
/// the calling thread hands the evaluation over once, and between colours the workers meet
/// at a join inside the pool. The colours that stay sequential then run on a pool thread.
/// `new_worker` is called once per parallel split (as `map_init` does) and once per
/// sequential colour.
pub(crate) fn run_colours<W, E: Clone + Send>(
    pool: Option<&rayon::ThreadPool>,
    coloring: &Coloring,
    work: Work,
    min_work: usize,
    new_worker: &(dyn Fn() -> Result<W, E> + Sync),
    run: &(dyn Fn(&mut W, u32) -> Result<f64, E> + Sync),
) -> Result<f64, E> {
    use rayon::prelude::*;
    let parallel: Vec<bool> = (0..coloring.num_colours())
        .map(|c| pool.is_some() && worth_parallel(coloring, c, work, min_work))
        .collect();
    let schedule = || -> Result<f64, E> {
        let mut total = 0.0;
        for (c, &on_pool) in parallel.iter().enumerate() {
            let chunks = coloring.colour(c);
            let sums: Vec<Result<f64, E>> = if on_pool {
                chunks
                    .par_iter()
                    .map_init(new_worker, |w, &ch| match w {
                        Ok(w) => run(w, ch),
                        Err(e) => Err(e.clone()),
                    })
                    .collect()
            } else {
                // A worker for this colour alone: dropped before the next colour, it gives
                // back what it took from its thread (the batched loops' block buffer) to the
                // workers of a parallel colour that run on the same thread.
                let mut w = new_worker()?;
                chunks.iter().map(|&ch| run(&mut w, ch)).collect()
            };
            for s in sums {
                total += s?;
            }
        }
        Ok(total)
    };
    match pool {
        Some(pool) if parallel.contains(&true) => pool.install(schedule),
        _ => schedule(),
    }
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

    /// Two colours: pairs (i, i+1) for even i, then for odd i, over 6,000 dofs.
    fn two_colours() -> Coloring {
        let n = 6000u32;
        let idx: Vec<u32> = (0..n - 1).step_by(2).chain((1..n - 1).step_by(2)).flat_map(|i| [i, i + 1]).collect();
        Coloring::greedy(&ElementList::fixed(2, idx), n as usize)
    }

    #[test]
    fn colours_sum_in_order_on_any_pool_and_errors_come_back() {
        let c = two_colours();
        assert!(c.num_colours() >= 2);
        // Chunk sums of very different magnitudes: the order of the additions shows in the bits.
        let run = |w: &mut usize, ch: u32| -> Result<f64, String> {
            *w += 1;
            Ok(1e16_f64.powi((ch % 3) as i32) * 0.1 + f64::from(ch))
        };
        let new_worker = || Ok::<usize, String>(0);
        let one = run_colours(None, &c, Work::Value, 0, &new_worker, &run).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for min_work in [0, usize::MAX] {
            let on_pool = run_colours(Some(&pool), &c, Work::Value, min_work, &new_worker, &run).unwrap();
            assert_eq!(one.to_bits(), on_pool.to_bits(), "min_work {min_work}");
        }
        // A mixed schedule: a large colour on the pool, a small one on one thread.
        let n = 6000u32;
        let idx: Vec<u32> = (0..n - 1).step_by(2).chain((1..599).step_by(2)).flat_map(|i| [i, i + 1]).collect();
        let mixed = Coloring::greedy(&ElementList::fixed(2, idx), n as usize);
        assert_eq!(mixed.num_colours(), 2);
        assert!(worth_parallel(&mixed, 0, Work::Value, 1000) && !worth_parallel(&mixed, 1, Work::Value, 1000));
        let one = run_colours(None, &mixed, Work::Value, 1000, &new_worker, &run).unwrap();
        let on_pool = run_colours(Some(&pool), &mixed, Work::Value, 1000, &new_worker, &run).unwrap();
        assert_eq!(one.to_bits(), on_pool.to_bits(), "mixed schedule");
        let failing = |_: &mut usize, ch: u32| -> Result<f64, String> {
            if ch == 3 { Err("chunk 3".into()) } else { Ok(1.0) }
        };
        assert_eq!(run_colours(Some(&pool), &c, Work::Value, 0, &new_worker, &failing), Err("chunk 3".into()));
        let no_worker = || Err::<usize, String>("no worker".into());
        assert_eq!(run_colours(Some(&pool), &c, Work::Value, 0, &no_worker, &run), Err("no worker".into()));
        assert_eq!(run_colours(None, &c, Work::Value, 0, &no_worker, &run), Err("no worker".into()));
    }
}

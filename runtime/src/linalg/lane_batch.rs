//! The batching loop of the PSD projections that decompose one small reduced matrix per
//! block ([`super::translation`], [`super::differences`]): blocks are prepared one by one,
//! those that need a decomposition wait in a lane of a [`LaneMatrix`] until [`LANES`] of
//! them are there, [`jacobi_lanes`] decomposes them together, and each is finished from its
//! lane. A block's result does not depend on its neighbours (the lanes are independent bit
//! for bit).

use super::jacobi_lanes::{LANES, LaneMatrix, jacobi_lanes, lane_zeros};
use super::sym_eigen::PsdWork;

/// What preparing a block found.
pub(crate) enum Prepared<P, const M: usize> {
    /// Nothing left to do: whether the block was changed.
    Done(bool),
    /// The block takes the reduction's fallback; it is untouched.
    Fallback,
    /// `r` (symmetric, both triangles, scaled near 1) is to be decomposed; `pending` is what
    /// finishing the block needs besides the decomposition.
    Decompose { pending: P, r: [[f64; M]; M] },
}

/// One way of projecting a block through an M×M reduced matrix.
pub(crate) trait Reduction<const M: usize> {
    type Pending;
    /// The tests and the reduced matrix of a block.
    fn prepare(&self, block: &[f64]) -> Prepared<Self::Pending, M>;
    /// Finishes a block from the eigenvalues `ev` of its reduced matrix and the eigenvectors
    /// `w[j]` (of `ev[j]`): whether it changed, or `None` for the fallback (block untouched).
    fn finish(&self, block: &mut [f64], pending: &Self::Pending, ev: &[f64; M], w: &[[f64; M]; M]) -> Option<bool>;
    /// The projection of a block the reduction cannot take: whether it changed.
    fn fallback(&self, block: &mut [f64], work: &mut PsdWork) -> bool;
}

/// Projects every `kk`-value block of `blocks` by `red`; returns how many changed.
pub(crate) fn project_many<const M: usize, R: Reduction<M>>(
    red: &R,
    blocks: &mut [f64],
    kk: usize,
    work: &mut PsdWork,
) -> usize {
    let len = blocks.len();
    project_at(red, blocks, kk, (0..len).step_by(kk), work, None)
}

/// Projects the `kk`-value blocks of `blocks` that start at `offsets` by `red`; returns how
/// many changed. With `deferred`, the blocks whose preparation asks for the fallback are
/// left untouched and their offsets pushed there instead (for a batched fallback).
pub(crate) fn project_at<const M: usize, R: Reduction<M>>(
    red: &R,
    blocks: &mut [f64],
    kk: usize,
    offsets: impl Iterator<Item = usize>,
    work: &mut PsdWork,
    mut deferred: Option<&mut Vec<usize>>,
) -> usize {
    let mut changed = 0;
    let mut lanes: LaneMatrix<M> = lane_zeros::<M>();
    let mut waiting: [Option<(usize, R::Pending)>; LANES] = [const { None }; LANES];
    let mut filled = 0;
    for at in offsets {
        let block = &mut blocks[at..at + kk];
        match red.prepare(block) {
            Prepared::Done(ch) => changed += usize::from(ch),
            Prepared::Fallback => match deferred.as_deref_mut() {
                Some(list) => list.push(at),
                None => changed += usize::from(red.fallback(block, work)),
            },
            Prepared::Decompose { pending, r } => {
                for (i, row) in r.iter().enumerate() {
                    for (j, &x) in row.iter().enumerate() {
                        lanes[i][j].0[filled] = x;
                    }
                }
                waiting[filled] = Some((at, pending));
                filled += 1;
                if filled == LANES {
                    changed += flush(red, blocks, kk, &mut lanes, &mut waiting[..filled], work);
                    filled = 0;
                }
            }
        }
    }
    if filled > 0 {
        changed += flush(red, blocks, kk, &mut lanes, &mut waiting[..filled], work);
    }
    changed
}

/// Decomposes the lanes of the `waiting` blocks (lane i holds `waiting[i]`'s reduced matrix,
/// the others are zero), finishes those blocks, and zeroes the lanes again (a zero lane
/// converges at once).
#[allow(clippy::needless_range_loop)]
fn flush<const M: usize, R: Reduction<M>>(
    red: &R,
    blocks: &mut [f64],
    kk: usize,
    lanes: &mut LaneMatrix<M>,
    waiting: &mut [Option<(usize, R::Pending)>],
    work: &mut PsdWork,
) -> usize {
    let mut vecs: LaneMatrix<M> = lane_zeros::<M>();
    let ok = jacobi_lanes::<M>(lanes, &mut vecs);
    let mut changed = 0;
    for (lane, slot) in waiting.iter_mut().enumerate() {
        let Some((at, pending)) = slot.take() else { continue };
        let block = &mut blocks[at..at + kk];
        let done = if ok[lane] {
            let mut ev = [0.0f64; M];
            let mut w = [[0.0f64; M]; M];
            for j in 0..M {
                ev[j] = lanes[j][j].0[lane];
                for i in 0..M {
                    w[j][i] = vecs[i][j].0[lane];
                }
            }
            red.finish(block, &pending, &ev, &w)
        } else {
            None
        };
        changed += usize::from(match done {
            Some(ch) => ch,
            None => red.fallback(block, work),
        });
    }
    *lanes = lane_zeros::<M>();
    changed
}

//! The PSD projection of whole K×K blocks in SIMD lanes, for blocks without a translation
//! null space (a term whose vertex dofs live in per-vertex frames, such as the tangent
//! coordinates of a manifold retraction): the blocks that the reduced paths of
//! [`super::translation`] hand back are batched here instead of being decomposed one after
//! another by tridiagonal QL.
//!
//! Per block: a non-finite or zero block is left as it is, and so is a block that passes the
//! PSD test of [`super::psd_test`]. The others wait in a lane: their symmetric part S, scaled
//! by a power of two near its largest entry, is decomposed by
//! [`jacobi_lanes`](super::jacobi_lanes::jacobi_lanes) with [`LANES`](super::jacobi_lanes::LANES)
//! blocks at a time, and the block becomes S − Σ_{λ<0} λ·v vᵀ, or Σ_{λ>0} λ·v vᵀ when fewer
//! than half the eigenvalues are clearly positive ([`super::differences::sum_positive_part`]).
//! A lane that does not converge takes [`project_psd_with`] (its block untouched until then).
//! Lanes are independent bit for bit, so a block's result does not depend on its neighbours.

// Index loops are the natural form of these small matrix computations.
#![allow(clippy::needless_range_loop)]

use super::differences::{sign_counts, sum_positive_part};
use super::lane_batch::{Prepared, Reduction, project_at, project_many};
use super::psd_test::psd_check;
use super::sym_eigen::{PsdWork, project_psd_with};
use super::translation::max_abs;
use super::tridiag_ql::scaled_symmetric;

/// The whole-block reduction of K×K blocks.
struct Whole<const K: usize>;

/// What finishing a decomposed block needs: its symmetric part and the scale of the
/// decomposed matrix.
struct Pending<const K: usize> {
    s: [[f64; K]; K],
    sc: f64,
}

impl<const K: usize> Reduction<K> for Whole<K> {
    type Pending = Pending<K>;

    #[inline(always)]
    fn prepare(&self, block: &[f64]) -> Prepared<Pending<K>, K> {
        match max_abs(&block[..K * K]) {
            None | Some(0.0) => return Prepared::Done(false),
            Some(_) => {}
        }
        let mut scratch = [[0.0f64; K]; K];
        if psd_check(&block[..K * K], K, 0.0, scratch.as_flattened_mut()) {
            return Prepared::Done(false);
        }
        let mut s = [[0.0f64; K]; K];
        for i in 0..K {
            for j in 0..K {
                s[i][j] = 0.5 * (block[i * K + j] + block[j * K + i]);
            }
        }
        match scaled_symmetric::<K>(&s, K) {
            Some((r, sc)) => Prepared::Decompose {
                pending: Pending { s, sc },
                r,
            },
            None => Prepared::Done(false),
        }
    }

    #[inline(always)]
    fn finish(
        &self,
        block: &mut [f64],
        p: &Pending<K>,
        ev: &[f64; K],
        w: &[[f64; K]; K],
    ) -> Option<bool> {
        let mut lam = [0.0f64; K];
        for j in 0..K {
            lam[j] = ev[j] / p.sc;
        }
        let (nneg, npos) = sign_counts(&lam);
        if nneg == 0 {
            // PSD up to the test's tolerance: nothing to clamp.
            return Some(false);
        }
        let from_positive = sum_positive_part(npos, K);
        for i in 0..K {
            for j in i..K {
                let mut acc = if from_positive { 0.0 } else { p.s[i][j] };
                for q in 0..K {
                    let l = lam[q];
                    let c = if from_positive {
                        if l > 0.0 { l } else { 0.0 }
                    } else if l < 0.0 {
                        -l
                    } else {
                        0.0
                    };
                    if c != 0.0 {
                        acc += c * w[q][i] * w[q][j];
                    }
                }
                block[i * K + j] = acc;
                block[j * K + i] = acc;
            }
        }
        Some(true)
    }

    fn fallback(&self, block: &mut [f64], work: &mut PsdWork) -> bool {
        project_psd_with(block, K, 0.0, work)
    }
}

/// Projects every K×K block of `blocks` (consecutive, row-major; module docs); returns how
/// many changed.
pub(crate) fn project_whole_many<const K: usize>(blocks: &mut [f64], work: &mut PsdWork) -> usize {
    project_many::<K, _>(&Whole::<K>, blocks, K * K, work)
}

/// Projects the K×K blocks of `blocks` that start at `offsets` (module docs); returns how
/// many changed.
pub(crate) fn project_whole_at<const K: usize>(
    blocks: &mut [f64],
    offsets: &[usize],
    work: &mut PsdWork,
) -> usize {
    project_at::<K, _>(
        &Whole::<K>,
        blocks,
        K * K,
        offsets.iter().copied(),
        work,
        None,
    )
}

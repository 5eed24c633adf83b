//! The batched PSD projection (`project_psd_translation_many`, Jacobi in SIMD lanes) against
//! the full projection by cyclic Jacobi one block at a time, which knows nothing of lanes or
//! of the translation null space; and the independence of a block's result from its
//! neighbours in the batch.

use mad_runtime::linalg::sym_eigen::{PsdMethod, PsdWork, project_psd_by, project_psd_with};
use mad_runtime::linalg::translation::project_psd_translation_many;

use crate::blocks_common;
use blocks_common::*;

/// (n vertices, d components): every shape the lanes handle, and one that goes block by block.
const SHAPES: [(usize, usize); 5] = [(2, 3), (3, 2), (3, 3), (4, 2), (4, 3)];

/// A mixed batch: PSD and indefinite invariant blocks at three scales, non-invariant blocks,
/// a zero block, and a block with a NaN.
fn batch(n: usize, d: usize, count: usize, rng: &mut Lcg) -> Vec<Vec<f64>> {
    let k = n * d;
    (0..count)
        .map(|trial| match trial % 11 {
            7 => vec![0.0; k * k],
            9 => {
                let w: Vec<f64> = (0..k).map(|i| if i % 3 == 0 { -0.5 } else { 0.3 }).collect();
                block(n, d, &w, false, rng)
            }
            10 => {
                let mut b = invariant_block(n, d, &vec![1.0; k - d], rng);
                b[1] = f64::NAN;
                b
            }
            _ => {
                let rank = (k - d).min(1 + trial % (k - d));
                let mut w: Vec<f64> = (0..rank).map(|_| 0.1 + rng.uniform().abs()).collect();
                for (i, x) in w.iter_mut().enumerate() {
                    if trial % 3 != 0 && (i + trial) % 2 == 0 {
                        *x *= -0.7;
                    }
                }
                let scale = [1.0, 1e-6, 1e8][trial % 3];
                invariant_block(n, d, &w, rng).iter().map(|x| x * scale).collect()
            }
        })
        .collect()
}

#[test]
fn batched_blocks_match_the_full_projection() {
    for (n, d) in SHAPES {
        let k = n * d;
        let mut rng = Lcg(5 + 17 * k as u64 + n as u64);
        let blocks = batch(n, d, 301, &mut rng);
        let mut flat = blocks.concat();
        let changed = project_psd_translation_many(&mut flat, k, n, 0.0, &mut PsdWork::new());
        let mut want_changed = 0;
        for (i, a) in blocks.iter().enumerate() {
            let got = &flat[i * k * k..(i + 1) * k * k];
            if a.iter().any(|x| !x.is_finite()) {
                // Left as it is, NaN included.
                assert!(got.iter().zip(a).all(|(x, y)| x.to_bits() == y.to_bits()));
                continue;
            }
            let mut want = a.clone();
            project_psd_by(&mut want, k, 0.0, &mut PsdWork::new(), PsdMethod::Jacobi);
            let scale = max_abs(a);
            let err = got.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(
                err <= 1e-10 * scale.max(f64::MIN_POSITIVE),
                "n={n} d={d} block {i}: error {err:e} of scale {scale:e}"
            );
            if got == a.as_slice() {
                // Reported unchanged blocks are bit for bit unchanged; a block the full
                // projection changes by more than rounding must have been changed.
                let moved = want.iter().zip(a).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
                assert!(moved <= 1e-10 * scale, "n={n} d={d} block {i} left unchanged");
            } else {
                want_changed += 1;
            }
            for r in 0..k {
                for c in 0..k {
                    assert_eq!(got[r * k + c], got[c * k + r], "not symmetric");
                }
            }
        }
        assert_eq!(changed, want_changed, "n={n} d={d}: changed count");
        assert!(changed > 50, "n={n} d={d}: only {changed} blocks changed");
    }
}

#[test]
fn a_block_does_not_depend_on_its_neighbours() {
    for (n, d) in SHAPES {
        let k = n * d;
        let mut rng = Lcg(99 + k as u64);
        let blocks = batch(n, d, 97, &mut rng);
        let mut whole = blocks.concat();
        let mut work = PsdWork::new();
        project_psd_translation_many(&mut whole, k, n, 0.0, &mut work);
        // Block by block, and in a rotated order split into uneven calls.
        for (i, a) in blocks.iter().enumerate() {
            let mut one = a.clone();
            project_psd_translation_many(&mut one, k, n, 0.0, &mut work);
            let got = &whole[i * k * k..(i + 1) * k * k];
            assert!(
                one.iter().zip(got).all(|(x, y)| x.to_bits() == y.to_bits()),
                "n={n} d={d} block {i}: alone differs from batched"
            );
        }
        let mut rotated: Vec<f64> = blocks[13..].concat();
        rotated.extend(blocks[..13].concat());
        let (head, tail) = rotated.split_at_mut(5 * k * k);
        project_psd_translation_many(head, k, n, 0.0, &mut work);
        project_psd_translation_many(tail, k, n, 0.0, &mut work);
        for (j, chunk) in rotated.chunks_exact(k * k).enumerate() {
            let i = (j + 13) % blocks.len();
            let got = &whole[i * k * k..(i + 1) * k * k];
            assert!(chunk.iter().zip(got).all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }
}

#[test]
fn a_clamp_above_zero_takes_the_full_path() {
    let mut rng = Lcg(3);
    let (n, d) = (3, 2);
    let k = n * d;
    let blocks = batch(n, d, 20, &mut rng);
    let mut flat = blocks.concat();
    let mut work = PsdWork::new();
    project_psd_translation_many(&mut flat, k, n, 1e-3, &mut work);
    for (i, a) in blocks.iter().enumerate() {
        let mut want = a.clone();
        project_psd_with(&mut want, k, 1e-3, &mut work);
        let got = &flat[i * k * k..(i + 1) * k * k];
        assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}

#[test]
fn blocks_without_the_translation_null_space_are_batched_whole() {
    // 6×6 blocks of a term in per-vertex frames (no translation null space), and 3×3 and
    // 6×6 blocks over one vertex (a vertex term such as a barrier against a fixed obstacle):
    // indefinite, PSD, rank-deficient and at three scales. They are decomposed in lanes as
    // whole blocks; the result is the clamp (against the one-block Jacobi projection),
    // symmetric, PSD, and independent of the other blocks of the batch.
    use mad_runtime::linalg::psd_test::psd_within_tolerance;
    for (n, d) in [(2usize, 3usize), (3, 2), (1, 3), (1, 6)] {
        let k = n * d;
        let mut rng = Lcg(4242 + k as u64 + n as u64);
        let blocks: Vec<Vec<f64>> = (0..120)
            .map(|trial| {
                let rank = 1 + trial % k;
                let w: Vec<f64> = (0..rank)
                    .map(|i| {
                        let v = 0.1 + rng.uniform().abs();
                        if (i + trial) % 3 == 0 { -0.6 * v } else { v }
                    })
                    .collect();
                let scale = [1.0, 1e-7, 1e9][trial % 3];
                block(n, d, &w, false, &mut rng).iter().map(|x| x * scale).collect()
            })
            .collect();
        let mut flat = blocks.concat();
        let mut work = PsdWork::new();
        let changed = project_psd_translation_many(&mut flat, k, n, 0.0, &mut work);
        assert!(changed > 40, "n={n} d={d}: only {changed} changed");
        for (i, a) in blocks.iter().enumerate() {
            let got = &flat[i * k * k..(i + 1) * k * k];
            let mut want = a.clone();
            project_psd_by(&mut want, k, 0.0, &mut PsdWork::new(), PsdMethod::Jacobi);
            let scale = max_abs(a);
            let err = got.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(err <= 1e-10 * scale, "n={n} d={d} block {i}: error {err:e} of scale {scale:e}");
            assert!(psd_within_tolerance(got, k, 0.0), "n={n} d={d} block {i}: not PSD");
            for r in 0..k {
                for c in 0..k {
                    assert_eq!(got[r * k + c], got[c * k + r], "not symmetric");
                }
            }
            let mut one = a.clone();
            project_psd_translation_many(&mut one, k, n, 0.0, &mut work);
            assert!(one.iter().zip(got).all(|(x, y)| x.to_bits() == y.to_bits()), "block {i}: alone differs");
        }
    }
}

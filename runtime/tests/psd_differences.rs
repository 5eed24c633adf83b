//! The PSD projection in difference coordinates (`linalg::differences`) against the full
//! projection by cyclic Jacobi of the whole block, which knows nothing of differences,
//! translations or lanes.

use mad_runtime::linalg::differences::{
    project_psd_differences, project_psd_differences_many, project_psd_differences_many_upper,
};
use mad_runtime::linalg::psd_test::psd_within_tolerance;
use mad_runtime::linalg::sym_eigen::{PsdMethod, PsdWork, project_psd_by};

use crate::blocks_common;
use blocks_common::*;

/// (n vertices, d components): the batched shapes, the one-at-a-time ones, a generic one.
const SHAPES: [(usize, usize); 7] = [(2, 3), (3, 2), (3, 3), (4, 2), (4, 3), (5, 2), (2, 2)];

fn reference(a: &[f64], k: usize) -> Vec<f64> {
    let mut r = a.to_vec();
    project_psd_by(&mut r, k, 0.0, &mut PsdWork::new(), PsdMethod::Jacobi);
    r
}

/// Tᵀ X T laid out as the Hessian kernels write it: X in the rows and columns of vertices
/// 1…, the negated sums over those vertices (per component) in the rows and columns of
/// vertex 0.
fn from_differences(n: usize, d: usize, x: &[f64]) -> Vec<f64> {
    let k = n * d;
    let m = k - d;
    // t[r][i]: row r of T (m rows), column i of the k local dofs.
    let t = |r: usize, i: usize| -> f64 {
        let (v, c) = (i / d, i % d);
        let (rv, rc) = (r / d + 1, r % d);
        if c != rc {
            0.0
        } else if v == rv {
            1.0
        } else if v == 0 {
            -1.0
        } else {
            0.0
        }
    };
    let mut h = vec![0.0; k * k];
    for i in 0..k {
        for j in i..k {
            let mut s = 0.0;
            for r in 0..m {
                for q in 0..m {
                    s += t(r, i) * x[r * m + q] * t(q, j);
                }
            }
            h[i * k + j] = s;
            h[j * k + i] = s;
        }
    }
    h
}

/// An m×m symmetric X with `neg` negative eigenvalues (0 for a PSD block), at `scale`.
fn random_x(m: usize, neg: usize, scale: f64, rng: &mut Lcg) -> Vec<f64> {
    let l: Vec<f64> = (0..m)
        .map(|i| {
            let v = 0.1 + rng.uniform().abs();
            if i < neg { -0.7 * v } else { v }
        })
        .collect();
    with_spectrum(&l, rng).iter().map(|v| v * scale).collect()
}

fn max_err(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn check_result(n: usize, d: usize, a: &[f64], got: &[f64], what: &str) {
    let k = n * d;
    let want = reference(a, k);
    let err = max_err(got, &want);
    assert!(
        err <= 1e-10 * max_abs(a),
        "{what} n={n} d={d}: error {err:e} of scale {:e}",
        max_abs(a)
    );
    assert!(psd_within_tolerance(got, k, 0.0), "{what} n={n} d={d}: not PSD, ref PSD {}: {got:?}", psd_within_tolerance(&want, k, 0.0));
    for i in 0..k {
        for j in 0..k {
            assert_eq!(got[i * k + j], got[j * k + i], "{what}: not symmetric");
        }
        for c in 0..d {
            let s: f64 = (0..n).map(|v| got[i * k + v * d + c]).sum();
            assert!(s.abs() <= 1e-12 * max_abs(a), "{what}: null space lost: {s:e}");
        }
    }
}

#[test]
fn blocks_match_the_full_projection() {
    let mut work = PsdWork::new();
    for (n, d) in SHAPES {
        let k = n * d;
        let m = k - d;
        let mut rng = Lcg(3 + 17 * k as u64 + n as u64);
        let (mut changed, mut unchanged) = (0, 0);
        for trial in 0..200 {
            let neg = if trial % 3 == 0 { 0 } else { 1 + trial % m.min(3) };
            let scale = [1.0, 1e-6, 1e8][trial % 3];
            let a = from_differences(n, d, &random_x(m, neg, scale, &mut rng));
            let mut got = a.clone();
            let ch = project_psd_differences(&mut got, k, n, &mut work);
            check_result(n, d, &a, &got, "one");
            if ch {
                changed += 1;
            } else {
                unchanged += 1;
                assert_eq!(got, a, "reported unchanged but changed");
            }
        }
        assert!(changed > 100 && unchanged > 50, "n={n} d={d}: {changed} changed, {unchanged} not");
    }
}

#[test]
fn batches_match_the_full_projection_and_do_not_mix_blocks() {
    let mut work = PsdWork::new();
    for (n, d) in SHAPES {
        let k = n * d;
        let kk = k * k;
        let m = k - d;
        let mut rng = Lcg(11 + 5 * k as u64 + n as u64);
        let mut blocks: Vec<Vec<f64>> = (0..37)
            .map(|trial| match trial % 9 {
                4 => vec![0.0; kk],
                _ => {
                    let neg = if trial % 4 == 0 { 0 } else { 1 + trial % m.min(3) };
                    from_differences(n, d, &random_x(m, neg, [1.0, 1e-5, 1e6][trial % 3], &mut rng))
                }
            })
            .collect();
        // A block with a NaN in X is left as it is and not counted as changed.
        let mut nan = from_differences(n, d, &random_x(m, 1, 1.0, &mut rng));
        nan[d * k + d] = f64::NAN;
        blocks.push(nan.clone());
        let mut flat: Vec<f64> = blocks.concat();
        let count = project_psd_differences_many(&mut flat, k, n, &mut work);
        let mut want_count = 0;
        for (b, got) in blocks.iter().zip(flat.chunks_exact(kk)) {
            if b.iter().any(|x| x.is_nan()) {
                assert!(got.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()));
                continue;
            }
            check_result(n, d, b, got, "batched");
            if got != b.as_slice() {
                want_count += 1;
            }
        }
        assert_eq!(count, want_count, "n={n} d={d}: changed count");
        // The same blocks in reverse order give the same bits per block.
        let mut rev: Vec<f64> = blocks.iter().rev().flatten().copied().collect();
        project_psd_differences_many(&mut rev, k, n, &mut work);
        let nb = blocks.len();
        for (i, got) in flat.chunks_exact(kk).enumerate() {
            let other = &rev[(nb - 1 - i) * kk..(nb - i) * kk];
            assert!(
                got.iter().zip(other).all(|(x, y)| x.to_bits() == y.to_bits()),
                "n={n} d={d}: block {i} depends on its neighbours"
            );
        }
        // The upper-triangle variant: the same upper triangles, bit for bit, and lower
        // triangles that are either the projection's or the input's.
        let mut upper: Vec<f64> = blocks.concat();
        let upper_count = project_psd_differences_many_upper(&mut upper, k, n, &mut work);
        assert_eq!(upper_count, count, "n={n} d={d}: upper-only changed count");
        for (b, ((got, full), input)) in upper.chunks_exact(kk).zip(flat.chunks_exact(kk)).zip(&blocks).enumerate() {
            for i in 0..k {
                for j in 0..k {
                    let (x, want) = (got[i * k + j], full[i * k + j]);
                    if j >= i {
                        assert_eq!(x.to_bits(), want.to_bits(), "n={n} d={d}: block {b} ({i}, {j})");
                    } else {
                        let kept = input[i * k + j];
                        assert!(
                            x.to_bits() == want.to_bits() || x.to_bits() == kept.to_bits(),
                            "n={n} d={d}: block {b} lower ({i}, {j}) is neither"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn only_the_difference_block_is_read() {
    // The rows and columns of vertex 0 are rebuilt from those of the other vertices, so a
    // projected block is the projection of Tᵀ X T whatever vertex 0's entries held.
    let (n, d) = (3, 2);
    let (k, m) = (6, 4);
    let mut rng = Lcg(99);
    let x = random_x(m, 1, 1.0, &mut rng);
    let exact = from_differences(n, d, &x);
    let mut noisy = exact.clone();
    for j in 0..k {
        noisy[j] += 0.25;
        noisy[j * k] += 0.25;
    }
    let mut work = PsdWork::new();
    assert!(project_psd_differences(&mut noisy, k, n, &mut work));
    check_result(n, d, &exact, &noisy, "noisy vertex 0");
}

#[test]
fn shapes_without_differences_take_the_translation_path() {
    // One vertex (no differences) and a vertex count that does not divide k.
    let mut rng = Lcg(5);
    let mut work = PsdWork::new();
    for (k, n) in [(3, 1), (6, 4)] {
        let a = with_spectrum(&(0..k).map(|i| if i == 0 { -1.0 } else { 1.0 }).collect::<Vec<_>>(), &mut rng);
        let mut got = a.clone();
        assert!(project_psd_differences(&mut got, k, n, &mut work));
        assert!(max_err(&got, &reference(&a, k)) <= 1e-12);
    }
}

#[test]
fn rank_deficient_psd_blocks_are_left_bit_for_bit_in_batches() {
    // X PSD with one or two zero eigenvalues (a term flat along some differences): the
    // unpivoted test meets a pivot within the tolerance and the pivoted test keeps the block;
    // blocks with a negative eigenvalue among them are projected.
    let mut work = PsdWork::new();
    for (n, d) in [(2usize, 3usize), (3, 2), (3, 3), (4, 2)] {
        let k = n * d;
        let kk = k * k;
        let m = k - d;
        let mut rng = Lcg(91 + k as u64 + n as u64);
        let mut blocks = Vec::new();
        for trial in 0..24 {
            let zeros = 1 + trial % 2;
            let mut l: Vec<f64> = (0..m).map(|_| 0.1 + rng.uniform().abs()).collect();
            for z in l.iter_mut().take(zeros) {
                *z = 0.0;
            }
            if trial % 3 == 2 {
                l[m - 1] = -0.5;
            }
            let x = with_spectrum(&l, &mut rng);
            blocks.push(from_differences(n, d, &x));
        }
        let mut flat: Vec<f64> = blocks.concat();
        project_psd_differences_many(&mut flat, k, n, &mut work);
        for (trial, (b, got)) in blocks.iter().zip(flat.chunks_exact(kk)).enumerate() {
            if trial % 3 == 2 {
                check_result(n, d, b, got, "rank-deficient, one negative");
            } else if psd_within_tolerance(b, k, 0.0) {
                assert!(
                    got.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "n={n} d={d} trial {trial}: a PSD block was changed"
                );
            } else {
                // Rounding put an eigenvalue just below the tolerance: projected, to rounding.
                check_result(n, d, b, got, "rank-deficient");
            }
        }
    }
}

//! The PSD projection on the translation complement (`linalg::translation`) against the full
//! projection by cyclic Jacobi, which knows nothing of the null space.

use mad_runtime::linalg::sym_eigen::{PsdMethod, PsdWork, project_psd_by, project_psd_with};
use mad_runtime::linalg::translation::{
    is_translation_invariant, project_psd_translation, translation_tolerance,
};

use crate::blocks_common;
use blocks_common::*;

fn reference(a: &[f64], k: usize) -> Vec<f64> {
    let mut r = a.to_vec();
    project_psd_by(&mut r, k, 0.0, &mut PsdWork::new(), PsdMethod::Jacobi);
    r
}

const SHAPES: [(usize, usize); 4] = [(2, 3), (3, 2), (3, 3), (4, 3)];

#[test]
fn invariant_blocks_match_the_full_projection() {
    let mut work = PsdWork::new();
    for (n, d) in SHAPES {
        let k = n * d;
        let mut rng = Lcg(1 + 31 * k as u64 + n as u64);
        let (mut changed, mut unchanged) = (0, 0);
        for trial in 0..300 {
            let rank = (k - d).min(1 + trial % (k - d));
            let mut w: Vec<f64> = (0..rank).map(|_| 0.1 + rng.uniform().abs()).collect();
            // Some negative weights (none for a third of the blocks).
            for (i, x) in w.iter_mut().enumerate() {
                if trial % 3 != 0 && (i + trial) % 2 == 0 {
                    *x *= -0.7;
                }
            }
            let scale = [1.0, 1e-6, 1e8][trial % 3];
            let a: Vec<f64> = block(n, d, &w, true, &mut rng)
                .iter()
                .map(|x| x * scale)
                .collect();
            assert!(
                is_translation_invariant(&a, k, n),
                "n={n} d={d} trial {trial}"
            );
            let want = reference(&a, k);
            let mut got = a.clone();
            let ch = project_psd_translation(&mut got, k, n, 0.0, &mut work);
            let err = got
                .iter()
                .zip(&want)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(
                err <= 1e-10 * max_abs(&a),
                "n={n} d={d} trial {trial}: error {err:e} of scale {:e}",
                max_abs(&a)
            );
            if ch {
                changed += 1;
            } else {
                unchanged += 1;
                assert_eq!(got, a, "reported unchanged but changed");
            }
            // The result keeps the translation null space and is symmetric.
            for i in 0..k {
                for c in 0..d {
                    let s: f64 = (0..n).map(|v| got[i * k + v * d + c]).sum();
                    assert!(s.abs() <= 1e-12 * max_abs(&a), "null space lost: {s:e}");
                }
                for j in 0..k {
                    assert_eq!(got[i * k + j], got[j * k + i]);
                }
            }
        }
        assert!(
            changed > 100 && unchanged > 50,
            "n={n} d={d}: {changed} changed, {unchanged} not"
        );
    }
}

#[test]
fn non_invariant_blocks_take_the_full_path() {
    let mut work = PsdWork::new();
    for (n, d) in SHAPES {
        let k = n * d;
        let mut rng = Lcg(7 + k as u64 * n as u64);
        for trial in 0..100 {
            let w: Vec<f64> = (0..k)
                .map(|i| {
                    if i % 3 == 0 {
                        -0.5
                    } else {
                        0.2 + rng.uniform().abs()
                    }
                })
                .collect();
            let a = block(n, d, &w, false, &mut rng);
            assert!(
                !is_translation_invariant(&a, k, n),
                "n={n} d={d} trial {trial}"
            );
            let mut full = a.clone();
            let full_ch = project_psd_with(&mut full, k, 0.0, &mut work);
            let mut got = a.clone();
            let ch = project_psd_translation(&mut got, k, n, 0.0, &mut work);
            assert_eq!(ch, full_ch);
            assert_eq!(got, full, "fallback differs from project_psd_with");
            let want = reference(&a, k);
            let err = got
                .iter()
                .zip(&want)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(err <= 1e-10 * max_abs(&a), "n={n} d={d}: {err:e}");
        }
    }
}

#[test]
fn eps_and_unsupported_layouts_take_the_full_path() {
    let mut work = PsdWork::new();
    let mut rng = Lcg(99);
    let a = block(3, 3, &[1.0, -0.5, 0.3, -0.2], true, &mut rng);
    for (eps, nverts) in [(1e-3, 3), (0.0, 0), (0.0, 1), (0.0, 2), (0.0, 4)] {
        let mut full = a.clone();
        let full_ch = project_psd_with(&mut full, 9, eps, &mut work);
        let mut got = a.clone();
        let ch = project_psd_translation(&mut got, 9, nverts, eps, &mut work);
        assert_eq!((ch, &got), (full_ch, &full), "eps={eps} nverts={nverts}");
    }
    // eps > 0 lifts the null-space eigenvalues: the result is positive definite.
    let mut got = a.clone();
    assert!(project_psd_translation(&mut got, 9, 3, 1e-3, &mut work));
    let s: f64 = (0..3).map(|v| got[v * 3]).sum();
    assert!(s.abs() > 1e-5, "eps ignored");
}

#[test]
fn non_finite_blocks_are_left_unchanged() {
    let mut work = PsdWork::new();
    let mut rng = Lcg(5);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut a = block(3, 2, &[1.0, -0.5, 0.3], true, &mut rng);
        a[7] = bad;
        a[13] = bad;
        assert!(!is_translation_invariant(&a, 6, 3));
        let mut got = a.clone();
        assert!(!project_psd_translation(&mut got, 6, 3, 0.0, &mut work));
        for (x, y) in got.iter().zip(&a) {
            assert!(x.to_bits() == y.to_bits());
        }
    }
}

#[test]
fn zero_and_psd_blocks_are_left_bit_for_bit() {
    let mut work = PsdWork::new();
    let mut z = vec![0.0; 36];
    assert!(!project_psd_translation(&mut z, 6, 2, 0.0, &mut work));
    assert!(z.iter().all(|&x| x == 0.0));
    let mut rng = Lcg(11);
    // A spring: [K −K; −K K] with K PSD.
    for _ in 0..50 {
        let a = block(
            2,
            3,
            &[0.3 + rng.uniform().abs(), 0.1 + rng.uniform().abs()],
            true,
            &mut rng,
        );
        let mut got = a.clone();
        assert!(!project_psd_translation(&mut got, 6, 2, 0.0, &mut work));
        assert_eq!(got, a);
    }
}

#[test]
fn negative_rounding_along_the_translations_is_clamped() {
    let mut work = PsdWork::new();
    let mut rng = Lcg(21);
    for (n, d) in SHAPES {
        let k = n * d;
        let mut a = block(n, d, &[1.0, -0.6, 0.4], true, &mut rng);
        // −δ·t₀t₀ᵀ along the first translation, δ inside the invariance tolerance.
        let delta = 0.3 * translation_tolerance(k, max_abs(&a)) / n as f64;
        for u in 0..n {
            for v in 0..n {
                a[(u * d) * k + v * d] -= delta;
            }
        }
        assert!(is_translation_invariant(&a, k, n));
        let tat = |m: &[f64]| -> f64 {
            (0..n)
                .flat_map(|u| (0..n).map(move |v| (u, v)))
                .map(|(u, v)| m[(u * d) * k + v * d])
                .sum()
        };
        let rounding = 4.0 * (n * n) as f64 * f64::EPSILON * max_abs(&a);
        assert!(tat(&a) < -0.5 * delta * (n * n) as f64 && tat(&a) < -4.0 * rounding);
        let mut got = a.clone();
        assert!(project_psd_translation(&mut got, k, n, 0.0, &mut work));
        assert!(
            tat(&got) >= -1e-3 * delta,
            "n={n} d={d}: tᵀHt = {:e}",
            tat(&got)
        );
    }
}

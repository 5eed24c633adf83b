//! The pivoted-LDLᵀ PSD test and the projection that skips blocks passing it, checked against
//! the projection rebuilt from the general eigen-decomposition, V·max(Λ, 0)·Vᵀ.

use mad_runtime::linalg::psd_test::psd_within_tolerance;
use mad_runtime::linalg::sym_eigen::{PsdWork, project_psd, project_psd_with, sym_eigen};

use crate::blocks_common;
use blocks_common::*;

fn eigen_projection(a: &[f64], k: usize) -> Vec<f64> {
    let e = sym_eigen(a, k);
    let mut p = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            p[i * k + j] = (0..k).map(|c| e.vectors[i * k + c] * e.values[c].max(0.0) * e.vectors[j * k + c]).sum();
        }
    }
    p
}

const SIZES: [usize; 5] = [3, 6, 9, 12, 21];

#[test]
fn psd_blocks_with_null_spaces_pass_and_are_left_unchanged() {
    let mut rng = Lcg(5);
    let mut work = PsdWork::new();
    for &k in &SIZES {
        for trial in 0..40 {
            let a = if trial % 2 == 0 {
                // Rank k−3 (k = 3: rank 1 would not be a translation block, use rank 2).
                let r = if k == 3 { 2 } else { (k - 3).min(1 + trial % (k - 2)) };
                let w: Vec<f64> = (0..r).map(|_| 0.1 + rng.uniform().abs()).collect();
                element_like(k, &w, &mut rng)
            } else {
                let l: Vec<f64> = (0..k).map(|i| if i < 1 + trial % 3 { 0.0 } else { 1e-3 + rng.uniform().abs() }).collect();
                with_spectrum(&l, &mut rng)
            };
            for scale in [1.0, 1e-150, 1e150] {
                let a: Vec<f64> = a.iter().map(|x| x * scale).collect();
                assert!(psd_within_tolerance(&a, k, 0.0), "k = {k}, trial {trial}, scale {scale}");
                let mut p = a.clone();
                assert!(!project_psd_with(&mut p, k, 0.0, &mut work), "k = {k}, trial {trial}");
                assert_eq!(p, a);
                let mut p = a.clone();
                assert!(!project_psd(&mut p, k, 0.0));
                assert_eq!(p, a);
            }
        }
    }
}

#[test]
fn blocks_with_a_clearly_negative_eigenvalue_fail() {
    let mut rng = Lcg(11);
    for &k in &SIZES {
        for trial in 0..40 {
            let neg = [-1.0, -1e-3, -1e-6, -1e-9][trial % 4];
            let a = if trial % 2 == 0 && k >= 6 {
                let mut w: Vec<f64> = (0..k - 4).map(|_| 0.1 + rng.uniform().abs()).collect();
                w.push(neg);
                element_like(k, &w, &mut rng)
            } else {
                let l: Vec<f64> = (0..k).map(|i| if i == 0 { neg } else if i < 3 { 0.0 } else { 0.5 + rng.uniform() }).collect();
                with_spectrum(&l, &mut rng)
            };
            let lmin = sym_eigen(&a, k).values[0];
            assert!(lmin < -1e-12, "construction: λmin = {lmin}");
            assert!(!psd_within_tolerance(&a, k, 0.0), "k = {k}, trial {trial}: λmin = {lmin}");
            let mut p = a.clone();
            assert!(project_psd(&mut p, k, 0.0), "k = {k}, trial {trial}");
        }
    }
    // Zero diagonal with a non-zero off-diagonal pair, and a shift above a PD block's spectrum.
    let mut a = vec![0.0; 36];
    a[1] = 1e-3;
    a[6] = 1e-3;
    assert!(!psd_within_tolerance(&a, 6, 0.0));
    let pd = with_spectrum(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut rng);
    assert!(psd_within_tolerance(&pd, 6, 0.0));
    assert!(psd_within_tolerance(&pd, 6, 0.999));
    assert!(!psd_within_tolerance(&pd, 6, 1.001));
}

#[test]
fn non_finite_blocks_fail_the_test() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut a = vec![0.0; 9];
        a[0] = 1.0;
        a[4] = 1.0;
        a[8] = 1.0;
        a[5] = bad;
        assert!(!psd_within_tolerance(&a, 3, 0.0));
    }
    assert!(psd_within_tolerance(&[0.0; 36], 6, 0.0));
}

/// `project_psd_with` (which skips blocks passing the test) against the projection rebuilt
/// from the general decomposition, on PSD, near-PSD and indefinite blocks.
#[test]
fn projection_with_skip_matches_eigen_projection() {
    let mut rng = Lcg(23);
    let mut work = PsdWork::new();
    let mut skipped = 0;
    let mut total = 0;
    for &k in &SIZES {
        for trial in 0..60 {
            let a = match trial % 4 {
                0 => {
                    let w: Vec<f64> = (0..k.max(6) - 3).map(|_| 0.1 + rng.uniform().abs()).collect();
                    element_like(k, &w, &mut rng)
                }
                1 => {
                    let w: Vec<f64> = (0..k).map(|i| if i % 4 == 0 { -0.3 * rng.uniform().abs() } else { rng.uniform().abs() }).collect();
                    element_like(k, &w, &mut rng)
                }
                2 => {
                    // Tiny negative eigenvalues next to a null space: rounding-sized.
                    let l: Vec<f64> = (0..k).map(|i| match i { 0 => -1e-15, 1 => 0.0, _ => 1.0 + rng.uniform() }).collect();
                    with_spectrum(&l, &mut rng)
                }
                _ => {
                    let mut a = vec![0.0; k * k];
                    for i in 0..k {
                        for j in i..k {
                            let v = rng.uniform();
                            a[i * k + j] = v;
                            a[j * k + i] = v;
                        }
                    }
                    a
                }
            };
            let want = eigen_projection(&a, k);
            let mut got = a.clone();
            let changed = project_psd_with(&mut got, k, 0.0, &mut work);
            total += 1;
            skipped += usize::from(!changed);
            let scale = frob(&a);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-10 * scale, "k = {k}, trial {trial}: {g} vs {w}");
            }
            // A projected block is exactly symmetric; a skipped one is the input.
            for i in 0..k {
                for j in 0..k {
                    if changed {
                        assert_eq!(got[i * k + j].to_bits(), got[j * k + i].to_bits());
                    } else {
                        assert_eq!(got[i * k + j].to_bits(), a[i * k + j].to_bits());
                    }
                }
            }
        }
    }
    assert!(skipped > 0 && skipped < total, "{skipped} of {total} skipped");
}

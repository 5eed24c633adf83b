//! The symmetric eigensolver and the PSD projection, checked by reconstruction and properties.

use mad_runtime::linalg::sym_eigen::{PsdWork, project_psd, project_psd_with, sym_eigen};

use crate::blocks_common;
use blocks_common::*;

#[test]
fn reconstruction_orthogonality_and_order() {
    let mut rng = Lcg(1);
    for k in [1usize, 2, 3, 6, 9, 12, 20, 30] {
        for _ in 0..5 {
            let a = random_sym(k, &mut rng);
            let e = sym_eigen(&a, k);
            assert!(e.values.windows(2).all(|w| w[0] <= w[1]));
            let v = &e.vectors;
            let mut err = 0.0f64;
            let mut orth = 0.0f64;
            for i in 0..k {
                for j in 0..k {
                    let r: f64 = (0..k)
                        .map(|m| v[i * k + m] * e.values[m] * v[j * k + m])
                        .sum();
                    err = err.max((r - a[i * k + j]).abs());
                    let d: f64 = (0..k).map(|m| v[m * k + i] * v[m * k + j]).sum();
                    orth = orth.max((d - if i == j { 1.0 } else { 0.0 }).abs());
                }
            }
            assert!(
                err <= 1e-13 * frob(&a).max(1.0),
                "k={k} reconstruction {err}"
            );
            assert!(orth <= 1e-13, "k={k} orthogonality {orth}");
            let trace: f64 = (0..k).map(|i| a[i * k + i]).sum();
            assert!((trace - e.values.iter().sum::<f64>()).abs() <= 1e-12 * k as f64);
        }
    }
}

#[test]
fn known_spectra_including_repeated_and_zero_eigenvalues() {
    let mut rng = Lcg(7);
    let spectra: Vec<Vec<f64>> = vec![
        vec![-2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 5.0, 1e-8, 3.0],
        vec![
            1e6, -1e-6, 2.5, 2.5, -7.0, 0.0, 0.0, 0.0, 9.0, 4.0, 4.0, -1.0,
        ],
        vec![0.0; 6],
    ];
    for l in spectra {
        let k = l.len();
        let a = with_spectrum(&l, &mut rng);
        let e = sym_eigen(&a, k);
        let mut want = l.clone();
        want.sort_by(f64::total_cmp);
        let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for (g, w) in e.values.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * scale, "{g} vs {w}");
        }
    }
    // Diagonal input: exact.
    let e = sym_eigen(&[3.0, 0.0, 0.0, -1.0], 2);
    assert_eq!(e.values, vec![-1.0, 3.0]);
}

#[test]
fn projection_clamps_eigenvalues_and_leaves_pd_blocks_alone() {
    let mut rng = Lcg(3);
    for k in [2usize, 6, 9, 12, 17] {
        let l: Vec<f64> = (0..k)
            .map(|i| {
                if i % 3 == 0 {
                    -1.0 - i as f64
                } else {
                    0.5 + i as f64
                }
            })
            .collect();
        let a = with_spectrum(&l, &mut rng);
        let mut p = a.clone();
        let eps = 1e-9;
        assert!(project_psd(&mut p, k, eps));
        for i in 0..k {
            for j in 0..k {
                assert_eq!(p[i * k + j], p[j * k + i]);
            }
        }
        let e = sym_eigen(&p, k);
        assert!(e.values.iter().all(|&x| x >= eps - 1e-12), "{:?}", e.values);
        // The clamp is the nearest such matrix: distance² = Σ (λ - max(λ, eps))².
        let d: Vec<f64> = a.iter().zip(&p).map(|(x, y)| x - y).collect();
        let want: f64 = l
            .iter()
            .map(|&x| (x - x.max(eps)).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((frob(&d) - want).abs() <= 1e-10 * want.max(1.0));
        // Positive eigenvalues are kept.
        let mut kept: Vec<f64> = l.iter().map(|&x| x.max(eps)).collect();
        kept.sort_by(f64::total_cmp);
        for (g, w) in e.values.iter().zip(&kept) {
            assert!((g - w).abs() <= 1e-11 * (1.0 + w.abs()));
        }
        // Projecting again changes nothing beyond rounding, and a PD block is left bit-identical.
        let pd = with_spectrum(
            &(0..k).map(|i| 1.0 + i as f64).collect::<Vec<_>>(),
            &mut rng,
        );
        let mut q = pd.clone();
        assert!(!project_psd(&mut q, k, eps));
        assert_eq!(q, pd);
    }
}

#[test]
fn non_finite_input_terminates() {
    let e = sym_eigen(&[f64::NAN, 1.0, 1.0, 2.0], 2);
    assert_eq!(e.values.len(), 2);
}

/// One reused workspace across block sizes (6, 9, 12, 6 again) gives the bits
/// of the allocating projection, and the projected blocks have eigenvalues ≥ 0.
#[test]
fn projection_with_reused_workspace_matches_allocating_projection() {
    let mut rng = Lcg(77);
    let mut work = PsdWork::new();
    for &k in &[6usize, 9, 12, 6, 9, 3] {
        for _ in 0..20 {
            let a = random_sym(k, &mut rng);
            let (mut p1, mut p2) = (a.clone(), a.clone());
            let c1 = project_psd(&mut p1, k, 0.0);
            let c2 = project_psd_with(&mut p2, k, 0.0, &mut work);
            assert_eq!(c1, c2);
            assert_eq!(
                p1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                p2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            let lmin = sym_eigen(&p2, k).values[0];
            assert!(lmin >= -1e-12 * frob(&a), "k = {k}: λmin = {lmin}");
        }
    }
}

/// The fixed-size projection (k = 3, 6, 9, 12) against V·max(Λ, 0)·Vᵀ from the general
/// decomposition, on blocks with a two-dimensional null space and negative eigenvalues.
#[test]
fn fixed_size_projection_matches_reconstruction_from_general_decomposition() {
    let mut rng = Lcg(91);
    for &k in &[3usize, 6, 9, 12] {
        for trial in 0..30 {
            let a = if trial % 2 == 0 {
                random_sym(k, &mut rng)
            } else {
                let l: Vec<f64> = (0..k)
                    .map(|i| if i < 2 { 0.0 } else { 10.0 * rng.uniform() })
                    .collect();
                with_spectrum(&l, &mut rng)
            };
            let e = sym_eigen(&a, k);
            let mut want = vec![0.0; k * k];
            for i in 0..k {
                for j in 0..k {
                    want[i * k + j] = (0..k)
                        .map(|c| e.vectors[i * k + c] * e.values[c].max(0.0) * e.vectors[j * k + c])
                        .sum();
                }
            }
            let mut got = a.clone();
            project_psd(&mut got, k, 0.0);
            let scale = frob(&a);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-12 * scale,
                    "k = {k}, trial {trial}: {g} vs {w}"
                );
            }
        }
    }
}

//! The tridiagonal-QL eigensolver against the cyclic-Jacobi decomposition and by its own
//! properties (reconstruction, orthogonality), on random, structured and badly scaled input.

use mad_runtime::linalg::sym_eigen::{PsdMethod, PsdWork, project_psd_by, project_psd_with, sym_eigen};
use mad_runtime::linalg::tridiag_ql::sym_eigen_ql;

use crate::blocks_common;
use blocks_common::*;

/// Reconstruction and orthogonality errors of a decomposition, relative to max|A| and 1.
fn check(a: &[f64], k: usize, what: &str) -> Vec<f64> {
    let e = sym_eigen_ql(a, k).unwrap_or_else(|| panic!("{what}: QL did not converge"));
    assert!(e.values.windows(2).all(|w| w[0] <= w[1]), "{what}: order");
    let v = &e.vectors;
    let scale = max_abs(a);
    for i in 0..k {
        for j in 0..k {
            let r: f64 = (0..k).map(|m| v[i * k + m] * e.values[m] * v[j * k + m]).sum();
            assert!((r - a[i * k + j]).abs() <= 1e-13 * k as f64 * scale, "{what}: reconstruction ({i},{j}) {r} vs {}", a[i * k + j]);
            let d: f64 = (0..k).map(|m| v[m * k + i] * v[m * k + j]).sum();
            assert!((d - if i == j { 1.0 } else { 0.0 }).abs() <= 1e-13 * k as f64, "{what}: orthogonality {d}");
        }
    }
    // Jacobi on the matrix scaled by a power of two near 1/max|A| (exact), scaled back:
    // cyclic Jacobi's convergence test squares entries, which under/overflows at extreme scales.
    let p = if scale > 0.0 { 2f64.powi(-scale.log2().floor() as i32) } else { 1.0 };
    let unit: Vec<f64> = a.iter().map(|x| x * p).collect();
    let jac: Vec<f64> = sym_eigen(&unit, k).values.iter().map(|x| x / p).collect();
    for (q, j) in e.values.iter().zip(&jac) {
        assert!((q - j).abs() <= 1e-13 * k as f64 * scale, "{what}: eigenvalue {q} vs Jacobi {j}");
    }
    e.values
}

#[test]
fn random_matrices_match_jacobi() {
    let mut rng = Lcg(3);
    for k in [1usize, 2, 3, 6, 9, 12, 21, 30] {
        for t in 0..10 {
            check(&random_sym(k, &mut rng), k, &format!("random k = {k}, trial {t}"));
        }
    }
}

#[test]
fn repeated_zero_and_diagonal_spectra() {
    let mut rng = Lcg(9);
    let spectra: Vec<Vec<f64>> = vec![
        vec![-2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 5.0, 1e-8, 3.0],
        vec![1e6, -1e-6, 2.5, 2.5, -7.0, 0.0, 0.0, 0.0, 9.0, 4.0, 4.0, -1.0],
        vec![1.0; 6],
        vec![0.0, 0.0, 0.0, 2.0, 2.0, 2.0],
    ];
    for l in spectra {
        let k = l.len();
        let got = check(&with_spectrum(&l, &mut rng), k, &format!("{l:?}"));
        let mut want = l.clone();
        want.sort_by(f64::total_cmp);
        let scale = max_abs(&want);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * scale, "{g} vs {w}");
        }
    }
    // Zero matrix: zero eigenvalues, identity-like orthonormal vectors.
    assert_eq!(check(&[0.0; 36], 6, "zero"), vec![0.0; 6]);
    // Diagonal matrices: the diagonal, exactly.
    let diag = [3.0, -1.0, 0.0, 7.5, -1.0, 2.0];
    let mut a = vec![0.0; 36];
    for (i, d) in diag.iter().enumerate() {
        a[i * 6 + i] = *d;
    }
    let mut want = diag.to_vec();
    want.sort_by(f64::total_cmp);
    assert_eq!(check(&a, 6, "diagonal"), want);
}

#[test]
fn huge_and_tiny_scales() {
    let mut rng = Lcg(17);
    for scale in [1e-300, 1e-160, 1e160, 1e300] {
        for k in [6usize, 9, 12] {
            let a: Vec<f64> = random_sym(k, &mut rng).iter().map(|x| x * scale).collect();
            check(&a, k, &format!("k = {k}, scale {scale:e}"));
            // The projection agrees with Jacobi's on the unscaled matrix, scaled (the
            // projection onto the PSD cone is positively homogeneous).
            let mut p = a.clone();
            let mut work = PsdWork::new();
            project_psd_with(&mut p, k, 0.0, &mut work);
            let mut q: Vec<f64> = a.iter().map(|x| x / scale).collect();
            project_psd_by(&mut q, k, 0.0, &mut work, PsdMethod::Jacobi);
            let m = max_abs(&a);
            for (x, y) in p.iter().zip(&q) {
                let y = y * scale;
                assert!((x - y).abs() <= 1e-12 * m, "k = {k}, scale {scale:e}: {x} vs {y}");
                assert!(x.is_finite());
            }
        }
    }
    // Entries spanning many orders of magnitude.
    let mut a = vec![0.0; 9];
    a[0] = 1e200;
    a[4] = 1.0;
    a[8] = -1e-200;
    a[1] = 1e-5;
    a[3] = 1e-5;
    check(&a, 3, "graded");
}

/// Non-finite input: the decomposition reports failure, the projection leaves the block as it
/// is (reported unchanged), and neither hangs.
#[test]
fn non_finite_input() {
    let mut rng = Lcg(29);
    let mut work = PsdWork::new();
    for k in [3usize, 6, 9, 12, 21] {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut a = random_sym(k, &mut rng);
            a[k + 2.min(k - 1)] = bad;
            assert!(sym_eigen_ql(&a, k).is_none());
            let mut p = a.clone();
            assert!(!project_psd_with(&mut p, k, 0.0, &mut work));
            assert_eq!(p.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
    }
}

/// The three projection methods agree on random indefinite blocks (k = 6, 9, 12 use the
/// fixed-size paths, 21 the general one).
#[test]
fn projection_methods_agree() {
    let mut rng = Lcg(41);
    let mut work = PsdWork::new();
    for k in [3usize, 6, 9, 12, 21] {
        for _ in 0..30 {
            let a = random_sym(k, &mut rng);
            let m = max_abs(&a);
            let mut outs = Vec::new();
            for method in [PsdMethod::Default, PsdMethod::SkipThenJacobi, PsdMethod::Jacobi] {
                let mut p = a.clone();
                project_psd_by(&mut p, k, 0.0, &mut work, method);
                outs.push(p);
            }
            for o in &outs[1..] {
                for (x, y) in outs[0].iter().zip(o) {
                    assert!((x - y).abs() <= 1e-12 * m * k as f64, "k = {k}: {x} vs {y}");
                }
            }
        }
    }
}

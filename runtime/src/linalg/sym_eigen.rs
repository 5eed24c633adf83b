//! Eigen-decomposition of small dense symmetric matrices (cyclic Jacobi) and the projection of
//! an element Hessian onto the positive semi-definite cone that projected Newton needs.
//!
//! Cyclic Jacobi is robust and accurate to a few ulps for the block sizes of mesh stencils
//! (k = 6 for an edge of 3-vectors, 9 for a face, 12 for a diamond, more for a ring); it costs
//! O(k³) per sweep and converges quadratically, usually within 6–10 sweeps.

/// Eigenvalues (ascending) and eigenvectors of a symmetric k×k matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct SymEigen {
    pub k: usize,
    /// Eigenvalues in ascending order.
    pub values: Vec<f64>,
    /// Eigenvectors as the columns of a k×k row-major matrix: vector j is `vectors[i*k + j]`, i = 0..k.
    pub vectors: Vec<f64>,
}

const MAX_SWEEPS: usize = 100;

/// Decomposes the symmetric part `(A + Aᵀ)/2` of a k×k row-major matrix: A = V diag(λ) Vᵀ.
///
/// # Panics
/// If `a.len() != k*k` (a programming error).
pub fn sym_eigen(a: &[f64], k: usize) -> SymEigen {
    assert_eq!(a.len(), k * k, "sym_eigen: matrix size");
    let mut m: Vec<f64> = (0..k * k)
        .map(|i| 0.5 * (a[i] + a[(i % k) * k + i / k]))
        .collect();
    let mut v = vec![0.0; k * k];
    for i in 0..k {
        v[i * k + i] = 1.0;
    }
    for sweep in 0..MAX_SWEEPS {
        let off: f64 = (0..k)
            .flat_map(|p| ((p + 1)..k).map(move |q| (p, q)))
            .map(|(p, q)| m[p * k + q] * m[p * k + q])
            .sum();
        let diag: f64 = (0..k).map(|p| m[p * k + p] * m[p * k + p]).sum();
        let converged = off == 0.0 || off <= 1e-34 * diag;
        if converged || !off.is_finite() || !diag.is_finite() {
            // Converged (or non-finite input: no amount of sweeping helps).
            break;
        }
        for p in 0..k {
            for q in (p + 1)..k {
                let apq = m[p * k + q];
                if apq == 0.0 {
                    continue;
                }
                let (app, aqq) = (m[p * k + p], m[q * k + q]);
                // An off-diagonal entry below the diagonal's rounding is dropped (Numerical Recipes).
                let g = 100.0 * apq.abs();
                if sweep > 3 && app.abs() + g == app.abs() && aqq.abs() + g == aqq.abs() {
                    m[p * k + q] = 0.0;
                    m[q * k + p] = 0.0;
                    continue;
                }
                let theta = (aqq - app) / (2.0 * apq);
                let t = if theta.abs() > 1e150 {
                    0.5 / theta
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                // M ← Jᵀ M J with J the rotation in the (p, q) plane.
                for r in 0..k {
                    let (mrp, mrq) = (m[r * k + p], m[r * k + q]);
                    m[r * k + p] = c * mrp - s * mrq;
                    m[r * k + q] = s * mrp + c * mrq;
                }
                for r in 0..k {
                    let (mpr, mqr) = (m[p * k + r], m[q * k + r]);
                    m[p * k + r] = c * mpr - s * mqr;
                    m[q * k + r] = s * mpr + c * mqr;
                }
                m[p * k + q] = 0.0;
                m[q * k + p] = 0.0;
                for r in 0..k {
                    let (vrp, vrq) = (v[r * k + p], v[r * k + q]);
                    v[r * k + p] = c * vrp - s * vrq;
                    v[r * k + q] = s * vrp + c * vrq;
                }
            }
        }
    }
    let mut idx: Vec<usize> = (0..k).collect();
    idx.sort_by(|&x, &y| m[x * k + x].total_cmp(&m[y * k + y]));
    let values = idx.iter().map(|&j| m[j * k + j]).collect();
    let mut vectors = vec![0.0; k * k];
    for (new_j, &j) in idx.iter().enumerate() {
        for i in 0..k {
            vectors[i * k + new_j] = v[i * k + j];
        }
    }
    SymEigen { k, values, vectors }
}

/// Projects a symmetric k×k row-major block onto the matrices whose eigenvalues are all ≥ `eps`
/// (TinyAD's `project_positive_definite` convention: λ ← max(λ, eps)). A block whose smallest
/// eigenvalue is already ≥ `eps` is left bit-for-bit unchanged. Returns whether it was changed.
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd(block: &mut [f64], k: usize, eps: f64) -> bool {
    let e = sym_eigen(block, k);
    if e.values.iter().all(|&l| l >= eps) {
        return false;
    }
    let lam: Vec<f64> = e.values.iter().map(|&l| l.max(eps)).collect();
    for i in 0..k {
        for j in i..k {
            let s: f64 = (0..k)
                .map(|m| e.vectors[i * k + m] * lam[m] * e.vectors[j * k + m])
                .sum();
            block[i * k + j] = s;
            block[j * k + i] = s;
        }
    }
    true
}

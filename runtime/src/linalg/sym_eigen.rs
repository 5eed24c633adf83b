//! Eigen-decomposition of small dense symmetric matrices (cyclic Jacobi) and the projection of
//! an element Hessian onto the positive semi-definite cone that projected Newton needs.
//!
//! Cyclic Jacobi is robust and accurate to a few ulps for the block sizes of mesh stencils
//! (k = 6 for an edge of 3-vectors, 9 for a face, 12 for a diamond, more for a ring); it costs
//! O(k³) per sweep and converges quadratically, usually within 6–10 sweeps. It is the general
//! decomposition ([`sym_eigen`]) and the projection's fallback.
//!
//! The projection first asks the pivoted-LDLᵀ test of [`super::psd_test`] whether the block is
//! already PSD up to rounding (most element Hessians are, apart from their null space) and
//! leaves such blocks alone; the others are decomposed by the Householder + implicit QL solver
//! of [`super::tridiag_ql`], 1.5–3× faster than Jacobi for k = 6–12 (`docs/benchmarks.md`).

// Index loops are the natural form of these small matrix computations.
#![allow(clippy::needless_range_loop)]

/// Eigenvalues (ascending) and eigenvectors of a symmetric k×k matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct SymEigen {
    pub k: usize,
    /// Eigenvalues in ascending order.
    pub values: Vec<f64>,
    /// Eigenvectors as the columns of a k×k row-major matrix: vector j is `vectors[i*k + j]`, i = 0..k.
    pub vectors: Vec<f64>,
}

use super::psd_test::psd_check;
use super::tridiag_ql::{tridiag_ql, unit_scale};

const MAX_SWEEPS: usize = 100;

/// Reusable scratch space for [`project_psd_with`] (and [`sym_eigen`]): sized on first use for
/// the largest k seen, so repeated projections of same-size blocks allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct PsdWork {
    m: Vec<f64>,
    v: Vec<f64>,
    idx: Vec<usize>,
    lam: Vec<f64>,
    e: Vec<f64>,
}

impl PsdWork {
    pub fn new() -> PsdWork {
        PsdWork::default()
    }

    fn fit(&mut self, k: usize) {
        if self.m.len() < k * k {
            self.m.resize(k * k, 0.0);
            self.v.resize(k * k, 0.0);
        }
        if self.idx.len() < k {
            self.idx.resize(k, 0);
            self.lam.resize(k, 0.0);
            self.e.resize(k, 0.0);
        }
    }
}

/// Cyclic Jacobi on the symmetric part of `a` (k×k row-major) into `w`: afterwards `w.m` is
/// diagonal (the eigenvalues), the columns of `w.v` are the eigenvectors, and `w.idx[..k]`
/// lists the columns by ascending eigenvalue.
fn jacobi(a: &[f64], k: usize, w: &mut PsdWork) {
    w.fit(k);
    let (m, v) = (&mut w.m[..k * k], &mut w.v[..k * k]);
    for i in 0..k * k {
        m[i] = 0.5 * (a[i] + a[(i % k) * k + i / k]);
        v[i] = 0.0;
    }
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
                let (c, s, _) = jacobi_rotation(app, aqq, apq);
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
    let idx = &mut w.idx[..k];
    for (i, j) in idx.iter_mut().enumerate() {
        *j = i;
    }
    // Stable insertion sort (k is small): no allocation.
    for i in 1..k {
        let mut j = i;
        while j > 0
            && m[idx[j - 1] * k + idx[j - 1]]
                .total_cmp(&m[idx[j] * k + idx[j]])
                .is_gt()
        {
            idx.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Decomposes the symmetric part `(A + Aᵀ)/2` of a k×k row-major matrix: A = V diag(λ) Vᵀ.
///
/// # Panics
/// If `a.len() != k*k` (a programming error).
pub fn sym_eigen(a: &[f64], k: usize) -> SymEigen {
    assert_eq!(a.len(), k * k, "sym_eigen: matrix size");
    let mut w = PsdWork::new();
    jacobi(a, k, &mut w);
    let values = w.idx[..k].iter().map(|&j| w.m[j * k + j]).collect();
    let mut vectors = vec![0.0; k * k];
    for (new_j, &j) in w.idx[..k].iter().enumerate() {
        for i in 0..k {
            vectors[i * k + new_j] = w.v[i * k + j];
        }
    }
    SymEigen { k, values, vectors }
}

/// Projects a symmetric k×k row-major block onto the matrices whose eigenvalues are all ≥ `eps`
/// (TinyAD's `project_positive_definite` convention: λ ← max(λ, eps)). A block that is already
/// there — `A − eps·I` positive semi-definite up to rounding by the pivoted-LDLᵀ test of
/// [`super::psd_test::psd_within_tolerance`], or every computed eigenvalue ≥ `eps` — is left
/// bit-for-bit unchanged (its projection would differ from it by at most k²·64·ε·max|A_ii − eps|
/// in the 2-norm). Returns whether it was changed.
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd(block: &mut [f64], k: usize, eps: f64) -> bool {
    project_psd_with(block, k, eps, &mut PsdWork::new())
}

/// [`project_psd`] with caller-provided scratch space: allocation-free once `work` has seen a
/// block of this size; same results bit for bit.
///
/// Blocks that pass the PSD test are left as they are; the others are decomposed by
/// Householder tridiagonalization + implicit QL (falling back to cyclic Jacobi if QL does not
/// converge) and rebuilt as `A − Σ_{λ<eps} (λ − eps)·v·vᵀ` from the symmetric part A. A block
/// with a non-finite entry is left as it is and reported unchanged (the NaN or ∞ then shows in
/// the assembled matrix).
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd_with(block: &mut [f64], k: usize, eps: f64, work: &mut PsdWork) -> bool {
    project_psd_by(block, k, eps, work, PsdMethod::Default)
}

/// How [`project_psd_by`] decomposes a block that needs projection (for comparisons and
/// benchmarks; [`project_psd_with`] uses [`PsdMethod::Default`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsdMethod {
    /// The PSD test, then tridiagonal QL (Jacobi if QL does not converge).
    Default,
    /// The PSD test, then cyclic Jacobi.
    SkipThenJacobi,
    /// Cyclic Jacobi on every block (no PSD test): the projection before the test existed.
    Jacobi,
}

/// [`project_psd_with`] with an explicit decomposition method.
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd_by(block: &mut [f64], k: usize, eps: f64, work: &mut PsdWork, method: PsdMethod) -> bool {
    assert_eq!(block.len(), k * k, "project_psd: matrix size");
    // A zero block (a term switched off on this element) is its own clamp at 0.
    if eps == 0.0 && block.iter().all(|&x| x == 0.0) {
        return false;
    }
    match k {
        3 => return project_fixed::<3>(block, eps, method),
        6 => return project_fixed::<6>(block, eps, method),
        9 => return project_fixed::<9>(block, eps, method),
        12 => return project_fixed::<12>(block, eps, method),
        _ => {}
    }
    work.fit(k);
    if method != PsdMethod::Jacobi {
        if psd_check(block, k, eps, &mut work.m) || block.iter().any(|x| !x.is_finite()) {
            return false;
        }
        if method == PsdMethod::Default {
            let PsdWork { m, lam, e, .. } = work;
            if let Some(changed) = project_ql(block, k, eps, m, lam, e) {
                return changed;
            }
        }
    }
    jacobi(block, k, work);
    let PsdWork { m, v, idx, lam, .. } = work;
    if idx[..k].iter().all(|&j| m[j * k + j] >= eps) {
        return false;
    }
    for (l, &j) in lam[..k].iter_mut().zip(&idx[..k]) {
        *l = m[j * k + j].max(eps);
    }
    for i in 0..k {
        for j in i..k {
            let s: f64 = (0..k)
                .map(|c| v[i * k + idx[c]] * lam[c] * v[j * k + idx[c]])
                .sum();
            block[i * k + j] = s;
            block[j * k + i] = s;
        }
    }
    true
}

/// The projection of a finite block by tridiagonal QL on scratch `v` (k·k), `d`, `e` (k):
/// `Some(changed)`, or `None` if QL did not converge (the block is then untouched).
#[inline(always)]
fn project_ql(block: &mut [f64], k: usize, eps: f64, v: &mut [f64], d: &mut [f64], e: &mut [f64]) -> Option<bool> {
    let amax = block[..k * k].iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let s = if amax > 0.0 { unit_scale(amax) } else { 1.0 };
    for i in 0..k {
        for j in 0..=i {
            v[i * k + j] = 0.5 * (block[i * k + j] + block[j * k + i]) * s;
        }
    }
    if !tridiag_ql(v, d, e, k) {
        return None;
    }
    // The eigenvalues below eps, unscaled (s is a power of two: exact), and their columns.
    let mut any = false;
    for dc in d[..k].iter_mut() {
        *dc /= s;
        any |= *dc < eps;
    }
    if !any {
        return Some(false);
    }
    for i in 0..k {
        for j in i..k {
            let mut acc = 0.5 * (block[i * k + j] + block[j * k + i]);
            for c in 0..k {
                if d[c] < eps {
                    acc -= (d[c] - eps) * v[c * k + i] * v[c * k + j];
                }
            }
            block[i * k + j] = acc;
            block[j * k + i] = acc;
        }
    }
    Some(true)
}

/// [`project_psd_with`] for a compile-time block size (the stencil sizes 3, 6, 9, 12): the
/// cyclic Jacobi of [`jacobi`] on stack arrays, with each rotation applied once to the
/// symmetric storage and the pivot entries updated in closed form (app − t·apq, aqq + t·apq),
/// about half the work of the general path's two full passes.
fn project_fixed<const K: usize>(block: &mut [f64], eps: f64, method: PsdMethod) -> bool {
    let mut m = [[0.0f64; K]; K];
    if method != PsdMethod::Jacobi {
        if psd_check(block, K, eps, m.as_flattened_mut()) || block.iter().any(|x| !x.is_finite()) {
            return false;
        }
        if method == PsdMethod::Default {
            let (mut d, mut e) = ([0.0f64; K], [0.0f64; K]);
            if let Some(changed) = project_ql(block, K, eps, m.as_flattened_mut(), &mut d, &mut e) {
                return changed;
            }
        }
    }
    let mut v = [[0.0f64; K]; K];
    for i in 0..K {
        for j in 0..K {
            m[i][j] = 0.5 * (block[i * K + j] + block[j * K + i]);
        }
        v[i][i] = 1.0;
    }
    for sweep in 0..MAX_SWEEPS {
        let mut off = -0.0;
        for p in 0..K {
            for q in (p + 1)..K {
                off += m[p][q] * m[p][q];
            }
        }
        let mut diag = -0.0;
        for p in 0..K {
            diag += m[p][p] * m[p][p];
        }
        let converged = off == 0.0 || off <= 1e-34 * diag;
        if converged || !off.is_finite() || !diag.is_finite() {
            break;
        }
        for p in 0..K {
            for q in (p + 1)..K {
                let apq = m[p][q];
                if apq == 0.0 {
                    continue;
                }
                let (app, aqq) = (m[p][p], m[q][q]);
                let g = 100.0 * apq.abs();
                if sweep > 3 && app.abs() + g == app.abs() && aqq.abs() + g == aqq.abs() {
                    m[p][q] = 0.0;
                    m[q][p] = 0.0;
                    continue;
                }
                let (c, s, t) = jacobi_rotation(app, aqq, apq);
                // M ← Jᵀ M J on the symmetric storage: rows/columns p and q
                // outside the (p, q) pair once each, the pivot pair directly.
                for r in 0..K {
                    if r == p || r == q {
                        continue;
                    }
                    let (mrp, mrq) = (m[r][p], m[r][q]);
                    let (np, nq) = (c * mrp - s * mrq, s * mrp + c * mrq);
                    m[r][p] = np;
                    m[p][r] = np;
                    m[r][q] = nq;
                    m[q][r] = nq;
                }
                m[p][p] = app - t * apq;
                m[q][q] = aqq + t * apq;
                m[p][q] = 0.0;
                m[q][p] = 0.0;
                for row in v.iter_mut() {
                    let (vrp, vrq) = (row[p], row[q]);
                    row[p] = c * vrp - s * vrq;
                    row[q] = s * vrp + c * vrq;
                }
            }
        }
    }
    let mut idx = [0usize; K];
    for (i, j) in idx.iter_mut().enumerate() {
        *j = i;
    }
    for i in 1..K {
        let mut j = i;
        while j > 0
            && m[idx[j - 1]][idx[j - 1]]
                .total_cmp(&m[idx[j]][idx[j]])
                .is_gt()
        {
            idx.swap(j - 1, j);
            j -= 1;
        }
    }
    if idx.iter().all(|&j| m[j][j] >= eps) {
        return false;
    }
    let mut lam = [0.0f64; K];
    for (l, &j) in lam.iter_mut().zip(&idx) {
        *l = m[j][j].max(eps);
    }
    for i in 0..K {
        for j in i..K {
            let mut s = -0.0;
            for c in 0..K {
                s += v[i][idx[c]] * lam[c] * v[j][idx[c]];
            }
            block[i * K + j] = s;
            block[j * K + i] = s;
        }
    }
    true
}

/// The cosine, sine and tangent of the Jacobi rotation that zeroes `apq` in the (p, q)
/// plane of a symmetric matrix with diagonal entries `app`, `aqq` (the smaller
/// angle; Numerical Recipes' form, safe for a huge `theta`).
#[inline]
fn jacobi_rotation(app: f64, aqq: f64, apq: f64) -> (f64, f64, f64) {
    let theta = (aqq - app) / (2.0 * apq);
    let t = if theta.abs() > 1e150 {
        0.5 / theta
    } else {
        theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
    };
    let c = 1.0 / (t * t + 1.0).sqrt();
    (c, t * c, t)
}

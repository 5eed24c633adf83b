//! A cheap test whether a small symmetric matrix is positive semi-definite up to rounding, so
//! that the PSD projection of projected Newton can skip the eigen-decomposition of element
//! Hessians that need no projection.
//!
//! Element Hessians of mesh energies usually have an exact null space (the translations), so a
//! plain Cholesky factorization breaks down on blocks that are PSD. The test is a
//! rank-revealing LDLᵀ with symmetric (diagonal) pivoting: at each step the largest remaining
//! diagonal entry is the pivot; once it is ≤ `tol`, the factorization stops and the whole
//! remaining Schur complement must be within `tol` of zero.
//!
//! Why that bounds the error of skipping: if the r eliminated pivots are > 0 and the Schur
//! complement S has all entries within `tol` of zero, then (Haynsworth inertia, and
//! `yᵀSy = min_x [x;y]ᵀA[x;y]`) the smallest eigenvalue of A is ≥ λ_min(S) ≥ −(k−r)·tol,
//! up to the rounding of the elimination. The projection `λ ← max(λ, 0)` of such a block would
//! therefore move it by at most (k−r)·tol in the 2-norm, which is what leaving it unchanged
//! costs. A diagonal entry of the Schur complement never grows during elimination, so one
//! below −tol ends the test early.
//!
//! The tolerance is `PSD_TOL_FACTOR · k · ε · s` with s the largest |diagonal entry| of the
//! (shifted) block: the size of the rounding that forming the block and eliminating it leave in
//! an exact null space (pivoting keeps the multipliers ≤ 1 in magnitude). A block with a
//! non-finite entry never passes.

// The negated comparisons make NaN fail the test (a block with a NaN is never PSD).
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// Multiple of `k · ε · max|A_ii|` used as the tolerance of [`psd_within_tolerance`].
pub const PSD_TOL_FACTOR: f64 = 64.0;

/// The tolerance of [`psd_within_tolerance`] for a k×k block whose largest |diagonal entry|
/// (after the shift) is `scale`.
pub fn psd_tolerance(k: usize, scale: f64) -> f64 {
    PSD_TOL_FACTOR * k as f64 * f64::EPSILON * scale
}

/// Whether the symmetric part of `a − shift·I` (k×k row-major) is positive semi-definite up to
/// [`psd_tolerance`]: a block that passes has no eigenvalue below `shift − k·tol` (see the
/// module docs). Allocation-free for k ≤ 16 (stack scratch); larger blocks allocate.
///
/// # Panics
/// If `a.len() != k*k` (a programming error).
pub fn psd_within_tolerance(a: &[f64], k: usize, shift: f64) -> bool {
    assert_eq!(a.len(), k * k, "psd_within_tolerance: matrix size");
    if k <= 16 {
        let mut m = [0.0f64; 256];
        psd_check(a, k, shift, &mut m[..k * k])
    } else {
        psd_check(a, k, shift, &mut vec![0.0; k * k])
    }
}

/// [`psd_within_tolerance`] on caller scratch: `m` (k·k values) receives the symmetric part of
/// `a − shift·I` and is overwritten by the elimination (rows and columns of each pivot are
/// swapped to the front, so the remaining Schur complement is the trailing block and the loops
/// have no data-dependent branches).
#[inline(always)]
pub(crate) fn psd_check(a: &[f64], k: usize, shift: f64, m: &mut [f64]) -> bool {
    let m = &mut m[..k * k];
    let mut scale = 0.0f64;
    for i in 0..k {
        for j in 0..k {
            let x = a[i * k + j];
            if !x.is_finite() {
                return false;
            }
            m[i * k + j] = 0.5 * (x + a[j * k + i]);
        }
        m[i * k + i] -= shift;
        scale = scale.max(m[i * k + i].abs());
    }
    if !scale.is_finite() {
        return false;
    }
    let tol = psd_tolerance(k, scale);
    for s in 0..k {
        // The largest remaining diagonal entry; one below −tol means not PSD.
        let mut p = s;
        let mut d = m[s * k + s];
        for i in s..k {
            let x = m[i * k + i];
            if !(x >= -tol) {
                return false;
            }
            if x > d {
                d = x;
                p = i;
            }
        }
        if !(d > tol) {
            // Rank found: the rest of the Schur complement must vanish within tol.
            for i in s..k {
                for j in (i + 1)..k {
                    if !(m[i * k + j].abs() <= tol) {
                        return false;
                    }
                }
            }
            return true;
        }
        if p != s {
            for j in 0..k {
                m.swap(s * k + j, p * k + j);
            }
            for i in 0..k {
                m.swap(i * k + s, i * k + p);
            }
        }
        let inv = 1.0 / d;
        let (head, tail) = m.split_at_mut((s + 1) * k);
        let prow = &head[s * k..];
        for row in tail.chunks_exact_mut(k) {
            let li = row[s] * inv;
            for j in (s + 1)..k {
                row[j] -= li * prow[j];
            }
        }
    }
    // Every pivot was > tol: positive definite.
    true
}

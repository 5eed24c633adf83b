//! Eigen-decomposition of a small dense symmetric matrix by Householder tridiagonalization and
//! the implicit QL algorithm with Wilkinson-type shifts (the EISPACK `tred2`/`tql2` pair, in
//! the form of the public-domain JAMA library), on caller-provided storage so the fixed-size
//! PSD projection runs it on stack arrays.
//!
//! Cost: about (4/3)k³ for the reduction and its accumulation, then ≈ 1.5 QL sweeps per
//! eigenvalue, each of O(k) rotations applied to k-vectors; against cyclic Jacobi it trades
//! ≈ 5 sweeps of k²/2 rotations (each a serial chain of divisions and square roots) for one
//! square root per QL rotation. The input is scaled by a power of two (exact) so that the
//! squares formed never overflow or underflow for any finite input; each eigenvalue gets at
//! most [`MAX_QL_ITERS`] QL iterations, and a non-finite value ends the iteration: the result
//! then says "not converged" and the caller falls back to Jacobi (or reports it).

// Index loops are the natural form of these matrix computations; the negated comparisons make
// NaN fail the tests.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

use super::sym_eigen::SymEigen;

/// Cap on the QL iterations spent on one eigenvalue (LAPACK allows 30 per eigenvalue on
/// average; convergence is cubic, 1–3 are typical).
pub const MAX_QL_ITERS: usize = 30;

/// `sqrt(a² + b²)` without overflow or destructive underflow of the squares.
#[inline(always)]
fn hypot(a: f64, b: f64) -> f64 {
    let (a, b) = (a.abs(), b.abs());
    let m = a.max(b);
    if m > 1e-150 && m < 1e150 {
        (a * a + b * b).sqrt()
    } else if m == 0.0 || !m.is_finite() {
        m
    } else {
        let (x, y) = (a / m, b / m);
        m * (x * x + y * y).sqrt()
    }
}

/// 2^e as an `f64`, for e in −1022..=1023 (exact).
#[inline(always)]
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e.clamp(-1022, 1023)) as u64) << 52)
}

/// The power of two that brings `amax` (> 0, finite) near 1.
#[inline(always)]
pub(crate) fn unit_scale(amax: f64) -> f64 {
    let e = ((amax.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    pow2(-e)
}

/// The symmetric part of the leading m×m block of `r` (N×N arrays, N ≥ m) scaled by the
/// power of two that brings its largest entry near 1, and that scale; `None` when the block is
/// zero or not finite.
#[inline(always)]
pub(crate) fn scaled_symmetric<const N: usize>(r: &[[f64; N]; N], m: usize) -> Option<([[f64; N]; N], f64)> {
    let mut rmax = 0.0f64;
    for row in &r[..m] {
        for x in &row[..m] {
            rmax = rmax.max(x.abs());
        }
    }
    if !(rmax > 0.0 && rmax.is_finite()) {
        return None;
    }
    let sc = unit_scale(rmax);
    let mut rs = [[0.0f64; N]; N];
    for i in 0..m {
        for j in 0..=i {
            let x = 0.5 * (r[i][j] + r[j][i]) * sc;
            rs[i][j] = x;
            rs[j][i] = x;
        }
    }
    Some((rs, sc))
}

/// The eigen-decomposition of the symmetric m×m block of `r` (N×N arrays) by [`tridiag_ql`]:
/// the eigenvalues and, in `w[j]`, the eigenvector of eigenvalue j; `None` if QL did not
/// converge.
#[inline(always)]
pub(crate) fn eigen_rows<const N: usize>(r: &[[f64; N]; N], m: usize) -> Option<([f64; N], [[f64; N]; N])> {
    let mut v_ = [[0.0f64; N]; N];
    let v = v_.as_flattened_mut();
    for i in 0..m {
        v[i * m..i * m + m].copy_from_slice(&r[i][..m]);
    }
    let (mut ev, mut e) = ([0.0f64; N], [0.0f64; N]);
    if !tridiag_ql(&mut v[..m * m], &mut ev[..m], &mut e[..m], m) {
        return None;
    }
    // The rows of v are the eigenvectors.
    let mut w = [[0.0f64; N]; N];
    for (j, wj) in w.iter_mut().enumerate().take(m) {
        wj[..m].copy_from_slice(&v[j * m..j * m + m]);
    }
    Some((ev, w))
}

/// Decomposes the symmetric n×n matrix in `v` (row-major; only its lower triangle is read):
/// afterwards the rows of `v` are orthonormal eigenvectors and `d[j]` the eigenvalue of
/// row j (unsorted). `e` is scratch of length n. Returns false (contents unspecified) if
/// some eigenvalue did not converge within [`MAX_QL_ITERS`] or the values are not finite.
///
/// The caller scales the matrix so its largest entry is near 1 (see [`unit_scale`]).
#[inline(always)]
pub(crate) fn tridiag_ql(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) -> bool {
    let (v, d, e) = (&mut v[..n * n], &mut d[..n], &mut e[..n]);
    if n == 0 {
        return true;
    }
    // --- tred2: Householder reduction to tridiagonal form, transformations accumulated. ---
    for j in 0..n {
        d[j] = v[(n - 1) * n + j];
    }
    for i in (1..n).rev() {
        let mut scale = 0.0;
        let mut h = 0.0;
        for kk in 0..i {
            scale += d[kk].abs();
        }
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
                v[j * n + i] = 0.0;
            }
        } else {
            for kk in 0..i {
                d[kk] /= scale;
                h += d[kk] * d[kk];
            }
            let mut f = d[i - 1];
            let mut g = h.sqrt();
            if f > 0.0 {
                g = -g;
            }
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for ej in e[..i].iter_mut() {
                *ej = 0.0;
            }
            for j in 0..i {
                f = d[j];
                v[j * n + i] = f;
                g = e[j] + v[j * n + j] * f;
                for kk in (j + 1)..i {
                    g += v[kk * n + j] * d[kk];
                    e[kk] += v[kk * n + j] * f;
                }
                e[j] = g;
            }
            f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                f = d[j];
                g = e[j];
                for kk in j..i {
                    v[kk * n + j] -= f * e[kk] + g * d[kk];
                }
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
            }
        }
        d[i] = h;
    }
    for i in 0..n - 1 {
        v[(n - 1) * n + i] = v[i * n + i];
        v[i * n + i] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for kk in 0..=i {
                d[kk] = v[kk * n + i + 1] / h;
            }
            for j in 0..=i {
                let mut g = 0.0;
                for kk in 0..=i {
                    g += v[kk * n + i + 1] * v[kk * n + j];
                }
                for kk in 0..=i {
                    v[kk * n + j] -= g * d[kk];
                }
            }
        }
        for kk in 0..=i {
            v[kk * n + i + 1] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[(n - 1) * n + j];
        v[(n - 1) * n + j] = 0.0;
    }
    v[(n - 1) * n + (n - 1)] = 1.0;
    e[0] = 0.0;

    // --- tql2: implicit QL on the tridiagonal matrix (d, e), rotations applied to v. ---
    // Transposed first, so each rotation combines two contiguous rows.
    for i in 0..n {
        for j in (i + 1)..n {
            v.swap(i * n + j, j * n + i);
        }
    }
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1 = 0.0f64;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        if !tst1.is_finite() {
            return false;
        }
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                if iter > MAX_QL_ITERS {
                    return false;
                }
                let mut g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = hypot(p, 1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let mut h = g - d[l];
                for di in d[(l + 2)..].iter_mut() {
                    *di -= h;
                }
                f += h;
                p = d[m];
                let mut c = 1.0;
                let mut c2 = c;
                let mut c3 = c;
                let el1 = e[l + 1];
                let mut s = 0.0;
                let mut s2 = 0.0;
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    g = c * e[i];
                    h = c * p;
                    r = hypot(p, e[i]);
                    e[i + 1] = s * r;
                    let rinv = 1.0 / r;
                    s = e[i] * rinv;
                    c = p * rinv;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    let (lo, hi) = v.split_at_mut((i + 1) * n);
                    let (vi, vi1) = (&mut lo[i * n..], &mut hi[..n]);
                    for (a, b) in vi.iter_mut().zip(vi1.iter_mut()) {
                        let h = *b;
                        *b = s * *a + c * h;
                        *a = c * *a - s * h;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if !(e[l].abs() > eps * tst1) {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
    d.iter().all(|x| x.is_finite())
}

/// Decomposes the symmetric part `(A + Aᵀ)/2` of a k×k row-major matrix by Householder
/// tridiagonalization and implicit QL: eigenvalues ascending, eigenvectors as columns, as
/// [`super::sym_eigen::sym_eigen`] (cyclic Jacobi) gives them. `None` if the input has a
/// non-finite entry or the iteration did not converge.
///
/// # Panics
/// If `a.len() != k*k` (a programming error).
pub fn sym_eigen_ql(a: &[f64], k: usize) -> Option<SymEigen> {
    assert_eq!(a.len(), k * k, "sym_eigen_ql: matrix size");
    if a.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let amax = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let s = if amax > 0.0 { unit_scale(amax) } else { 1.0 };
    let mut v: Vec<f64> = (0..k * k).map(|i| 0.5 * (a[i] + a[(i % k) * k + i / k]) * s).collect();
    let (mut d, mut e) = (vec![0.0; k], vec![0.0; k]);
    if !tridiag_ql(&mut v, &mut d, &mut e, k) {
        return None;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    idx.sort_by(|&x, &y| d[x].total_cmp(&d[y]));
    let values = idx.iter().map(|&j| d[j] / s).collect();
    let mut vectors = vec![0.0; k * k];
    for (nj, &j) in idx.iter().enumerate() {
        for i in 0..k {
            vectors[i * k + nj] = v[j * k + i];
        }
    }
    Some(SymEigen { k, values, vectors })
}

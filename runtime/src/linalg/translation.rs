//! PSD projection of element Hessians that have the exact translation null space, on the
//! reduced matrix of the complement.
//!
//! Most element energies depend only on differences of vertex positions. For a block over n
//! vertices with d components each, in vertex-major local order (index v·d + c), the d
//! translation vectors t_c = Σ_v e_{v·d+c} then satisfy H·t_c = 0. With Q the k×(n−1)d matrix
//! of Helmert contrasts per component — column (j, c) is
//! (e_{0,c} + … + e_{j,c} − (j+1)·e_{j+1,c}) / √((j+1)(j+2)) — the columns of Q and the
//! normalized t_c form an orthonormal basis, so H = Q R Qᵀ with R = QᵀHQ. The eigenvalues of
//! H are those of R plus d zeros, and the eigenvalue-clamped projection (λ ← max(λ, 0)) of H
//! is Q R₊ Qᵀ: the projection needs the decomposition of an (n−1)d × (n−1)d matrix only
//! (6 → 3 for a spring edge of 3-vectors, 6 → 4 for a face of 2-vectors, 9 → 6 for a face of
//! 3-vectors, 12 → 9 for a diamond). That is exact for the clamp at 0 only: a clamp at
//! eps > 0 moves the null-space eigenvalues too, and such calls take the full path.
//!
//! Q is applied in O(k²) by prefix sums (no k×k product). R is tested for PSD by the
//! pivoted-LDLᵀ test of [`super::psd_test`]; a block whose R passes is left unchanged, the
//! others are decomposed by tridiagonal QL ([`super::tridiag_ql`]) and updated as
//! `A − Σ_{λ<0} λ·(Q w)(Q w)ᵀ` (A the symmetric part, w the eigenvectors of R), which keeps
//! the null space of A. The d×d translation part T̂ᵀAT̂ of A (T̂ the normalized translations),
//! rounding noise of either sign, has its negative eigenvalues clamped too, as the full
//! decomposition clamps the computed null-space eigenvalues that come out negative, so a
//! projected block is PSD to rounding in every direction. (Without that clamp, a global
//! Hessian that is singular along the translations — a parameterization with no fixed
//! vertex — failed to factor without a diagonal shift from the first Newton iteration on.)
//! For k ≥ [`FULL_TEST_FIRST_K`] the PSD test runs on the full block first, as in
//! [`project_psd_with`], and only blocks that fail it are reduced: on blocks that pass, the
//! full test costs less than forming R.
//!
//! **When the reduction applies.** A block is taken as translation-invariant when every entry
//! of A·t_c is within [`translation_tolerance`] — `PSD_TOL_FACTOR · k · ε · max|A_ij|`, the
//! same multiple of the rounding as the PSD test's tolerance, scaled by the largest entry
//! rather than the largest diagonal (an indefinite block may have small diagonal entries): the
//! rounding that forming the n entries of a row of an exactly invariant Hessian and summing
//! them leaves. The error of the reduction is then bounded: with P = QQᵀ, A − PAP is of the
//! order of the residuals A·t_c (Frobenius norm ≤ 2·√(k·d/n)·tol), and since the projection
//! onto the PSD cone is 1-Lipschitz in the Frobenius norm, the result differs from the full
//! projection of A by at most 2·‖A − PAP‖_F. Blocks that fail the test, calls with eps ≠ 0,
//! a vertex count that does not divide k, fewer than 2 vertices, k > [`MAX_K`], or a
//! non-finite entry take [`project_psd_with`] (so a non-finite block is left unchanged and
//! reported unchanged, as there). Everything is per block on stack arrays: deterministic and
//! allocation-free.

use super::lane_batch::{project_at, Prepared, Reduction, project_many};
use super::psd_test::{PSD_TOL_FACTOR, psd_check};
use super::sym_eigen::{PsdWork, project_psd_with};
use super::tridiag_ql::{eigen_rows, scaled_symmetric, tridiag_ql, unit_scale};

/// The largest block size the reduced path handles (larger blocks take the full path).
pub const MAX_K: usize = 16;

/// From this block size on, the full PSD test runs before the reduction (measured in
/// `docs/benchmarks.md`: the test on a k×k block that passes costs less than forming the
/// reduced matrix for k = 9, 12; for k = 6 the reduced test is cheaper).
pub const FULL_TEST_FIRST_K: usize = 9;

/// The tolerance on the entries of A·t_c for a k×k block whose largest |entry| is `amax`.
pub fn translation_tolerance(k: usize, amax: f64) -> f64 {
    PSD_TOL_FACTOR * k as f64 * f64::EPSILON * amax
}

/// Whether the symmetric part of the k×k block (vertex-major over `nverts` vertices of
/// k / nverts components) annihilates the translations within [`translation_tolerance`].
/// False for non-finite blocks and when `nverts` does not divide k (or is 0).
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn is_translation_invariant(block: &[f64], k: usize, nverts: usize) -> bool {
    assert_eq!(block.len(), k * k, "is_translation_invariant: matrix size");
    if nverts == 0 || !k.is_multiple_of(nverts) {
        return false;
    }
    match max_abs(block) {
        Some(amax) => invariant(block, k, nverts, translation_tolerance(k, amax)),
        None => false,
    }
}

/// The PSD projection (clamp at `eps`) of a symmetric k×k row-major block whose local dofs
/// are one field of d = k / `nverts` components at each of `nverts` vertices, vertex-major
/// (index v·d + c): by the reduced matrix of the translation complement when the block is
/// translation-invariant and eps = 0 (module docs), by [`project_psd_with`] otherwise. Returns
/// whether the block was changed; a block that needs no projection is left bit for bit.
///
/// One block at a time, the reduced matrix is decomposed by tridiagonal QL; the batched
/// [`project_psd_translation_many`] decomposes it by Jacobi in SIMD lanes, so the two agree
/// to rounding (both are the exact clamp up to a few ulps of the block's scale), not bit
/// for bit.
///
/// # Panics
/// If `block.len() != k*k` (a programming error).
pub fn project_psd_translation(
    block: &mut [f64],
    k: usize,
    nverts: usize,
    eps: f64,
    work: &mut PsdWork,
) -> bool {
    assert_eq!(block.len(), k * k, "project_psd_translation: matrix size");
    if eps != 0.0 || nverts < 2 || !k.is_multiple_of(nverts) || k > MAX_K {
        return project_psd_with(block, k, eps, work);
    }
    // Constant sizes for the common stencils, so that the loops and the stack arrays below
    // specialize.
    let r = match (k, nverts) {
        (6, 2) => reduced::<6>(block, 6, 2),
        (6, 3) => reduced::<6>(block, 6, 3),
        (9, 3) => reduced::<9>(block, 9, 3),
        (12, 4) => reduced::<12>(block, 12, 4),
        (12, 3) => reduced::<12>(block, 12, 3),
        (8, 4) => reduced::<8>(block, 8, 4),
        _ => reduced::<MAX_K>(block, k, nverts),
    };
    match r {
        Some(changed) => changed,
        None => project_psd_with(block, k, eps, work),
    }
}

/// [`project_psd_translation`] on every k×k block of `blocks` (consecutive, row-major);
/// returns how many were changed. For reduced sizes up to 6 (springs, 2-D and 3-D faces,
/// 2-D diamonds) the reduced matrices of the blocks that need a decomposition are
/// decomposed [`LANES`](super::jacobi_lanes::LANES) at a time by [`jacobi_lanes`](super::jacobi_lanes::jacobi_lanes), 2–3× faster per block than one QL
/// after another (`docs/benchmarks.md`); larger ones take [`project_psd_translation`] block
/// by block (Jacobi's O(M³) sweeps lose to QL there). 6×6 blocks without the translation null
/// space (terms in per-vertex frames) are batched as whole blocks (`full_lanes`),
/// and so are 3×3 and 6×6 blocks over one vertex (`nverts` < 2). The lanes do not influence each
/// other, so a block's result does not depend on its neighbours in the slice or on how the
/// blocks are split into calls.
///
/// # Panics
/// If `blocks.len()` is not a multiple of `k*k` (a programming error).
pub fn project_psd_translation_many(
    blocks: &mut [f64],
    k: usize,
    nverts: usize,
    eps: f64,
    work: &mut PsdWork,
) -> usize {
    assert!(
        k > 0 && blocks.len().is_multiple_of(k * k),
        "project_psd_translation_many: matrix size"
    );
    // Blocks of one vertex (no translation null space) of the sizes the lanes take well:
    // whole blocks in lanes.
    if eps == 0.0 && nverts < 2 {
        match k {
            3 => return super::full_lanes::project_whole_many::<3>(blocks, work),
            6 => return super::full_lanes::project_whole_many::<6>(blocks, work),
            _ => {}
        }
    }
    if eps != 0.0 || nverts < 2 || !k.is_multiple_of(nverts) || k > MAX_K {
        return blocks
            .chunks_exact_mut(k * k)
            .map(|b| usize::from(project_psd_with(b, k, eps, work)))
            .sum();
    }
    // Constant sizes for the common stencils, so that the loops and the stack arrays below
    // specialize: K the block size, M = K − d the reduced size.
    match (k, nverts) {
        (6, 2) => many::<6, 3, 2>(blocks, work),
        (6, 3) => many::<6, 4, 3>(blocks, work),
        (9, 3) => many::<9, 6, 3>(blocks, work),
        (8, 4) => many::<8, 6, 4>(blocks, work),
        _ => blocks
            .chunks_exact_mut(k * k)
            .map(|b| usize::from(project_psd_translation(b, k, nverts, 0.0, work)))
            .sum(),
    }
}

/// The translation-complement reduction of K×K blocks over N vertices, M = K − K/N (all
/// constants, so that every loop below has fixed bounds).
struct Complement<const K: usize, const N: usize>;

/// What finishing a decomposed block needs: the block's symmetric part and R's scale.
struct Pending<const K: usize> {
    s: [[f64; K]; K],
    sc: f64,
}

impl<const K: usize, const M: usize, const N: usize> Reduction<M> for Complement<K, N> {
    type Pending = Pending<K>;

    #[inline(always)]
    fn prepare(&self, block: &[f64]) -> Prepared<Pending<K>, M> {
        match prepare::<K>(block, K, N) {
            Prep::Done(ch) => Prepared::Done(ch),
            Prep::Full => Prepared::Fallback,
            Prep::Decompose { s, r, sc } => {
                let mut rm = [[0.0f64; M]; M];
                for (row, src) in rm.iter_mut().zip(&r) {
                    row.copy_from_slice(&src[..M]);
                }
                Prepared::Decompose { pending: Pending { s, sc }, r: rm }
            }
        }
    }

    #[inline(always)]
    fn finish(&self, block: &mut [f64], p: &Pending<K>, ev: &[f64; M], w: &[[f64; M]; M]) -> Option<bool> {
        let mut evk = [0.0f64; K];
        let mut wk = [[0.0f64; K]; K];
        evk[..M].copy_from_slice(ev);
        for (row, src) in wk.iter_mut().zip(w) {
            row[..M].copy_from_slice(src);
        }
        finish::<K>(block, K, N, &p.s, p.sc, &evk, &wk)
    }

    fn fallback(&self, block: &mut [f64], work: &mut PsdWork) -> bool {
        project_psd_with(block, K, 0.0, work)
    }
}

/// The batched projection for a K×K block over N vertices with reduced size M = K − K/N.
/// For K = 6, the blocks without the translation null space are batched too, as whole
/// blocks ([`super::full_lanes`]); larger ones take [`project_psd_with`] one by one.
fn many<const K: usize, const M: usize, const N: usize>(blocks: &mut [f64], work: &mut PsdWork) -> usize {
    debug_assert_eq!(M, K - K / N);
    if K != 6 {
        return project_many::<M, _>(&Complement::<K, N>, blocks, K * K, work);
    }
    let mut whole = Vec::new();
    let len = blocks.len();
    let reduced = project_at::<M, _>(&Complement::<K, N>, blocks, K * K, (0..len).step_by(K * K), work, Some(&mut whole));
    reduced + super::full_lanes::project_whole_at::<6>(blocks, &whole, work)
}

/// The reduced projection one block at a time: [`prepare`], tridiagonal QL of the reduced
/// matrix, [`finish`]. `Some(changed)`, or `None` when the block must take the full path
/// (not invariant, not finite, QL did not converge); the block is untouched then. Stack
/// arrays are K×K (K ≥ k).
#[inline(always)]
fn reduced<const K: usize>(block: &mut [f64], k: usize, n: usize) -> Option<bool> {
    let (s, r, sc) = match prepare::<K>(block, k, n) {
        Prep::Done(changed) => return Some(changed),
        Prep::Full => return None,
        Prep::Decompose { s, r, sc } => (s, r, sc),
    };
    let (ev, w) = eigen_rows::<K>(&r, k - k / n)?;
    finish::<K>(block, k, n, &s, sc, &ev, &w)
}

/// What [`prepare`] found for a block.
enum Prep<const K: usize> {
    /// Nothing left to do: whether the block was changed.
    Done(bool),
    /// The block must take the full path (not invariant, not finite); it is untouched.
    Full,
    /// `r`: the reduced matrix (m×m, symmetric, both triangles) scaled by the power of two
    /// `sc`; `s`: the block's symmetric part.
    Decompose { s: [[f64; K]; K], r: [[f64; K]; K], sc: f64 },
}

/// The reduced path up to the decomposition: the tests, the symmetric part S and the reduced
/// matrix R = QᵀSQ, scaled by a power of two, when R is not PSD. Stack arrays are K×K (K ≥ k).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn prepare<const K: usize>(block: &[f64], k: usize, n: usize) -> Prep<K> {
    // For k ≥ 9 the full PSD test is cheaper than the reduction on blocks that pass it (the
    // usual case): it runs first, and only blocks that fail it are reduced.
    if k >= FULL_TEST_FIRST_K {
        let mut m = [[0.0f64; K]; K];
        if psd_check(block, k, 0.0, m.as_flattened_mut()) {
            return Prep::Done(false);
        }
    }
    let Some(amax) = max_abs(&block[..k * k]) else {
        return Prep::Full;
    };
    if amax == 0.0 {
        return Prep::Done(false);
    }
    if !invariant(block, k, n, translation_tolerance(k, amax)) {
        return Prep::Full;
    }
    let d = k / n;
    let m = k - d;
    let mut s = [[0.0f64; K]; K];
    for i in 0..k {
        for j in 0..k {
            s[i][j] = 0.5 * (block[i * k + j] + block[j * k + i]);
        }
    }
    let r = reduce::<K>(&s, k, n);
    let mut flat = [[0.0f64; K]; K];
    let rf = flat.as_flattened_mut();
    for i in 0..m {
        rf[i * m..i * m + m].copy_from_slice(&r[i][..m]);
    }
    let mut scratch = [[0.0f64; K]; K];
    if psd_check(&rf[..m * m], m, 0.0, scratch.as_flattened_mut()) {
        return Prep::Done(false);
    }
    let Some((rs, sc)) = scaled_symmetric::<K>(&r, m) else {
        return Prep::Full;
    };
    Prep::Decompose { s, r: rs, sc }
}

/// R = QᵀSQ ((k − d)×(k − d) in the K×K array) by prefix sums: first C = QᵀS over the rows
/// of each component, then the same contrasts along each row of C.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn reduce<const K: usize>(s: &[[f64; K]; K], k: usize, n: usize) -> [[f64; K]; K] {
    let d = k / n;
    let m = k - d;
    let a = helmert(n);
    let mut c = [[0.0f64; K]; K];
    for comp in 0..d {
        let mut pre = [0.0f64; K];
        for j in 0..n - 1 {
            let (r0, r1) = (j * d + comp, (j + 1) * d + comp);
            let w = (j + 1) as f64;
            for col in 0..k {
                pre[col] += s[r0][col];
                c[j * d + comp][col] = a[j] * (pre[col] - w * s[r1][col]);
            }
        }
    }
    let mut r = [[0.0f64; K]; K];
    for i in 0..m {
        let crow = &c[i];
        for comp in 0..d {
            let mut pre = 0.0;
            for j in 0..n - 1 {
                pre += crow[j * d + comp];
                r[i][j * d + comp] = a[j] * (pre - (j + 1) as f64 * crow[(j + 1) * d + comp]);
            }
        }
    }
    r
}

/// The reduced path after the decomposition of R (eigenvalues `ev[..m]`, scaled by `sc`;
/// `w[j][..m]` the eigenvector of `ev[j]`): the block becomes S − Σ_{λ<0} λ·(Q w)(Q w)ᵀ with
/// the translation part's negative eigenvalues clamped too (module docs). `None` when that
/// last decomposition failed (the block is untouched then).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn finish<const K: usize>(
    block: &mut [f64],
    k: usize,
    n: usize,
    s: &[[f64; K]; K],
    sc: f64,
    ev: &[f64; K],
    w: &[[f64; K]; K],
) -> Option<bool> {
    let d = k / n;
    let m = k - d;
    let a = helmert(n);
    // The negative eigenvalues (unscaled: sc is a power of two) and their vectors Q·w.
    let mut lam = [0.0f64; K];
    let mut u = [[0.0f64; K]; K];
    let mut neg = 0;
    for col in 0..m {
        let l = ev[col] / sc;
        if l.is_nan() || l >= 0.0 {
            continue;
        }
        lam[neg] = l;
        let w = &w[col];
        let uo = &mut u[neg];
        for comp in 0..d {
            // u_v = Σ_{j ≥ v} a_j w_j − v·a_{v−1}·w_{v−1}, by a suffix sum.
            let mut suf = 0.0;
            for vert in (0..n).rev() {
                let own = if vert > 0 {
                    vert as f64 * a[vert - 1] * w[(vert - 1) * d + comp]
                } else {
                    0.0
                };
                uo[vert * d + comp] = suf - own;
                if vert > 0 {
                    suf += a[vert - 1] * w[(vert - 1) * d + comp];
                }
            }
        }
        neg += 1;
    }
    if neg == 0 {
        return Some(false);
    }
    // The translation part N = T̂ᵀ A T̂ (T̂ the normalized t_c) is rounding noise of either
    // sign; its negative eigenvalues are clamped as the full decomposition would clamp them.
    neg = translation_negatives::<K>(|i, j| s[i][j], k, n, &mut lam, &mut u, neg)?;
    for i in 0..k {
        for j in i..k {
            let mut acc = s[i][j];
            for q in 0..neg {
                acc -= lam[q] * u[q][i] * u[q][j];
            }
            block[i * k + j] = acc;
            block[j * k + i] = acc;
        }
    }
    Some(true)
}

/// The negative eigenpairs of the translation part N = T̂ᵀ A T̂ of the symmetric k×k block
/// A (`at(i, j)`, vertex-major over `n` vertices; T̂ the normalized translations), appended to
/// `lam`/`u` from index `neg` as (λ, T̂z) with z the eigenvector of N: A − Σ λ·u uᵀ over them
/// has a PSD translation part. Returns the new count, or `None` if the d×d decomposition
/// failed.
#[inline(always)]
pub(crate) fn translation_negatives<const K: usize>(
    at: impl Fn(usize, usize) -> f64,
    k: usize,
    n: usize,
    lam: &mut [f64; K],
    u: &mut [[f64; K]; K],
    mut neg: usize,
) -> Option<usize> {
    let d = k / n;
    let inv_n = 1.0 / n as f64;
    let mut nn_ = [[0.0f64; K]; K];
    let nn = nn_.as_flattened_mut();
    for i in 0..k {
        for j in 0..k {
            nn[(i % d) * d + j % d] += at(i, j) * inv_n;
        }
    }
    let nmax = nn[..d * d].iter().fold(0.0f64, |x, y| x.max(y.abs()));
    if nmax > 0.0 {
        let sn = unit_scale(nmax);
        let mut vn_ = [[0.0f64; K]; K];
        let vn = vn_.as_flattened_mut();
        for i in 0..d * d {
            vn[i] = nn[i] * sn;
        }
        let (mut dn, mut en) = ([0.0f64; K], [0.0f64; K]);
        if !tridiag_ql(&mut vn[..d * d], &mut dn[..d], &mut en[..d], d) {
            return None;
        }
        let scale = inv_n.sqrt();
        for col in 0..d {
            let l = dn[col] / sn;
            if l < 0.0 && neg < K {
                lam[neg] = l;
                let z = &vn[col * d..col * d + d];
                for (i, x) in u[neg][..k].iter_mut().enumerate() {
                    *x = z[i % d] * scale;
                }
                neg += 1;
            }
        }
    }
    Some(neg)
}

/// The largest |entry|, or `None` if some entry is not finite (one branch-free pass).
#[inline(always)]
/// The largest |entry| of `block`; `None` when an entry is not finite.
pub(crate) fn max_abs(block: &[f64]) -> Option<f64> {
    let mut amax = 0.0f64;
    let mut finite = true;
    for &x in block {
        let a = x.abs();
        finite &= a <= f64::MAX;
        amax = if a > amax { a } else { amax };
    }
    finite.then_some(amax)
}

/// Whether every entry of sym(A)·t_c is within `tol`.
#[inline(always)]
fn invariant(a: &[f64], k: usize, n: usize, tol: f64) -> bool {
    let d = k / n;
    for i in 0..k {
        for c in 0..d {
            let mut s = 0.0;
            for v in 0..n {
                let j = v * d + c;
                s += a[i * k + j] + a[j * k + i];
            }
            if s.is_nan() || 0.5 * s.abs() > tol {
                return false;
            }
        }
    }
    true
}

/// The Helmert coefficients 1/√((j+1)(j+2)), j = 0..n−1.
#[inline(always)]
pub(crate) fn helmert(n: usize) -> [f64; MAX_K] {
    let mut a = [0.0; MAX_K];
    for (j, x) in a.iter_mut().enumerate().take(n.saturating_sub(1)) {
        *x = 1.0 / (((j + 1) * (j + 2)) as f64).sqrt();
    }
    a
}
